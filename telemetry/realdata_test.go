package telemetry_test

import (
	"cardhour/telemetry/telemetrytest"
	"strings"
	"testing"
)

// Recordings of real tools, kept with their sources in testdata/real/SOURCES.md.
const (
	h200LoadGPU    = "nvidia-smi_h200-mig_590.48.01_load_query-gpu.csv"
	h200IdleGPU    = "nvidia-smi_h200-mig_590.48.01_idle_query-gpu.csv"
	h200LoadApps   = "nvidia-smi_h200-mig_590.48.01_load_query-compute-apps.csv"
	h200IdleApps   = "nvidia-smi_h200-mig_590.48.01_idle_query-compute-apps.csv"
	h200List       = "nvidia-smi_h200-mig_590.48.01_list-gpus.txt"
	h200Query      = "nvidia-smi_h200-mig_590.48.01_load_query.txt"
	h100LoadGPU    = "nvidia-smi_h100-80gb-hbm3_590.48.01_load_query-gpu.csv"
	h100IdleGPU    = "nvidia-smi_h100-80gb-hbm3_590.48.01_idle_query-gpu.csv"
	h100LoadApps   = "nvidia-smi_h100-80gb-hbm3_590.48.01_load_query-compute-apps.csv"
	l40sIdleGPU    = "nvidia-smi_l40s_595.80_idle_query-gpu.csv"
	h100MIGMode    = "nvidia-smi_h100_mig-mode-current_scaleway-docs-2077.csv"
	a100OldList    = "nvidia-smi_a100-sxm4-40gb_mig_list-gpus_old-format_dcgm-exporter-105.txt"
	a100SevenList  = "nvidia-smi_a100-sxm4-80gb_mig-7x1g.10gb_list-gpus_datadog-agent-33120.txt"
	errGPUIsLost   = "nvidia-smi_error_gpu-is-lost_windows_darknet-86.txt"
	errUnknown     = "nvidia-smi_error_unknown-error_nvidia-docker-1553.txt"
	errUnknownNoSp = "nvidia-smi_error_unknown-error_no-space_syno-nvidia-gpu-driver-22.txt"
	gtx770Other    = "nvidia-smi_not-supported_gtx770_noheader_megaminer-235.csv"
	i3Other        = "nvidia-smi_na-fan_noheader-nounits_i3pystatus-776.csv"
	rtx3080Other   = "nvidia-smi_rtx3080_na-values_noheader_zabbix-nvidia-smi-multi-gpu-17.csv"

	dcgmA800MIG   = "dcgm-exporter_a800x8_mig-2g.20gb_vgpu-convert-error.prom"
	dcgmL4        = "dcgm-exporter_l4_single-gpu.prom"
	dcgmRTX4000   = "dcgm-exporter_rtx4000-ada_k8s-pod-labels.prom"
	dcgmA30MIG    = "dcgm-exporter_a30_mig-1g.6gb_fb-free_excerpt_dcgm-exporter-317.prom"
	dcgmH100MIG   = "dcgm-exporter_h100_mig-1g.10gb_gr-engine-active_excerpt_dcgm-exporter-512.prom"
	dcgmBroken122 = "dcgm-exporter_failed-to-convert_gpu-monitoring-tools-122.prom"
	dcgmBroken394 = "dcgm-exporter_failed-to-convert_vgpu-instance-ids_dcgm-exporter-394.prom"
	promH20Error  = "prometheus-scrape-error_h20-mig_failed-to-convert-label_dcgm-exporter-488.txt"
	dmesgXid79    = "dmesg_xid79_fallen-off-bus_machine-shop-maintenance-80.txt"

	maskedUUID = "GPU-00000000-0000-0000-0000-000000000000" // the captures' collector masked the UUIDs
)

func recording(t testing.TB, name string) []byte { return telemetrytest.Recording(t, name) }

// table is a recorded --query-gpu CSV (one header line, one row each GPU)
// cut into its fields exactly as recorded, spaces included, so a test can
// derive a variant — columns reordered, dropped, a value replaced — from
// the recording instead of writing one by hand.
type table struct {
	header []string
	rows   [][]string
}

func csvTable(t testing.TB, b []byte) table {
	t.Helper()
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	tb := table{header: strings.Split(lines[0], ",")}
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		if len(f) != len(tb.header) {
			t.Fatalf("recorded row has %d fields, header %d: the recording holds commas in values", len(f), len(tb.header))
		}
		tb.rows = append(tb.rows, f)
	}
	return tb
}

// col is the index of the column named name (without its unit).
func (tb table) col(t testing.TB, name string) int {
	t.Helper()
	for i, h := range tb.header {
		h = strings.TrimSpace(h)
		if h == name || strings.HasPrefix(h, name+" [") {
			return i
		}
	}
	t.Fatalf("no column %q in the recording", name)
	return -1
}

// pick returns a table of the given columns, in the given order.
func (tb table) pick(cols []int) table {
	out := table{header: make([]string, len(cols))}
	for i, c := range cols {
		out.header[i] = tb.header[c]
	}
	for _, r := range tb.rows {
		nr := make([]string, len(cols))
		for i, c := range cols {
			nr[i] = r[c]
		}
		out.rows = append(out.rows, nr)
	}
	return out
}

// reversed is the table with its columns in the opposite order.
func (tb table) reversed() table {
	cols := make([]int, len(tb.header))
	for i := range cols {
		cols[i] = len(cols) - 1 - i
	}
	return tb.pick(cols)
}

// without drops the named columns.
func (tb table) without(t testing.TB, names ...string) table {
	drop := map[int]bool{}
	for _, n := range names {
		drop[tb.col(t, n)] = true
	}
	var cols []int
	for i := range tb.header {
		if !drop[i] {
			cols = append(cols, i)
		}
	}
	return tb.pick(cols)
}

// with returns the table with the value of column name in every row replaced.
func (tb table) with(t testing.TB, name, value string) table {
	c := tb.col(t, name)
	out := tb.pick(tb.allCols())
	for _, r := range out.rows {
		r[c] = " " + value
	}
	return out
}

func (tb table) allCols() []int {
	cols := make([]int, len(tb.header))
	for i := range cols {
		cols[i] = i
	}
	return cols
}

func (tb table) bytes(header bool) []byte {
	var b strings.Builder
	if header {
		b.WriteString(strings.Join(tb.header, ","))
		b.WriteByte('\n')
	}
	for _, r := range tb.rows {
		b.WriteString(strings.Join(r, ","))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}
