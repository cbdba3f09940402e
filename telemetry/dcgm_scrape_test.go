package telemetry_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"cardhour/telemetry"
)

func TestParseTargets(t *testing.T) {
	got, err := telemetry.ParseTargets(" gpu-01:9400 , https://gpu-02.example.cn:9400/metrics,,http://10.0.0.3:9400/ ")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"http://gpu-01:9400/metrics", "https://gpu-02.example.cn:9400/metrics", "http://10.0.0.3:9400/metrics"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%v, want %v", got, want)
	}
	for _, bad := range []string{"ftp://x/metrics", "http://", "://"} {
		if _, err := telemetry.ParseTargets(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestScraperReadsEveryTargetAndReportsTheDeadOnes(t *testing.T) {
	newer := fixture(t, "dcgm-exporter-hostname.txt")
	older := fixture(t, "dcgm-exporter.txt")
	mux := http.NewServeMux()
	mux.HandleFunc("/a/metrics", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(newer) })
	mux.HandleFunc("/b/metrics", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(older) })
	mux.HandleFunc("/broken/metrics", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "exporter down", http.StatusBadGateway) })
	ts := httptest.NewServer(mux)
	defer ts.Close()
	s := telemetry.Scraper{Targets: []string{ts.URL + "/a/metrics", ts.URL + "/b/metrics", ts.URL + "/broken/metrics"}}
	samples, errs := s.Scrape(context.Background(), at)
	if len(errs) != 1 || !strings.Contains(errs[0].Target, "/broken/") {
		t.Errorf("errors %v, want the broken target only", errs)
	}
	by := map[string]telemetry.Sample{}
	for _, smp := range samples {
		by[smp.UUID] = smp
	}
	if len(by) != 4 {
		t.Fatalf("%d samples, want 2 + 2", len(by))
	}
	a0 := by["GPU-2f6a1c54-7e0b-4f3a-9b1d-5c8e0a7d3f21"]
	if a0.Host != "gpu-sh-a800-01" || show(a0.UtilPct) != "87" || show(a0.MemTotalMiB) != "81229" || show(a0.TempC) != "63" {
		t.Errorf("A800 #0: host %q util %s total %s temp %s", a0.Host, show(a0.UtilPct), show(a0.MemTotalMiB), show(a0.TempC))
	}
	if a1 := by["GPU-9d0e4b7a-1c2f-4a6e-8d3b-0f5a7c9e1b42"]; a1.TempC != nil {
		t.Errorf("a blank temperature marker became %v", *a1.TempC)
	}
}

// A scrape that cannot be read says so, and keeps the reader's error.
func TestParseDCGMScrapeWrapsTheReadError(t *testing.T) {
	boom := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("DCGM_FI_DEV_GPU_UTIL"), failingReader{boom})
	if _, err := telemetry.ParseDCGMScrape(r, "h", at); !errors.Is(err, boom) || !strings.Contains(err.Error(), "reading") {
		t.Errorf("err %v, want one that wraps %v", err, boom)
	}
}

type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }
