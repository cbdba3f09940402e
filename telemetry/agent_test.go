package telemetry_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cardhour/telemetry"
)

// recorded replays headerless nvidia-smi output for the two queries the
// agent runs, and checks it runs exactly those (with a header asked for:
// output without one is still read in GPUQuery's order).
func recorded(t *testing.T) telemetry.Runner {
	gpus, apps := fixture(t, "nvidia-smi-nounits.csv"), fixture(t, "nvidia-smi-apps.csv")
	return func(ctx context.Context, name string, args ...string) ([]byte, error) {
		if name != "nvidia-smi" || len(args) != 2 || args[1] != "--format=csv,nounits" {
			t.Errorf("ran %s %v", name, args)
			return nil, errors.New("unexpected command")
		}
		switch args[0] {
		case "--query-gpu=" + telemetry.AgentGPUQuery:
			return gpus, nil
		case "--query-compute-apps=" + telemetry.AppsQuery:
			return apps, nil
		}
		t.Errorf("unexpected query %q", args[0])
		return nil, errors.New("unexpected query")
	}
}

// portal is a stand-in for the server's samples endpoint that can be down.
type portal struct {
	up       atomic.Bool
	attempts atomic.Int32
	mu       sync.Mutex
	got      []telemetry.Batch
}

func (p *portal) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.attempts.Add(1)
	if r.URL.Path != telemetry.SamplesPath || r.Header.Get("Authorization") != "Bearer cha_test" || r.Method != http.MethodPost {
		http.Error(w, "bad request line or token", http.StatusUnauthorized)
		return
	}
	if !p.up.Load() {
		http.Error(w, "restarting", http.StatusServiceUnavailable)
		return
	}
	var b telemetry.Batch
	if err := json.NewDecoder(r.Body).Decode(&b); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	p.mu.Lock()
	p.got = append(p.got, b)
	p.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func TestAgentPostsRecordedSamples(t *testing.T) {
	p := &portal{}
	p.up.Store(true)
	ts := httptest.NewServer(p)
	defer ts.Close()
	a, err := telemetry.NewAgent(telemetry.AgentConfig{Server: ts.URL + "/", Token: "cha_test", Host: "gpu-bj-h800-01", Run: recorded(t)})
	if err != nil {
		t.Fatal(err)
	}
	a.Step(context.Background(), t0)
	if len(p.got) != 1 || p.got[0].Host != "gpu-bj-h800-01" || len(p.got[0].Samples) != 4 {
		t.Fatalf("posted %+v", p.got)
	}
	s := p.got[0].Samples
	if !s[0].At.Equal(t0) || s[0].UUID != "GPU-4c8b2656-65c5-07d7-9a96-9dc10e6cad4a" || *s[0].UtilPct != 100 || len(s[0].Processes) != 1 ||
		len(s[2].Processes) != 2 || s[3].UtilPct != nil {
		t.Errorf("samples %+v", s)
	}
}

func TestAgentBuffersWhileThePortalIsDownAndCatchesUp(t *testing.T) {
	p := &portal{}
	ts := httptest.NewServer(p)
	defer ts.Close()
	a, err := telemetry.NewAgent(telemetry.AgentConfig{Server: ts.URL, Token: "cha_test", Host: "h", Run: recorded(t),
		MaxBuffered: 20, MaxPerPost: 8, MinBackoff: 2 * time.Second, MaxBackoff: 16 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// 60 rounds, one a second, with the portal down: the buffer keeps the
	// newest 20, and retries back off (2, 4, 8, 16, 16 … s ± 20 %) instead of
	// hammering a portal that is restarting.
	for s := 0; s < 60; s++ {
		a.Step(ctx, t0.Add(time.Duration(s)*time.Second))
	}
	if a.Buffered() != 20 {
		t.Errorf("buffered %d rounds, want the bound 20", a.Buffered())
	}
	attempts := int(p.attempts.Load())
	if attempts < 4 || attempts > 8 {
		t.Errorf("%d attempts in 60 s of outage, want 4–8 with exponential backoff", attempts)
	}
	if st := a.Stats(); st.Dropped != 40 || st.Rounds != 60 || st.Failures != attempts {
		t.Errorf("stats %+v", st)
	}
	// The portal is back: the next attempt after the backoff delivers the
	// whole window, oldest first, in posts of at most 8 rounds.
	p.up.Store(true)
	for s := 60; s < 90 && a.Buffered() > 0; s++ {
		a.Step(ctx, t0.Add(time.Duration(s)*time.Second))
	}
	if a.Buffered() != 0 {
		t.Fatalf("still %d rounds buffered 30 s after the portal came back", a.Buffered())
	}
	var times []time.Time
	for _, b := range p.got {
		if n := len(b.Samples); n > 8*4 {
			t.Errorf("a post carried %d samples, want at most 8 rounds of 4", n)
		}
		for i := 0; i < len(b.Samples); i += 4 {
			times = append(times, b.Samples[i].At)
		}
	}
	// Everything taken is accounted for: delivered, or dropped as the oldest
	// beyond the bound; what was delivered is one contiguous, newest stretch.
	st := a.Stats()
	if len(times) != 20 || len(times)+st.Dropped != st.Rounds {
		t.Fatalf("delivered %d rounds, dropped %d, took %d", len(times), st.Dropped, st.Rounds)
	}
	if last := t0.Add(time.Duration(st.Rounds-1) * time.Second); !times[len(times)-1].Equal(last) {
		t.Errorf("last delivered round from %v, want the newest %v", times[len(times)-1], last)
	}
	for i := 1; i < len(times); i++ {
		if !times[i].Equal(times[i-1].Add(time.Second)) {
			t.Fatalf("rounds out of order at %d: %v then %v", i, times[i-1], times[i])
		}
	}
}

func TestAgentDropsSamplesThePortalRefuses(t *testing.T) {
	var calls atomic.Int32
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, `{"error":{"code":"invalid"}}`, http.StatusUnprocessableEntity)
	}))
	defer ts.Close()
	a, _ := telemetry.NewAgent(telemetry.AgentConfig{Server: ts.URL, Token: "t", Host: "h", Run: recorded(t)})
	a.Step(context.Background(), t0)
	a.Step(context.Background(), t0.Add(time.Second))
	if a.Buffered() != 0 || calls.Load() != 2 || a.Stats().Dropped != 2 {
		t.Errorf("buffered %d, calls %d, stats %+v: refused samples must be dropped, not retried", a.Buffered(), calls.Load(), a.Stats())
	}
}

func TestAgentSurvivesAPortalThatIsNotThere(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	url := ts.URL
	ts.Close() // connection refused from now on
	a, _ := telemetry.NewAgent(telemetry.AgentConfig{Server: url, Token: "t", Host: "h", Run: recorded(t), MaxBuffered: 3})
	for s := 0; s < 5; s++ {
		a.Step(context.Background(), t0.Add(time.Duration(s)*time.Second))
	}
	if a.Buffered() != 3 || a.Stats().Failures == 0 {
		t.Errorf("buffered %d, stats %+v", a.Buffered(), a.Stats())
	}
}

func TestAgentKeepsSamplingWhenNvidiaSmiFails(t *testing.T) {
	fails := true
	run := func(ctx context.Context, name string, args ...string) ([]byte, error) {
		if fails {
			return nil, errors.New("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver")
		}
		return fixture(t, "nvidia-smi-units.csv"), nil
	}
	p := &portal{}
	p.up.Store(true)
	ts := httptest.NewServer(p)
	defer ts.Close()
	a, _ := telemetry.NewAgent(telemetry.AgentConfig{Server: ts.URL, Token: "cha_test", Host: "h", Run: run})
	a.Step(context.Background(), t0)
	fails = false
	a.Step(context.Background(), t0.Add(time.Second))
	if len(p.got) != 1 || len(p.got[0].Samples) != 3 {
		t.Errorf("posted %+v", p.got)
	}
}

func TestNewAgentChecksItsFlags(t *testing.T) {
	for _, c := range []telemetry.AgentConfig{
		{Server: "", Token: "t"},
		{Server: "ftp://x", Token: "t"},
		{Server: "http://x", Token: " "},
		{Server: "http://x", Token: "t", Interval: time.Millisecond},
	} {
		if _, err := telemetry.NewAgent(c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

func TestAgentCommandStopsWithItsContext(t *testing.T) {
	p := &portal{}
	p.up.Store(true)
	ts := httptest.NewServer(p)
	defer ts.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out strings.Builder
	err := telemetry.AgentCommand(ctx, []string{"--server", ts.URL, "--host", "h"}, func(k string) string {
		if k == "CARDHOUR_AGENT_TOKEN" {
			return "cha_test"
		}
		return ""
	}, &out)
	// nvidia-smi is not installed here: the round fails, the agent keeps going
	// until its context ends, and ends cleanly.
	if err != nil {
		t.Errorf("agent: %v\n%s", err, out.String())
	}
	if err := telemetry.AgentCommand(context.Background(), []string{"--server", ts.URL}, func(string) string { return "" }, &out); err == nil {
		t.Error("an agent without a token started")
	}
}
