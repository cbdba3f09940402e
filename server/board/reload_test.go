package board_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cardhour/server/servertest"
	"cardhour/store"
)

// TestPushesAtOnceLoadTheInventoryOnce: pushes that arrive together and
// each find the inventory to be loaded — the first ones after start, then
// cards an admin added since the last load — share one load of it, not
// one each (with 10,000 new cards in 1,250 pushes, that was a storm of
// whole reloads); and the load they share registers every card they
// carried.
func TestPushesAtOnceLoadTheInventoryOnce(t *testing.T) {
	t.Parallel()
	e := servertest.New(t, servertest.Options{Vars: map[string]string{"CARDHOUR_SIMULATOR": "false"}})
	ctx := e.AdminCtx()
	ct, err := e.St.CreateCardType(ctx, store.CardTypeInput{Name: "H800", VRAMGiB: 80, TFLOPSBF16: 989, PriceFen: 2200})
	if err != nil {
		t.Fatal(err)
	}
	const hosts, perHost = 48, 8
	names := make([]string, 2*hosts)
	for h := range names {
		names[h] = fmt.Sprintf("storm-%02d", h)
	}
	// A token binds at most 32 hosts.
	tokens := make([]string, len(names))
	for from := 0; from < len(names); from += 32 {
		_, token, err := e.St.CreateTelemetryToken(ctx, store.TokenAgent, "storm", names[from:min(from+32, len(names))]...)
		if err != nil {
			t.Fatal(err)
		}
		for h := from; h < min(from+32, len(names)); h++ {
			tokens[h] = token
		}
	}
	bodies := make([][]byte, len(names))
	addCards := func(from, to int) {
		t.Helper()
		for h := from; h < to; h++ {
			host, err := e.St.CreateHost(ctx, store.HostInput{Name: names[h]})
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			for i := 0; i < perHost; i++ {
				uuid := fmt.Sprintf("GPU-%08x-aaaa-bbbb-cccc-%012x", h, i)
				if _, err := e.St.CreateCard(ctx, store.CardInput{UUID: uuid, GPUIndex: i, HostID: host.ID, CardTypeID: ct.ID}); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&buf, "%d, %s, NVIDIA H800, 50, 1000, 81559, 60, 500.5\n", i, uuid)
			}
			bodies[h] = buf.Bytes()
		}
	}
	h := e.Srv.Handler()
	pushAll := func(from, to int) {
		t.Helper()
		var wg sync.WaitGroup
		start := make(chan struct{})
		failed := make(chan string, to-from)
		for host := from; host < to; host++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				req := httptest.NewRequestWithContext(context.Background(), http.MethodPost,
					"/api/v1/telemetry/nvidia-smi?host="+names[host], bytes.NewReader(bodies[host]))
				req.Header.Set("Authorization", "Bearer "+tokens[host])
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					failed <- fmt.Sprintf("push %s: %d %s", names[host], rec.Code, rec.Body)
				}
			}()
		}
		close(start)
		wg.Wait()
		close(failed)
		for f := range failed {
			t.Error(f)
		}
	}
	registered := func(from, to int) {
		t.Helper()
		for host := from; host < to; host++ {
			for i := 0; i < perHost; i++ {
				uuid := fmt.Sprintf("GPU-%08x-aaaa-bbbb-cccc-%012x", host, i)
				if c := e.Srv.Board().LiveCard(uuid); !c.Registered {
					t.Errorf("%s (pushed by %s) is not registered on the board: %+v", uuid, names[host], c)
				}
			}
		}
	}

	// The first pushes after start: nothing loaded yet.
	addCards(0, hosts)
	pushAll(0, hosts)
	if n := inventoryLoads(t, e); n != 1 {
		t.Errorf("%d pushes at once, the first after start: %d loads of the inventory, want 1", hosts, n)
	}
	registered(0, hosts)

	// Cards added since, reporting once the last load is older than the
	// few seconds a push waits before it may ask for a new one.
	addCards(hosts, 2*hosts)
	time.Sleep(5500 * time.Millisecond)
	pushAll(hosts, 2*hosts)
	if n := inventoryLoads(t, e); n != 2 {
		t.Errorf("%d pushes at once of cards added since: %d loads of the inventory in all, want 2", hosts, n)
	}
	registered(hosts, 2*hosts)
}

// inventoryLoads reads the portal's count of inventory loads off /metrics.
func inventoryLoads(t *testing.T, e *servertest.Env) int {
	t.Helper()
	const series = `cardhour_board_loads_total{what="inventory"} `
	for _, line := range strings.Split(e.Client().Get("/metrics").String(), "\n") {
		if v, ok := strings.CutPrefix(line, series); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("%s%s: %v", series, v, err)
			}
			return n
		}
	}
	t.Fatalf("/metrics lacks %s", series)
	return 0
}
