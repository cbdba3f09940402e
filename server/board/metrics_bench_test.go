package board_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"cardhour/server/servertest"
	"cardhour/telemetry"
)

// BenchmarkMetricsScrape is one scrape of /metrics, through the whole
// handler, with 10,000 registered cards reporting (8 a host, one in 16 in
// MIG mode with two instances) — the fleet. B/op is what one
// Prometheus scrape costs the server's heap; the body goes to a sink that
// keeps nothing, as a network connection would.
func BenchmarkMetricsScrape(b *testing.B) {
	e := servertest.New(b, servertest.Options{Vars: map[string]string{"CARDHOUR_SIMULATOR": "false"}})
	board := e.Srv.Board()
	const cards, perHost = 10000, 8
	metas := make([]telemetry.CardMeta, cards)
	samples := make([]telemetry.Sample, cards)
	now := time.Now()
	f := func(v float64) *float64 { return &v }
	for i := range metas {
		uuid := fmt.Sprintf("GPU-%08x-aaaa-bbbb-cccc-%012x", i/perHost, i)
		metas[i] = telemetry.CardMeta{UUID: uuid, ID: int64(i + 1), Host: fmt.Sprintf("gpu-bj-h800-%04d", i/perHost),
			Index: i % perHost, Type: "NVIDIA H800 80GB", MemTotalMiB: 81920}
		s := telemetry.Sample{UUID: uuid, Index: i % perHost, Name: "NVIDIA H800 80GB HBM3", At: now,
			UtilPct: f(float64(i % 101)), MemUsedMiB: f(float64(i % 81559)), MemTotalMiB: f(81559), TempC: f(60), PowerW: f(500.5)}
		if i%16 == 0 {
			s.MIG, s.UtilPct = true, nil
			s.Instances = []telemetry.Instance{
				{ID: 1, Profile: "3g.40gb", MemUsedMiB: f(1000), MemTotalMiB: f(40192), SMActivePct: f(50), Processes: 1},
				{ID: 2, Profile: "3g.40gb", MemUsedMiB: f(0), MemTotalMiB: f(40192), Processes: 0},
			}
		}
		samples[i] = s
	}
	board.SetInventoryNow(metas)
	if res := board.IngestNow(samples); res.Accepted != cards {
		b.Fatalf("ingest: %+v", res)
	}
	h := e.Srv.Handler()
	for _, enc := range []string{"identity", "gzip"} {
		b.Run(enc, func(b *testing.B) {
			b.ReportAllocs()
			var size int64
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
				// What Prometheus sends.
				req.Header.Set("Accept", "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
				req.Header.Set("Accept-Encoding", enc)
				w := &sink{header: http.Header{}}
				h.ServeHTTP(w, req)
				if w.code != http.StatusOK {
					b.Fatalf("/metrics: %d", w.code)
				}
				size = w.n
			}
			b.ReportMetric(float64(size)/1e6, "MB/body")
		})
	}
}

// sink is a ResponseWriter that counts the body and keeps none of it.
type sink struct {
	header http.Header
	code   int
	n      int64
}

func (s *sink) Header() http.Header { return s.header }
func (s *sink) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
}
func (s *sink) Write(p []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	s.n += int64(len(p))
	return len(p), nil
}

var _ io.Writer = (*sink)(nil)
