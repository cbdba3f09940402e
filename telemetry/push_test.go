package telemetry_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"cardhour/telemetry"
)

func body(parts ...[]byte) []byte { return bytes.Join(parts, []byte("\n")) }

func processesText(ps []telemetry.Process) string {
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%d %s %s", p.PID, p.Name, show(p.MemMiB)))
	}
	return strings.Join(out, "; ")
}

func TestParsePushReadsRecordedBodies(t *testing.T) {
	h200 := "12249 /root/tools/memhog 2194; 12250 /root/tools/memhog 1170; 12267 ./gpu_burn 13526"
	h100 := "11327 /root/tools/memhog 2566; 11328 /root/tools/memhog 1542; 11345 ./gpu_burn 15690"
	crlf := func(b []byte) []byte { return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n")) }
	for _, c := range []struct {
		name  string
		body  []byte
		gpu   gpuWant
		procs string
	}{
		{"H200 MIG load, blank line, apps", body(recording(t, h200LoadGPU), recording(t, h200LoadApps)), recordedGPUs[2].want, h200},
		{"same with CRLF", crlf(body(recording(t, h200LoadGPU), recording(t, h200LoadApps))), recordedGPUs[2].want, h200},
		{"apps header straight after the rows", append(recording(t, h200LoadGPU), recording(t, h200LoadApps)...), recordedGPUs[2].want, h200},
		{"H200 idle, apps header only", body(recording(t, h200IdleGPU), recording(t, h200IdleApps)), recordedGPUs[3].want, ""},
		{"H100 load", body(recording(t, h100LoadGPU), recording(t, h100LoadApps)), recordedGPUs[0].want, h100},
		{"H100 load without apps", recording(t, h100LoadGPU), recordedGPUs[0].want, ""},
	} {
		res, err := telemetry.ParsePush(c.body, "gpu-01", at)
		if err != nil || len(res.Skipped) != 0 || len(res.GPUErrors) != 0 || len(res.Samples) != 1 {
			t.Errorf("%s: err %v samples %d skipped %v errors %v", c.name, err, len(res.Samples), res.Skipped, res.GPUErrors)
			continue
		}
		s := res.Samples[0]
		if got := gpuGot(s); got != c.gpu || s.Host != "gpu-01" || !s.At.Equal(at) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.gpu)
		}
		if got := processesText(s.Processes); got != c.procs {
			t.Errorf("%s: processes\n got %s\nwant %s", c.name, got, c.procs)
		}
	}
}

func TestParsePushKeepsTheHeaderlessFormat(t *testing.T) {
	res, err := telemetry.ParsePush(body(fixture(t, "nvidia-smi-nounits.csv"), fixture(t, "nvidia-smi-apps.csv")), "h", at)
	if err != nil || len(res.Skipped) != 0 || len(res.Samples) != 4 {
		t.Fatalf("%v %v %d", err, res.Skipped, len(res.Samples))
	}
	if len(res.Samples[0].Processes) != 1 || len(res.Samples[2].Processes) != 2 || res.Samples[2].Processes[0].Name != "python train.py --lr 1e-4, --bs 8" {
		t.Errorf("processes %+v", res.Samples)
	}
}

// curl -d @file strips the newlines; the recorded bodies with theirs
// removed, as curl would send them.
func TestParsePushRefusesABodyWhoseNewlinesWereStripped(t *testing.T) {
	strip := func(b []byte) []byte {
		return bytes.ReplaceAll(bytes.ReplaceAll(b, []byte("\r"), nil), []byte("\n"), nil)
	}
	for name, b := range map[string][]byte{
		"four GPUs, headerless":        fixture(t, "nvidia-smi-nounits.csv"),
		"one GPU and its processes":    body(recording(t, h100LoadGPU), recording(t, h100LoadApps)),
		"header and one row":           recording(t, h200LoadGPU),
		"headerless GPUs and apps":     body(fixture(t, "nvidia-smi-nounits.csv"), fixture(t, "nvidia-smi-apps.csv")),
		"MIG rows and their processes": body(recording(t, h200LoadGPU), recording(t, h200LoadApps)),
	} {
		res, err := telemetry.ParsePush(strip(b), "h", at)
		if !errors.Is(err, telemetry.ErrNewlinesStripped) || !strings.Contains(err.Error(), "--data-binary") {
			t.Errorf("%s: err %v, samples %d", name, err, len(res.Samples))
			continue
		}
		if len(res.Skipped) != 1 || res.Skipped[0].Line != 1 || !strings.Contains(res.Skipped[0].Reason, "--data-binary") {
			t.Errorf("%s: skipped %v", name, res.Skipped)
		}
	}
	// With its newlines, each is fine.
	if _, err := telemetry.ParsePush(fixture(t, "nvidia-smi-nounits.csv"), "h", at); err != nil {
		t.Error(err)
	}
}

func TestParsePushListsSkippedLinesAndGPUErrors(t *testing.T) {
	// The H100's rows, the line nvidia-smi prints for a GPU it cannot
	// reach, a row of another query, then the processes.
	b := body(bytes.TrimSpace(recording(t, h100LoadGPU)), bytes.TrimSpace(recording(t, errUnknown)), bytes.TrimSpace(recording(t, gtx770Other)),
		[]byte(""), recording(t, h100LoadApps))
	res, err := telemetry.ParsePush(b, "h", at)
	if err != nil || len(res.Samples) != 1 || len(res.Samples[0].Processes) != 3 {
		t.Fatalf("err %v samples %+v", err, res.Samples)
	}
	if len(res.GPUErrors) != 1 || res.GPUErrors[0] != (telemetry.GPUError{Line: 3, BusID: "0000:09:00.0", Reason: "Unknown Error"}) {
		t.Errorf("gpu errors %+v", res.GPUErrors)
	}
	if len(res.Skipped) != 1 || res.Skipped[0].Line != 4 || !strings.Contains(res.Skipped[0].Reason, "want 212 fields as in the header on line 1") {
		t.Errorf("skipped %+v", res.Skipped)
	}
	// Lines of the processes part count from the body's first line.
	b = body(fixture(t, "nvidia-smi-nounits.csv"), []byte("GPU-4c8b2656-65c5-07d7-9a96-9dc10e6cad4a, x, y, 1 MiB\n"))
	res, _ = telemetry.ParsePush(b, "h", at)
	if len(res.Skipped) != 1 || res.Skipped[0].Line != 6 || res.Skipped[0].Reason != "pid is not a number" {
		t.Errorf("skipped %+v", res.Skipped)
	}
}
