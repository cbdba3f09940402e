package telemetry_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cardhour/telemetry"
	"cardhour/telemetry/telemetrytest"
)

func realFile(name string) string { return "testdata/real/" + name }

func newPortal(t *testing.T) (*portal, *httptest.Server) {
	p := &portal{}
	p.up.Store(true)
	ts := httptest.NewServer(p)
	t.Cleanup(ts.Close)
	return p, ts
}

func TestAgentReportsAnH200InMIGModeFromARealNvidiaSmi(t *testing.T) {
	calls := telemetrytest.FakeNvidiaSmi(t, [][2]string{
		{"--query-gpu=*", realFile(h200LoadGPU)},
		{"--query-compute-apps=*", realFile(h200LoadApps)},
		{"-L", realFile(h200List)},
		{"-q", realFile(h200Query)},
	})
	p, ts := newPortal(t)
	a, err := telemetry.NewAgent(telemetry.AgentConfig{Server: ts.URL, Token: "cha_test", Host: "gpu-h200-01", Run: telemetry.ExecRunner,
		ProcRoot:   telemetrytest.FakeProc(t, map[int]string{12249: "1000", 12250: "1000", 12267: "1001"}),
		LookupUser: telemetrytest.Users(map[string]string{"1000": "alice", "1001": "bob"})})
	if err != nil {
		t.Fatal(err)
	}
	a.Step(context.Background(), t0)
	if len(p.got) != 1 || len(p.got[0].Samples) != 1 {
		t.Fatalf("posted %+v", p.got)
	}
	s := p.got[0].Samples[0]
	// The recorded values: nvidia-smi's utilization.gpu is [N/A] in MIG mode.
	want := gpuWant{maskedUUID, "NVIDIA H200", "0000:83:00.0", 0, "missing", "16959", "143771", "36", "295.01", true, ""}
	if got := gpuGot(s); got != want || s.Host != "gpu-h200-01" || !s.At.Equal(t0) {
		t.Errorf("sample\n got %+v\nwant %+v", got, want)
	}
	// Five MIG devices, four GPU instances: 2 holds compute instances 0 and 1.
	if got, want := migText(s), "2 3g.71gb 16925/71424 procs 3; 3 2g.35gb 17/33280 procs 0; 9 1g.18gb 9/16384 procs 0; 10 1g.18gb 9/16384 procs 0"; got != want {
		t.Errorf("instances\n got %s\nwant %s", got, want)
	}
	var procs []string
	for _, pr := range s.Processes {
		procs = append(procs, fmt.Sprintf("%d %s %s gi %s %s", pr.PID, pr.Name, show(pr.MemMiB), optInt(pr.GPUInstance), pr.User))
	}
	if got, want := strings.Join(procs, "; "), "12249 /root/tools/memhog 2194 gi 2 alice; 12250 /root/tools/memhog 1170 gi 2 alice; 12267 ./gpu_burn 13526 gi 2 bob"; got != want {
		t.Errorf("processes\n got %s\nwant %s", got, want)
	}
	got := telemetrytest.Calls(t, calls)
	wantCalls := []string{"--query-gpu=" + telemetry.AgentGPUQuery + " --format=csv,nounits", "--query-compute-apps=" + telemetry.AppsQuery + " --format=csv,nounits", "-L", "-q"}
	if strings.Join(got, "\n") != strings.Join(wantCalls, "\n") {
		t.Errorf("nvidia-smi ran as\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantCalls, "\n"))
	}
}

func TestAgentReportsAnH100FromARealNvidiaSmi(t *testing.T) {
	calls := telemetrytest.FakeNvidiaSmi(t, [][2]string{
		{"--query-gpu=*", realFile(h100LoadGPU)},
		{"--query-compute-apps=*", realFile(h100LoadApps)},
	})
	p, ts := newPortal(t)
	a, err := telemetry.NewAgent(telemetry.AgentConfig{Server: ts.URL, Token: "cha_test", Host: "gpu-h100-01", Run: telemetry.ExecRunner,
		ProcRoot: t.TempDir()}) // the processes are gone: no users
	if err != nil {
		t.Fatal(err)
	}
	a.Step(context.Background(), t0)
	if len(p.got) != 1 || len(p.got[0].Samples) != 1 {
		t.Fatalf("posted %+v", p.got)
	}
	s := p.got[0].Samples[0]
	if got, want := gpuGot(s), recordedGPUs[0].want; got != want {
		t.Errorf("sample\n got %+v\nwant %+v", got, want)
	}
	if got := processesText(s.Processes); got != "11327 /root/tools/memhog 2566; 11328 /root/tools/memhog 1542; 11345 ./gpu_burn 15690" {
		t.Errorf("processes %s", got)
	}
	if len(s.Instances) != 0 || s.Processes[0].GPUInstance != nil || s.Processes[0].User != "" {
		t.Errorf("%+v", s)
	}
	// Not in MIG mode: no -L, no -q.
	if got := telemetrytest.Calls(t, calls); len(got) != 2 {
		t.Errorf("nvidia-smi ran %q", got)
	}
}

// A driver that lacks a field refuses the query; the agent asks for
// GPUQuery alone from then on. Its answer is derived from the H100
// recording: GPUQuery's columns only, as such a driver would print them.
func TestAgentFallsBackWhenNvidiaSmiRefusesAField(t *testing.T) {
	tb := csvTable(t, recording(t, h100LoadGPU))
	var cols []int
	for _, name := range strings.Split(telemetry.GPUQuery, ",") {
		cols = append(cols, tb.col(t, name))
	}
	old := filepath.Join(t.TempDir(), "gpuquery.csv")
	if err := os.WriteFile(old, tb.pick(cols).bytes(true), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := telemetrytest.FakeNvidiaSmi(t, [][2]string{
		{"*mig.mode.current*", `exit 2: Field "mig.mode.current" is not a valid field to query.`},
		{"--query-gpu=*", old},
		{"--query-compute-apps=*", realFile(h100LoadApps)},
	})
	p, ts := newPortal(t)
	a, _ := telemetry.NewAgent(telemetry.AgentConfig{Server: ts.URL, Token: "cha_test", Host: "h", Run: telemetry.ExecRunner})
	a.Step(context.Background(), t0)
	a.Step(context.Background(), t0.Add(time.Second))
	if len(p.got) != 2 || len(p.got[1].Samples) != 1 || show(p.got[1].Samples[0].UtilPct) != "100" || p.got[1].Samples[0].BusID != "" {
		t.Fatalf("posted %+v", p.got)
	}
	got := telemetrytest.Calls(t, calls)
	q := "--query-gpu=" + telemetry.GPUQuery + " --format=csv,nounits"
	if len(got) != 5 || !strings.Contains(got[0], "mig.mode.current") || got[1] != q || got[3] != q {
		t.Errorf("nvidia-smi ran\n%s", strings.Join(got, "\n"))
	}
}

// nvidia-smi prints an error line for a GPU it can no longer reach; the
// agent reports the card it knew at that bus id as faulty. The error line
// is the recorded one with the bus id of the recorded H100 put in it.
func TestAgentReportsAGPUNvidiaSmiCannotReach(t *testing.T) {
	dir := t.TempDir()
	errLine := strings.Replace(string(recording(t, errUnknown)), "0000:09:00.0", "0000:00:09.0", 1)
	broken := filepath.Join(dir, "broken.txt")
	if err := os.WriteFile(broken, []byte(errLine), 0o644); err != nil {
		t.Fatal(err)
	}
	round := filepath.Join(dir, "round")
	telemetrytest.FakeNvidiaSmi(t, [][2]string{
		{"--query-gpu=*", round},
		{"--query-compute-apps=*", realFile(h200IdleApps)},
	})
	p, ts := newPortal(t)
	a, _ := telemetry.NewAgent(telemetry.AgentConfig{Server: ts.URL, Token: "cha_test", Host: "h", Run: telemetry.ExecRunner})
	for i, file := range []string{realFile(h100LoadGPU), broken} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(round, b, 0o644); err != nil {
			t.Fatal(err)
		}
		a.Step(context.Background(), t0.Add(time.Duration(i)*time.Second))
	}
	if len(p.got) != 2 || len(p.got[1].Samples) != 1 {
		t.Fatalf("posted %+v", p.got)
	}
	s := p.got[1].Samples[0]
	if s.UUID != maskedUUID || s.Fault != "Unknown Error" || s.BusID != "0000:00:09.0" || s.UtilPct != nil || s.Name != "NVIDIA H100 80GB HBM3" {
		t.Errorf("fault sample %+v", s)
	}
}
