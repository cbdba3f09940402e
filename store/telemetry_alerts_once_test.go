package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cardhour/store"
	"cardhour/store/storetest"
)

// Replicas seeing one episode start at the same moment open it once: the
// open episode's key is unique. Closed, it may open again.
func TestTwoStoresOpeningOneAlertOpenItOnce(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
		one, two := twoStores(t, dialect, clock)
		w := buildBookingWorld(t, one, clock, 1)
		ctx := context.Background()
		card := w.cards[0].ID
		for episode := range 3 {
			at := clock.Now()
			var wg sync.WaitGroup
			var created atomic.Int32
			ids := make([]int64, 8)
			for i, st := range []*store.Store{one, two, one, two, one, two, one, two} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					a, c, err := st.OpenAlert(ctx, store.AlertInput{Kind: store.AlertUnbooked, CardID: card, Value: 50, At: at})
					if err != nil {
						t.Error(err)
						return
					}
					ids[i] = a.ID
					if c {
						created.Add(1)
					}
				}()
			}
			wg.Wait()
			if n := created.Load(); n != 1 {
				t.Errorf("episode %d: opened %d times by two stores, want once", episode, n)
			}
			for _, id := range ids[1:] {
				if id != ids[0] {
					t.Errorf("episode %d: openers got alerts %v, want one", episode, ids)
					break
				}
			}
			open, err := one.FindOpenAlerts(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(open) != 1 {
				t.Errorf("episode %d: %d open alerts, want 1", episode, len(open))
			}
			if err := two.CloseAlert(ctx, store.AlertUnbooked, card, 0, 0, at.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Hour) // past the reopen window: a new episode
		}
		if n := storetest.MustCount(t, one, "telemetry_alerts"); n != 3 {
			t.Errorf("%d alert rows for 3 episodes", n)
		}
	})
}
