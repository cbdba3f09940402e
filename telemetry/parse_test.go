package telemetry_test

import (
	"bytes"
	"os"
	"strconv"
	"testing"
	"time"

	"cardhour/telemetry"
)

var at = time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)

func fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// show prints an optional value the way the assertions spell it.
func show(v *float64) string {
	if v == nil {
		return "missing"
	}
	return strconv.FormatFloat(*v, 'f', -1, 64)
}

type want struct {
	uuid                           string
	index                          int
	util, used, total, temp, power string
}

func check(t *testing.T, got []telemetry.Sample, wants []want) {
	t.Helper()
	if len(got) != len(wants) {
		t.Fatalf("got %d samples, want %d", len(got), len(wants))
	}
	for i, w := range wants {
		s := got[i]
		g := want{s.UUID, s.Index, show(s.UtilPct), show(s.MemUsedMiB), show(s.MemTotalMiB), show(s.TempC), show(s.PowerW)}
		if g != w {
			t.Errorf("sample %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func TestParseGPUQueryWithoutUnits(t *testing.T) {
	res := telemetry.ParseGPUCSV(bytes.NewReader(fixture(t, "nvidia-smi-nounits.csv")), "gpu-01", at)
	got := res.Samples
	if len(res.Skipped) != 0 || len(res.GPUErrors) != 0 {
		t.Fatalf("skipped lines: %v %v", res.Skipped, res.GPUErrors)
	}
	check(t, got, []want{
		{"GPU-4c8b2656-65c5-07d7-9a96-9dc10e6cad4a", 0, "100", "19818", "81559", "59", "631.95"},
		{"GPU-896386b1-a55f-a29a-fa34-53ff0052044a", 1, "0", "4", "81559", "31", "71.42"},
		{"GPU-e9ba2ba0-37e1-cb87-2355-a52c1d36619e", 2, "97", "78102", "81559", "66", "688.1"},
		// [N/A] is missing, never zero.
		{"GPU-bc3848c1-4669-fc5a-ccfe-e5c6227e72ca", 3, "missing", "missing", "81559", "missing", "missing"},
	})
	if got[0].Name != "NVIDIA H100 80GB HBM3" || got[0].Host != "gpu-01" || !got[0].At.Equal(at) {
		t.Errorf("name/host/time: %+v", got[0])
	}
}

func TestParseGPUQueryWithUnitsAndHeader(t *testing.T) {
	res := telemetry.ParseGPUCSV(bytes.NewReader(fixture(t, "nvidia-smi-units.csv")), "gpu-01", at)
	if len(res.Skipped) != 0 || len(res.GPUErrors) != 0 {
		t.Fatalf("skipped lines: %v %v", res.Skipped, res.GPUErrors)
	}
	check(t, res.Samples, []want{
		{"GPU-4c8b2656-65c5-07d7-9a96-9dc10e6cad4a", 0, "100", "19818", "81559", "59", "631.95"},
		{"GPU-896386b1-a55f-a29a-fa34-53ff0052044a", 1, "0", "4", "81559", "31", "71.42"},
		{"GPU-aa12f3d5-b3dc-d3e4-47d2-a5ea475b4b2f", 2, "35", "12021", "24564", "52", "missing"},
	})
}

func TestParseGPUQuerySkipsBadLinesWithReasons(t *testing.T) {
	in := "garbage\n0, not-a-uuid, X, 1, 2, 3, 4, 5\n1, GPU-896386b1-a55f-a29a-fa34-53ff0052044a, H100, 150 %, -5 MiB, 81559 MiB, 31, abc W\n"
	res := telemetry.ParseGPUCSV(bytes.NewBufferString(in), "h", at)
	if bad := res.Skipped; len(bad) != 2 || len(res.GPUErrors) != 0 || bad[0].Line != 1 || bad[1].Line != 2 {
		t.Errorf("bad lines %v %v, want lines 1 and 2", bad, res.GPUErrors)
	}
	// Out-of-range and unparsable values are missing.
	check(t, res.Samples, []want{{"GPU-896386b1-a55f-a29a-fa34-53ff0052044a", 1, "missing", "missing", "81559", "31", "missing"}})
}

func TestParseComputeAppsJoinsByUUID(t *testing.T) {
	apps, bad := telemetry.ParseComputeApps(bytes.NewReader(fixture(t, "nvidia-smi-apps.csv")))
	if len(bad) != 0 || len(apps) != 3 {
		t.Fatalf("apps %v bad %v", apps, bad)
	}
	if apps[1].Name != "python train.py --lr 1e-4, --bs 8" || show(apps[1].MemMiB) != "78000" || apps[2].MemMiB != nil {
		t.Errorf("rows: %+v", apps)
	}
	samples := telemetry.ParseGPUCSV(bytes.NewReader(fixture(t, "nvidia-smi-nounits.csv")), "h", at).Samples
	telemetry.AttachProcesses(samples, apps)
	if len(samples[0].Processes) != 1 || len(samples[2].Processes) != 2 || len(samples[1].Processes) != 0 {
		t.Errorf("processes per card: %d %d %d", len(samples[0].Processes), len(samples[1].Processes), len(samples[2].Processes))
	}
}

func TestParseDCGM(t *testing.T) {
	res, err := telemetry.ParseDCGMScrape(bytes.NewReader(fixture(t, "dcgm-exporter.txt")), "fallback", at)
	if err != nil {
		t.Fatal(err)
	}
	got := res.Samples
	// Utilisation is GPU_UTIL's (nvidia-smi's meaning); the profiling metric
	// (0.982) is SM activity beside it. Total = used + free (no reserved here).
	// Card 1: its profiling value is DCGM's blank marker: no SM activity.
	check(t, got, []want{
		{"GPU-4c8b2656-65c5-07d7-9a96-9dc10e6cad4a", 0, "100", "19818", "81559", "59", "631.95"},
		{"GPU-896386b1-a55f-a29a-fa34-53ff0052044a", 1, "0", "4", "81559", "31", "71.42"},
	})
	if show(got[0].SMActivePct) != "98.2131" || got[1].SMActivePct != nil {
		t.Errorf("SM activity %s, %s; want 98.2131 and missing", show(got[0].SMActivePct), show(got[1].SMActivePct))
	}
	if got[0].Host != "gpu-bj-h800-01" || got[0].Name != "NVIDIA H100 80GB HBM3" {
		t.Errorf("host %q name %q from the older Hostname label", got[0].Host, got[0].Name)
	}
}

func TestParseDCGMBlankMarkersAreMissing(t *testing.T) {
	for _, blank := range []string{"9223372036854775792", "9223372036854775793", "9223372036854775794", "9223372036854775795"} {
		in := `DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-4c8b2656-65c5-07d7-9a96-9dc10e6cad4a",hostname="h"} ` + blank + "\n" +
			`DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-4c8b2656-65c5-07d7-9a96-9dc10e6cad4a",hostname="h"} 10` + "\n"
		res, err := telemetry.ParseDCGMScrape(bytes.NewBufferString(in), "", at)
		got := res.Samples
		if err != nil || len(got) != 1 || got[0].TempC != nil || show(got[0].MemUsedMiB) != "10" {
			t.Errorf("blank %s: %+v %v", blank, got, err)
		}
	}
}
