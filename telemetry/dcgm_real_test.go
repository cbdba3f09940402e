package telemetry_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"cardhour/telemetry"
)

func scrape(t *testing.T, b []byte) telemetry.DCGMScrape {
	t.Helper()
	res, err := telemetry.ParseDCGMScrape(bytes.NewReader(b), "fallback", at)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func skippedNames(fs []telemetry.SkippedFamily) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return strings.Join(out, " ")
}

func instancesText(in []telemetry.Instance) string {
	var out []string
	for _, i := range in {
		out = append(out, fmt.Sprintf("%d %s %s/%s sm %s", i.ID, i.Profile, show(i.MemUsedMiB), show(i.MemTotalMiB), show(i.SMActivePct)))
	}
	return strings.Join(out, "; ")
}

// The recorded A800×8: GPU 0 split into three 2g.20gb instances, GPUs 1–7
// whole, and a vGPU family whose every line reads ERROR - FAILED TO
// CONVERT TO STRING. Before families were read one by one, that line lost
// the whole host.
func TestParseDCGMRecordedA800WithMIGAndABrokenFamily(t *testing.T) {
	res := scrape(t, recording(t, dcgmA800MIG))
	if skippedNames(res.Skipped) != "DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION" || !strings.Contains(res.Skipped[0].Reason, "FAILED TO CONVERT") {
		t.Errorf("skipped %+v", res.Skipped)
	}
	if len(res.Samples) != 8 {
		t.Fatalf("%d samples, want 8 (one a card, MIG instances inside theirs)", len(res.Samples))
	}
	g0 := res.Samples[0]
	if g0.UUID != "GPU-1f027ee8-6e1e-2b8c-0108-3d370e5f0418" || g0.Index != 0 || !g0.MIG || g0.Host != "msxf-hpc-64-35-ai" ||
		g0.Name != "NVIDIA A800-SXM4-80GB" || g0.Fault != "" {
		t.Errorf("GPU 0: %+v", g0)
	}
	// Used is the instances' sum; the total is not theirs (they do not cover
	// the card) and utilisation is not given for MIG cards.
	if show(g0.MemUsedMiB) != "30" || g0.MemTotalMiB != nil || g0.UtilPct != nil || show(g0.TempC) != "33" || show(g0.PowerW) != "78.174" {
		t.Errorf("GPU 0: used %s total %s util %s temp %s power %s", show(g0.MemUsedMiB), show(g0.MemTotalMiB), show(g0.UtilPct), show(g0.TempC), show(g0.PowerW))
	}
	if got, want := instancesText(g0.Instances), "3 2g.20gb 10/19967 sm 0; 5 2g.20gb 10/19967 sm 0; 6 2g.20gb 10/19967 sm 0"; got != want {
		t.Errorf("instances\n got %s\nwant %s", got, want)
	}
	for i, s := range res.Samples[1:] {
		if s.Index != i+1 || s.MIG || len(s.Instances) != 0 || show(s.UtilPct) != "0" || show(s.MemUsedMiB) != "2" ||
			show(s.MemTotalMiB) != "81228" || show(s.SMActivePct) != "0" {
			t.Errorf("GPU %d: %+v", i+1, s)
		}
	}
}

func TestParseDCGMRecordedWholeCards(t *testing.T) {
	for _, c := range []struct {
		file string
		want gpuWant
		sm   string
	}{
		// Total = used + free + reserved: 0 + 22563 + 470.
		{dcgmL4, gpuWant{"GPU-c2f76b33-7953-256e-8f33-1343419b1a1c", "NVIDIA L4", "0000:31:00.0", 0, "0", "0", "23033", "31", "16.365", false, ""}, "0"},
		// 1 + 20015 + 457; SM activity 0.004656 is kept apart from GPU_UTIL's 0.
		{dcgmRTX4000, gpuWant{"GPU-a8394b51-c086-568a-9f1a-c1e1c934c44c", "NVIDIA RTX 4000 Ada Generation", "0000:00:02.0", 0, "0", "1", "20473", "48", "40.979", false, ""}, "0.4656"},
	} {
		res := scrape(t, recording(t, c.file))
		if len(res.Samples) != 1 || len(res.Skipped) != 0 {
			t.Fatalf("%s: %d samples, skipped %v", c.file, len(res.Samples), res.Skipped)
		}
		s := res.Samples[0]
		if got := gpuGot(s); got != c.want || show(s.SMActivePct) != c.sm {
			t.Errorf("%s:\n got %+v sm %s\nwant %+v sm %s", c.file, got, show(s.SMActivePct), c.want, c.sm)
		}
	}
}

func TestParseDCGMRecordedMIGExcerpts(t *testing.T) {
	res := scrape(t, recording(t, dcgmA30MIG))
	if len(res.Samples) != 2 || !res.Samples[0].MIG || !res.Samples[1].MIG {
		t.Fatalf("%+v", res.Samples)
	}
	// Only FB_FREE was kept in the excerpt: no used, so no totals either.
	if got := instancesText(res.Samples[0].Instances); got != "3 1g.6gb missing/missing sm missing; 4 1g.6gb missing/missing sm missing; 5 1g.6gb missing/missing sm missing; 6 1g.6gb missing/missing sm missing" {
		t.Errorf("A30 #0: %s", got)
	}
	if len(res.Samples[1].Instances) != 2 || res.Samples[0].MemUsedMiB != nil {
		t.Errorf("A30 #1: %+v", res.Samples[1])
	}
	res = scrape(t, recording(t, dcgmH100MIG))
	if len(res.Samples) != 1 || res.Samples[0].UtilPct != nil || res.Samples[0].SMActivePct != nil ||
		instancesText(res.Samples[0].Instances) != "7 1g.10gb missing/missing sm 0; 8 1g.10gb missing/missing sm 0; 9 1g.10gb missing/missing sm 0" {
		t.Errorf("H100 MIG: %+v", res.Samples)
	}
}

func TestParseDCGMSkipsRecordedBrokenFamilies(t *testing.T) {
	// COMPUTE_PIDS and VGPU_PER_PROCESS_UTILIZATION do not parse (the second
	// also lost a quote in the recording); GRAPHICS_PIDS does.
	res := scrape(t, recording(t, dcgmBroken122))
	if skippedNames(res.Skipped) != "DCGM_FI_DEV_COMPUTE_PIDS DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION" || res.Skipped[0].Line != 1 || res.Skipped[1].Line != 3 {
		t.Errorf("skipped %+v", res.Skipped)
	}
	// A scrape in which nothing parses is an error, with the families said.
	got, err := telemetry.ParseDCGMScrape(bytes.NewReader(recording(t, dcgmBroken394)), "h", at)
	if err == nil || skippedNames(got.Skipped) != "DCGM_FI_DEV_VGPU_INSTANCE_IDS" {
		t.Errorf("err %v skipped %+v", err, got.Skipped)
	}
	// dcgm-exporter 4.1.1 on an H20 printed a string as a value; Prometheus
	// quoted the line in its scrape error. Unquoted and put in front of the
	// L4 scrape, it costs that family only.
	quoted := strings.TrimPrefix(strings.TrimSpace(string(recording(t, promH20Error))), `"Error scraping target: unsupported character in float while parsing: `)
	line, err := strconv.Unquote(strings.TrimSuffix(quoted, `"`) + `"`)
	if err != nil {
		t.Fatal(err)
	}
	res = scrape(t, append([]byte(line+"\n"), recording(t, dcgmL4)...))
	if skippedNames(res.Skipped) != "DCGM_FI_DEV_CUDA_VISIBLE_DEVICES_STR" || len(res.Samples) != 1 || show(res.Samples[0].MemTotalMiB) != "23033" {
		t.Errorf("skipped %+v samples %+v", res.Skipped, res.Samples)
	}
	// A family cardhour reads, broken the way the vGPU one is: skipped, the
	// rest read. Derived from the A800 scrape by giving GPU_TEMP's lines the
	// vGPU family's broken value.
	a800 := recording(t, dcgmA800MIG)
	broken := regexp.MustCompile(`(?m)^(DCGM_FI_DEV_GPU_TEMP\{.*\}) \d+$`).ReplaceAll(a800, []byte("$1 ERROR - FAILED TO CONVERT TO STRING"))
	res = scrape(t, broken)
	if skippedNames(res.Skipped) != "DCGM_FI_DEV_GPU_TEMP DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION" || len(res.Samples) != 8 ||
		res.Samples[1].TempC != nil || show(res.Samples[1].MemUsedMiB) != "2" {
		t.Errorf("skipped %+v, %d samples", res.Skipped, len(res.Samples))
	}
}

// XID_ERRORS holds the last XID a GPU raised. None of the recorded scrapes
// has one, so the XID the recorded kernel log shows (79, fallen off the
// bus) is put in the RTX 4000 Ada scrape's XID_ERRORS line here.
func TestParseDCGMReportsXIDErrorsAsFaults(t *testing.T) {
	xid := regexp.MustCompile(`Xid \(PCI:[0-9a-f:]+\): (\d+),`).FindSubmatch(recording(t, dmesgXid79))
	if xid == nil {
		t.Fatal("no Xid in the kernel log")
	}
	b := regexp.MustCompile(`(?m)^(DCGM_FI_DEV_XID_ERRORS\{.*\}) 0$`).ReplaceAll(recording(t, dcgmRTX4000), append([]byte("$1 "), xid[1]...))
	res := scrape(t, b)
	if len(res.Samples) != 1 || res.Samples[0].Fault != "XID 79" {
		t.Errorf("%+v", res.Samples)
	}
	if res := scrape(t, recording(t, dcgmRTX4000)); res.Samples[0].Fault != "" {
		t.Errorf("XID 0 read as a fault: %q", res.Samples[0].Fault)
	}
}

// logLines counts the records a test logger received.
type logLines struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logLines) Enabled(context.Context, slog.Level) bool { return true }
func (l *logLines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	msg := r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "target" || a.Key == "family" {
			msg += " " + a.Value.String()
		}
		return true
	})
	l.msgs = append(l.msgs, msg)
	return nil
}
func (l *logLines) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logLines) WithGroup(string) slog.Handler      { return l }

func TestScraperLogsABrokenFamilyOncePerTarget(t *testing.T) {
	a800 := recording(t, dcgmA800MIG)
	fixed := false
	var mu sync.Mutex
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if fixed && r.URL.Path == "/b/metrics" {
			_, _ = w.Write(recording(t, dcgmL4))
			return
		}
		_, _ = w.Write(a800)
	}))
	defer ts.Close()
	logs := &logLines{}
	s := &telemetry.Scraper{Targets: []string{ts.URL + "/a/metrics", ts.URL + "/b/metrics"}, Log: slog.New(logs)}
	for i := 0; i < 3; i++ {
		samples, errs := s.Scrape(context.Background(), at)
		if len(errs) != 0 || len(samples) != 16 {
			t.Fatalf("scrape %d: %d samples, errors %v", i, len(samples), errs)
		}
	}
	if len(logs.msgs) != 2 || s.BrokenFamilies(ts.URL + "/a/metrics")[0] != "DCGM_FI_DEV_VGPU_PER_PROCESS_UTILIZATION" {
		t.Errorf("logged %q, broken %v", logs.msgs, s.BrokenFamilies(ts.URL+"/a/metrics"))
	}
	// Target b is fixed, then breaks again: logged once more.
	mu.Lock()
	fixed = true
	mu.Unlock()
	s.Scrape(context.Background(), at)
	if got := s.BrokenFamilies(ts.URL + "/b/metrics"); len(got) != 0 {
		t.Errorf("b still broken: %v", got)
	}
	mu.Lock()
	fixed = false
	mu.Unlock()
	s.Scrape(context.Background(), at)
	if len(logs.msgs) != 3 || !strings.Contains(logs.msgs[2], "/b/metrics") {
		t.Errorf("logged %q", logs.msgs)
	}
}
