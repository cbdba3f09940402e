package board

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"cardhour/config"
	"cardhour/server/area"
	"cardhour/store"
	"cardhour/store/storetest"
	"cardhour/telemetry"
)

// staleWorld is a store with two registered cards, each with an unbooked
// episode opened before this process started (by the last run, or by the
// replica that held the alerts lease until it restarted), and a fresh live
// side that has not seen either card yet.
type staleWorld struct {
	st      *store.Store
	l       *live
	uuids   [2]string
	cards   [2]int64
	started time.Time
}

func newStaleWorld(t *testing.T) *staleWorld {
	t.Helper()
	st := storetest.MustOpen(t, store.SQLite)
	as := store.WithActor(context.Background(), store.Actor{Username: "test"})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	ct, err := st.CreateCardType(as, store.CardTypeInput{Name: "H100", VRAMGiB: 80, TFLOPSBF16: 989, PriceFen: 1500})
	must(err)
	host, err := st.CreateHost(as, store.HostInput{Name: "gpu-01"})
	must(err)
	w := &staleWorld{st: st, uuids: [2]string{"GPU-0000000a-0000-0000-0000-000000000000", "GPU-0000000b-0000-0000-0000-000000000000"}}
	for i, u := range w.uuids {
		c, err := st.CreateCard(as, store.CardInput{UUID: u, GPUIndex: i, HostID: host.ID, CardTypeID: ct.ID})
		must(err)
		w.cards[i] = c.ID
		_, _, err = st.OpenAlert(as, store.AlertInput{Kind: store.AlertUnbooked, CardID: c.ID, Value: 100, At: time.Now().Add(-10 * time.Minute)})
		must(err)
	}
	cfg, err := config.Load("serve", nil, func(k string) string { return map[string]string{"CARDHOUR_SIMULATOR": "false"}[k] }, io.Discard)
	must(err)
	a := New(area.Deps{Store: st, Config: cfg, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}, prometheus.NewRegistry())
	must(a.live.refreshInventory(as))
	w.l, w.started = a.live, time.Now()
	return w
}

// inUse is a sample of card i under load (the recorded H100's figures).
func (w *staleWorld) inUse(i int) {
	util, mem, total := 100.0, 19818.0, 81559.0
	now := time.Now()
	w.l.fleet.Ingest([]telemetry.Sample{{UUID: w.uuids[i], At: now, UtilPct: &util, MemUsedMiB: &mem, MemTotalMiB: &total}}, telemetry.SourceAgent, now)
}

// open tells which cards' unbooked episodes are open.
func (w *staleWorld) open(t *testing.T) [2]bool {
	t.Helper()
	alerts, err := w.st.FindOpenAlerts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out [2]bool
	for _, a := range alerts {
		for i, id := range w.cards {
			if a.Kind == store.AlertUnbooked && a.CardID != nil && *a.CardID == id {
				out[i] = true
			}
		}
	}
	return out
}

func (w *staleWorld) round(t *testing.T) {
	t.Helper()
	if err := w.l.persistEvents(context.Background(), w.started); err != nil {
		t.Fatal(err)
	}
}

// A process that takes the alerts lease right after its start does not
// close the episodes open then before its fleet has had the offline window
// to see their cards: the holder may have restarted, not the portal, and
// the other replicas still raise them. Then it closes those its fleet does
// not raise (card b never reported: left open by the last run) and keeps
// the one it does (card a).
func TestFreshAlertsHolderClosesOnlyWhatItsFleetDoesNotRaise(t *testing.T) {
	w := newStaleWorld(t)
	w.round(t) // the first round, before any sample reached this fleet
	if got := w.open(t); got != [2]bool{true, true} {
		t.Fatalf("after the fresh holder's first round, open episodes (a, b) = %v, want both still open", got)
	}
	w.inUse(0)
	w.round(t)
	if got := w.open(t); got != [2]bool{true, true} {
		t.Fatalf("within the offline window, open episodes (a, b) = %v, want both still open", got)
	}
	w.l.staleUntil = time.Now() // the offline window (and its margin) has passed
	w.round(t)
	if got := w.open(t); got != [2]bool{true, false} {
		t.Fatalf("after the offline window, open episodes (a, b) = %v, want a's (raised) open, b's (silent) closed", got)
	}
	alerts, err := w.st.FindOpenAlerts(context.Background())
	if err != nil || len(alerts) != 1 {
		t.Fatalf("open alerts %+v %v, want one", alerts, err)
	}
	if n := storetest.MustCount(t, w.st, "telemetry_alerts"); n != 2 {
		t.Errorf("%d alert rows, want the two episodes, none opened anew", n)
	}
}

// A process that saw an episode start while another held the alerts lease
// (its event dropped, as every non-holder's is) and takes the lease soon
// after its start keeps that episode: its fleet raises it, and will not
// tell of it again.
func TestAlertsHolderKeepsTheEpisodesItsFleetRaisedBeforeItHeldTheLease(t *testing.T) {
	w := newStaleWorld(t)
	w.inUse(0)
	if err := w.l.dropEvents(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.round(t)
	w.l.staleUntil = time.Now()
	w.round(t)
	if got := w.open(t); got != [2]bool{true, false} {
		t.Fatalf("open episodes (a, b) = %v, want a's (raised, its event dropped) open, b's closed", got)
	}
}
