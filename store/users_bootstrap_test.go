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

// Replicas starting together on an empty database: each makes sure of the
// admin account, one creates it, none fails.
func TestEnsureAdminFromTwoStoresAtOnce(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
		one, two := twoStores(t, dialect, clock)
		var wg sync.WaitGroup
		var created atomic.Int32
		for _, st := range []*store.Store{one, two, one, two} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := st.EnsureAdmin(context.Background(), "correct horse battery")
				if err != nil {
					t.Error(err)
				}
				if c {
					created.Add(1)
				}
			}()
		}
		wg.Wait()
		if n := created.Load(); n != 1 {
			t.Errorf("admin created %d times, want once", n)
		}
		if n := storetest.MustCount(t, one, "users"); n != 1 {
			t.Errorf("%d users, want the admin alone", n)
		}
	})
}
