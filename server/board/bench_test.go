package board_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"cardhour/server/servertest"
	"cardhour/store"
)

// BenchmarkPushNvidiaSMI is the whole ingest path in-process: the agent
// token checked against the database, nvidia-smi CSV parsed, samples folded
// into the live state and the minute rollups — 8 cards (one host) per
// request, as cron or the agent sends them. samples/s is the figure to hold
// against the 50,000.
func BenchmarkPushNvidiaSMI(b *testing.B) {
	e := servertest.New(b, servertest.Options{Vars: map[string]string{"CARDHOUR_SIMULATOR": "false"}})
	ctx := e.AdminCtx()
	ct, err := e.St.CreateCardType(ctx, store.CardTypeInput{Name: "H800", VRAMGiB: 80, TFLOPSBF16: 989, PriceFen: 2200})
	if err != nil {
		b.Fatal(err)
	}
	_, token, err := e.St.CreateTelemetryToken(ctx, store.TokenAgent, "bench")
	if err != nil {
		b.Fatal(err)
	}
	const hosts = 32
	bodies := make([][]byte, hosts)
	for h := 0; h < hosts; h++ {
		host, err := e.St.CreateHost(ctx, store.HostInput{Name: fmt.Sprintf("bench-%02d", h)})
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		for i := 0; i < 8; i++ {
			uuid := fmt.Sprintf("GPU-%08x-aaaa-bbbb-cccc-%012x", h, i)
			if _, err := e.St.CreateCard(ctx, store.CardInput{UUID: uuid, GPUIndex: i, HostID: host.ID, CardTypeID: ct.ID}); err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(&buf, "%d, %s, NVIDIA H800, %d, %d, 81559, 60, 500.5\n", i, uuid, (h*7+i*13)%100, 1000*i)
		}
		bodies[h] = buf.Bytes()
	}
	h := e.Srv.Handler()
	samples := 0
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		host := i % hosts
		req := httptest.NewRequestWithContext(context.Background(), http.MethodPost,
			fmt.Sprintf("/api/v1/telemetry/nvidia-smi?host=bench-%02d", host), bytes.NewReader(bodies[host]))
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("push: %d %s", rec.Code, rec.Body)
		}
		samples += 8
	}
	b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
}
