package telemetry_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"cardhour/telemetry"
)

// gpuWant is a sample as the assertions spell it.
type gpuWant struct {
	uuid, name, bus                string
	index                          int
	util, used, total, temp, power string
	mig                            bool
	fault                          string
}

func gpuGot(s telemetry.Sample) gpuWant {
	return gpuWant{s.UUID, s.Name, s.BusID, s.Index, show(s.UtilPct), show(s.MemUsedMiB), show(s.MemTotalMiB),
		show(s.TempC), show(s.PowerW), s.MIG, s.Fault}
}

var recordedGPUs = []struct {
	file string
	want gpuWant
}{
	{h100LoadGPU, gpuWant{maskedUUID, "NVIDIA H100 80GB HBM3", "0000:00:09.0", 0, "100", "19818", "81559", "59", "631.95", false, ""}},
	{h100IdleGPU, gpuWant{maskedUUID, "NVIDIA H100 80GB HBM3", "0000:00:09.0", 0, "0", "0", "81559", "41", "69.85", false, ""}},
	// MIG: utilization.gpu is [N/A]: missing, never 0.
	{h200LoadGPU, gpuWant{maskedUUID, "NVIDIA H200", "0000:83:00.0", 0, "missing", "16959", "143771", "36", "295.01", true, ""}},
	{h200IdleGPU, gpuWant{maskedUUID, "NVIDIA H200", "0000:83:00.0", 0, "missing", "55", "143771", "28", "78.28", true, ""}},
	// Driver 595.80 orders its 202 columns differently; mig.mode.current is [N/A].
	{l40sIdleGPU, gpuWant{maskedUUID, "NVIDIA L40S", "0000:01:00.0", 0, "100", "0", "46068", "63", "144.97", false, ""}},
}

func parseGPUs(t *testing.T, in []byte) telemetry.GPUParse {
	t.Helper()
	return telemetry.ParseGPUCSV(bytes.NewReader(in), "h", at)
}

func TestParseGPUCSVReadsRecordedHeadersByName(t *testing.T) {
	for _, c := range recordedGPUs {
		t.Run(c.file, func(t *testing.T) {
			res := parseGPUs(t, recording(t, c.file))
			if len(res.Skipped) != 0 || len(res.GPUErrors) != 0 || len(res.Samples) != 1 {
				t.Fatalf("samples %d, skipped %v, errors %v", len(res.Samples), res.Skipped, res.GPUErrors)
			}
			if got := gpuGot(res.Samples[0]); got != c.want {
				t.Errorf("\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

// The recordings come in one column order each; other orders, and headers
// without units, are derived from them here, column by column.
func TestParseGPUCSVMapsColumnsInAnyOrder(t *testing.T) {
	for _, c := range recordedGPUs {
		tb := csvTable(t, recording(t, c.file))
		// GPUQuery's own columns, last first: temperature where utilisation
		// would be in the fixed order.
		var cols []int
		for _, name := range strings.Split(telemetry.GPUQuery, ",") {
			cols = append([]int{tb.col(t, name)}, cols...)
		}
		stripped := tb.pick(cols)
		for i, h := range stripped.header {
			stripped.header[i], _, _ = strings.Cut(h, " [")
		}
		variants := map[string]table{
			"reversed":                 tb.reversed(),
			"GPUQuery reversed":        tb.pick(cols),
			"GPUQuery reversed, units": stripped,
		}
		for name, v := range variants {
			res := parseGPUs(t, v.bytes(true))
			if len(res.Samples) != 1 || len(res.Skipped) != 0 {
				t.Errorf("%s %s: %d samples, skipped %v", c.file, name, len(res.Samples), res.Skipped)
				continue
			}
			want := c.want
			if name != "reversed" {
				want.bus, want.mig = "", false // columns not picked
			}
			if got := gpuGot(res.Samples[0]); got != want {
				t.Errorf("%s %s:\n got %+v\nwant %+v", c.file, name, got, want)
			}
		}
	}
	// The older hand fixture, its header reordered the same way.
	tb := csvTable(t, fixture(t, "nvidia-smi-units.csv")).reversed()
	res := telemetry.ParseGPUCSV(bytes.NewReader(tb.bytes(true)), "h", at)
	if len(res.Skipped) != 0 || len(res.GPUErrors) != 0 {
		t.Fatalf("skipped %v %v", res.Skipped, res.GPUErrors)
	}
	check(t, res.Samples, []want{
		{"GPU-4c8b2656-65c5-07d7-9a96-9dc10e6cad4a", 0, "100", "19818", "81559", "59", "631.95"},
		{"GPU-896386b1-a55f-a29a-fa34-53ff0052044a", 1, "0", "4", "81559", "31", "71.42"},
		{"GPU-aa12f3d5-b3dc-d3e4-47d2-a5ea475b4b2f", 2, "35", "12021", "24564", "52", "missing"},
	})
}

func TestParseGPUCSVRefusesAHeaderWithoutUUIDByName(t *testing.T) {
	// Recorded: --query-gpu=pci.bus_id,mig.mode.current --format=csv.
	res := parseGPUs(t, recording(t, h100MIGMode))
	if len(res.Samples) != 0 || len(res.Skipped) != 2 || res.Skipped[0].Line != 1 || !strings.Contains(res.Skipped[0].Reason, `"uuid"`) ||
		res.Skipped[1].Line != 2 {
		t.Errorf("samples %v skipped %v: want the header refused naming uuid, and its row skipped", res.Samples, res.Skipped)
	}
	// The H100 recording without its uuid column.
	tb := csvTable(t, recording(t, h100LoadGPU)).without(t, "uuid")
	res = parseGPUs(t, tb.bytes(true))
	if len(res.Samples) != 0 || len(res.Skipped) != 2 || !strings.Contains(res.Skipped[0].Reason, `no "uuid" column`) {
		t.Errorf("samples %v skipped %v", res.Samples, res.Skipped)
	}
	// Without the optional columns a sample is still read.
	tb = csvTable(t, recording(t, h100LoadGPU)).without(t, "index", "name", "utilization.gpu", "memory.used", "memory.total")
	res = parseGPUs(t, tb.bytes(true))
	if len(res.Samples) != 1 || res.Samples[0].Index != -1 || res.Samples[0].UtilPct != nil || show(res.Samples[0].PowerW) != "631.95" {
		t.Errorf("samples %+v skipped %v", res.Samples, res.Skipped)
	}
}

// ParseGPUCSV given a compute-apps part first reads the GPU header after it
// and the GPU rows under it, as a push body would; only ParseComputeApps
// refuses a header without pid.
func TestParseGPUCSVReadsAGPUHeaderAfterAComputeAppsHeader(t *testing.T) {
	in := "gpu_uuid, pid, process_name, used_gpu_memory [MiB]\n" + string(fixture(t, "nvidia-smi-apps.csv")) +
		string(fixture(t, "nvidia-smi-units.csv"))
	res := parseGPUs(t, []byte(in))
	if len(res.Skipped) != 0 {
		t.Fatalf("skipped %v", res.Skipped)
	}
	check(t, res.Samples, []want{
		{"GPU-4c8b2656-65c5-07d7-9a96-9dc10e6cad4a", 0, "100", "19818", "81559", "59", "631.95"},
		{"GPU-896386b1-a55f-a29a-fa34-53ff0052044a", 1, "0", "4", "81559", "31", "71.42"},
		{"GPU-aa12f3d5-b3dc-d3e4-47d2-a5ea475b4b2f", 2, "35", "12021", "24564", "52", "missing"},
	})
}

// Drivers since 530 print power.draw.instant and power.draw.average beside
// power.draw; without power.draw the instant reading is taken, then the average.
func TestParseGPUCSVPowerVariants(t *testing.T) {
	tb := csvTable(t, recording(t, h200LoadGPU))
	for _, c := range []struct {
		drop []string
		want string
	}{
		{nil, "295.01"},
		{[]string{"power.draw"}, "294.14"},
		{[]string{"power.draw", "power.draw.instant"}, "295.01"},
		{[]string{"power.draw", "power.draw.instant", "power.draw.average"}, "missing"},
	} {
		res := parseGPUs(t, tb.without(t, c.drop...).bytes(true))
		if len(res.Samples) != 1 || show(res.Samples[0].PowerW) != c.want {
			t.Errorf("without %v: power %v, want %s", c.drop, res.Samples, c.want)
		}
	}
	// An [N/A] power.draw falls back the same way.
	res := parseGPUs(t, tb.with(t, "power.draw", "[N/A]").bytes(true))
	if len(res.Samples) != 1 || show(res.Samples[0].PowerW) != "294.14" {
		t.Errorf("power.draw [N/A]: %v", res.Samples)
	}
}

// nvidia-smi prints these in place of readings on a broken GPU. No
// recording of ours has one in a CSV row, so each is put in a recorded row
// here, once in a column cardhour reads and once in one it does not.
func TestParseGPUCSVMarksFaultReadings(t *testing.T) {
	tb := csvTable(t, recording(t, h100LoadGPU))
	for _, marker := range []string{"[GPU requires reset]", "[Unknown Error]", "[GPU is lost]", "ERR!"} {
		for _, col := range []string{"utilization.gpu", "fan.speed"} {
			res := parseGPUs(t, tb.with(t, col, marker).bytes(true))
			if len(res.Samples) != 1 {
				t.Fatalf("%s in %s: %v %v", marker, col, res.Samples, res.Skipped)
			}
			s := res.Samples[0]
			if s.Fault != strings.Trim(marker, "[]") {
				t.Errorf("%s in %s: fault %q", marker, col, s.Fault)
			}
			if col == "utilization.gpu" && s.UtilPct != nil {
				t.Errorf("%s read as utilisation %v", marker, *s.UtilPct)
			}
		}
	}
	// [N/A], [Not Supported] and N/A are missing, not faults.
	for _, marker := range []string{"[N/A]", "[Not Supported]", "N/A"} {
		res := parseGPUs(t, tb.with(t, "utilization.gpu", marker).bytes(true))
		if len(res.Samples) != 1 || res.Samples[0].Fault != "" || res.Samples[0].UtilPct != nil {
			t.Errorf("%s: %+v", marker, res.Samples)
		}
	}
}

func TestParseGPUCSVReadsRecordedGPUErrorLines(t *testing.T) {
	for _, c := range []struct{ file, bus, reason string }{
		{errUnknown, "0000:09:00.0", "Unknown Error"},
		{errUnknownNoSp, "0000:07:00.0", "Unknown Error"},
		// The console wrapped the line; the rest is read back onto it.
		{errGPUIsLost, "0000:03:00.0", "GPU is lost.  Reboot the system to recover this GPU"},
	} {
		res := parseGPUs(t, recording(t, c.file))
		if len(res.GPUErrors) != 1 || len(res.Samples) != 0 || len(res.Skipped) != 0 {
			t.Errorf("%s: errors %v samples %v skipped %v", c.file, res.GPUErrors, res.Samples, res.Skipped)
			continue
		}
		if e := res.GPUErrors[0]; e.Line != 1 || e.BusID != c.bus || e.Reason != c.reason {
			t.Errorf("%s: %+v", c.file, e)
		}
	}
	// Rows of the GPUs it can reach, then the line for the one it cannot.
	in := append(recording(t, h100LoadGPU), recording(t, errUnknown)...)
	res := parseGPUs(t, in)
	if len(res.Samples) != 1 || len(res.GPUErrors) != 1 || res.GPUErrors[0].Line != 3 {
		t.Errorf("samples %d errors %v skipped %v", len(res.Samples), res.GPUErrors, res.Skipped)
	}
	// The error line is the only line not read as a row, and as an error
	// it names its bus and reason.
	if len(res.Skipped) != 0 || len(res.GPUErrors) != 1 || res.GPUErrors[0].Line != 3 ||
		!strings.Contains(res.GPUErrors[0].Error(), "0000:09:00.0: Unknown Error") {
		t.Errorf("skipped %v errors %v", res.Skipped, res.GPUErrors)
	}
}

// Headerless rows of other field lists are refused with a reason, never
// read in GPUQuery's order.
func TestParseGPUCSVRefusesHeaderlessRowsOfOtherQueries(t *testing.T) {
	for _, file := range []string{gtx770Other, i3Other, rtx3080Other} {
		res := parseGPUs(t, recording(t, file))
		if len(res.Samples) != 0 || len(res.Skipped) != 1 || res.Skipped[0].Line != 1 || res.Skipped[0].Reason == "" {
			t.Errorf("%s: samples %v skipped %v", file, res.Samples, res.Skipped)
		}
	}
}

func TestNormalizeBusID(t *testing.T) {
	for in, want := range map[string]string{
		"00000000:83:00.0": "0000:83:00.0", // --query-gpu pci.bus_id
		"0000:09:00.0":     "0000:09:00.0", // error lines
		"00000000:1A:00.0": "0000:1a:00.0", // DCGM pci_bus_id
		" 0001:02:00.0 ":   "0001:02:00.0",
	} {
		if got := telemetry.NormalizeBusID(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestParseComputeAppsReadsRecordedHeaders(t *testing.T) {
	rows, bad := telemetry.ParseComputeApps(bytes.NewReader(recording(t, h200LoadApps)))
	if len(bad) != 0 || len(rows) != 3 {
		t.Fatalf("rows %v bad %v", rows, bad)
	}
	want := maskedUUID + " 12249 /root/tools/memhog 2194\n" + maskedUUID + " 12250 /root/tools/memhog 1170\n" + maskedUUID + " 12267 ./gpu_burn 13526"
	if got := appsText(rows); got != want {
		t.Errorf("\n got %q\nwant %q", got, want)
	}
	// Columns in another order, derived from the recording.
	rev := csvTable(t, recording(t, h200LoadApps)).reversed()
	rows2, bad := telemetry.ParseComputeApps(bytes.NewReader(rev.bytes(true)))
	if len(bad) != 0 || appsText(rows2) != appsText(rows) {
		t.Errorf("reversed: %v %v", rows2, bad)
	}
	// A header without pid is refused by name.
	nopid := csvTable(t, recording(t, h200LoadApps)).without(t, "pid")
	rows3, bad := telemetry.ParseComputeApps(bytes.NewReader(nopid.bytes(true)))
	if len(rows3) != 0 || len(bad) != 4 || !strings.Contains(bad[0].Reason, `"pid"`) {
		t.Errorf("without pid: %v %v", rows3, bad)
	}
	// Idle: the header alone.
	if rows, bad := telemetry.ParseComputeApps(bytes.NewReader(recording(t, h200IdleApps))); len(rows) != 0 || len(bad) != 0 {
		t.Errorf("idle: %v %v", rows, bad)
	}
}

func appsText(rows []telemetry.AppsRow) string {
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s %d %s %s", r.UUID, r.PID, r.Name, show(r.MemMiB)))
	}
	return strings.Join(got, "\n")
}
