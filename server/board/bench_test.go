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
// token checked (bound to its hosts), nvidia-smi CSV parsed, the host rules
// applied, samples folded into the live state and the minute rollups — 8
// cards (one host) per request, as cron or the agent sends them; the CSV
// without a header (the README's cron line) and with one, read by name.
// samples/s is the figure to hold against the 156,000.
func BenchmarkPushNvidiaSMI(b *testing.B) {
	e := servertest.New(b, servertest.Options{Vars: map[string]string{"CARDHOUR_SIMULATOR": "false"}})
	ctx := e.AdminCtx()
	ct, err := e.St.CreateCardType(ctx, store.CardTypeInput{Name: "H800", VRAMGiB: 80, TFLOPSBF16: 989, PriceFen: 2200})
	if err != nil {
		b.Fatal(err)
	}
	const hosts = 32
	names := make([]string, hosts)
	for h := range names {
		names[h] = fmt.Sprintf("bench-%02d", h)
	}
	_, token, err := e.St.CreateTelemetryToken(ctx, store.TokenAgent, "bench", names...)
	if err != nil {
		b.Fatal(err)
	}
	plain, headed := make([][]byte, hosts), make([][]byte, hosts)
	for h := 0; h < hosts; h++ {
		host, err := e.St.CreateHost(ctx, store.HostInput{Name: names[h]})
		if err != nil {
			b.Fatal(err)
		}
		var buf, hbuf bytes.Buffer
		// As nvidia-smi --format=csv prints it: the header with units, and
		// the units in the fields.
		hbuf.WriteString("index, uuid, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB], temperature.gpu, power.draw [W], pci.bus_id, mig.mode.current\n")
		for i := 0; i < 8; i++ {
			uuid := fmt.Sprintf("GPU-%08x-aaaa-bbbb-cccc-%012x", h, i)
			if _, err := e.St.CreateCard(ctx, store.CardInput{UUID: uuid, GPUIndex: i, HostID: host.ID, CardTypeID: ct.ID}); err != nil {
				b.Fatal(err)
			}
			util := (h*7 + i*13) % 100
			fmt.Fprintf(&buf, "%d, %s, NVIDIA H800, %d, %d, 81559, 60, 500.5\n", i, uuid, util, 1000*i)
			fmt.Fprintf(&hbuf, "%d, %s, NVIDIA H800, %d %%, %d MiB, 81559 MiB, 60, 500.50 W, 00000000:%02X:00.0, Disabled\n", i, uuid, util, 1000*i, 0x18+i)
		}
		plain[h], headed[h] = buf.Bytes(), hbuf.Bytes()
	}
	for _, c := range []struct {
		name   string
		bodies [][]byte
	}{{"headerless", plain}, {"header", headed}} {
		b.Run(c.name, func(b *testing.B) {
			h := e.Srv.Handler()
			samples := 0
			for i := 0; b.Loop(); i++ {
				host := i % hosts
				req := httptest.NewRequestWithContext(context.Background(), http.MethodPost,
					"/api/v1/telemetry/nvidia-smi?host="+names[host], bytes.NewReader(c.bodies[host]))
				req.Header.Set("Authorization", "Bearer "+token)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					b.Fatalf("push: %d %s", rec.Code, rec.Body)
				}
				samples += 8
			}
			b.ReportMetric(float64(samples)/b.Elapsed().Seconds(), "samples/s")
		})
	}
}
