package store_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cardhour/store"
	"cardhour/store/storetest"
)

// twoStores opens two stores on one fresh, migrated database: two replicas.
func twoStores(t *testing.T, dialect string, clock *storetest.Clock) (*store.Store, *store.Store) {
	t.Helper()
	var dsn string
	switch dialect {
	case store.SQLite:
		dsn = filepath.Join(t.TempDir(), "shared.db")
	default:
		dsn, _ = storetest.MySQLDSN(t)
	}
	open := func() *store.Store {
		st, err := store.Open(context.Background(), store.Options{Dialect: dialect, DSN: dsn, Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = st.Close() })
		return st
	}
	one := open()
	if err := one.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return one, open()
}

func mustTake(t *testing.T, st *store.Store, holder string, want bool) {
	t.Helper()
	held, err := st.TakeLease(context.Background(), "booking tick", holder, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if held != want {
		t.Fatalf("%s: held = %v, want %v", holder, held, want)
	}
}

// A lease is one holder's until it lapses or is released; then the other
// takes it over.
func TestLeaseHeldByOneUntilItLapses(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
		one, two := twoStores(t, dialect, clock)
		mustTake(t, one, "a", true)
		mustTake(t, two, "b", false)
		mustTake(t, one, "a", true) // renewed in the same microsecond
		clock.Advance(9 * time.Second)
		mustTake(t, two, "b", false)
		mustTake(t, one, "a", true) // renewed: now until +19 s
		clock.Advance(9 * time.Second)
		mustTake(t, two, "b", false)
		clock.Advance(2 * time.Second) // a's lease lapsed: a died
		mustTake(t, two, "b", true)
		mustTake(t, one, "a", false)
		if err := two.ReleaseLease(context.Background(), "booking tick", "a"); err != nil { // not a's to give up
			t.Fatal(err)
		}
		mustTake(t, one, "a", false)
		if err := two.ReleaseLease(context.Background(), "booking tick", "b"); err != nil {
			t.Fatal(err)
		}
		mustTake(t, one, "a", true) // released: taken over at once
		ls, err := one.FindLeases(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(ls) != 1 || ls[0].Holder != "a" || !ls[0].ExpiresAt.Equal(clock.Now().Add(10*time.Second)) {
			t.Errorf("leases = %+v, want booking tick held by a for 10 s", ls)
		}
	})
}

// Holders on two stores racing for a free, then lapsed, lease: exactly one
// holds it each time.
func TestLeaseRaceHasOneWinner(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
		one, two := twoStores(t, dialect, clock)
		for round := range 20 {
			var wg sync.WaitGroup
			var winners atomic.Int32
			for i, st := range []*store.Store{one, two, one, two, one, two} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					held, err := st.TakeLease(context.Background(), "ledger pass", fmt.Sprintf("holder-%d-%d", round, i), 10*time.Second)
					if err != nil {
						t.Error(err)
					}
					if held {
						winners.Add(1)
					}
				}()
			}
			wg.Wait()
			if n := winners.Load(); n != 1 {
				t.Fatalf("round %d: %d holders at once, want 1", round, n)
			}
			clock.Advance(11 * time.Second)
		}
	})
}
