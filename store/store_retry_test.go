package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

// crosswise runs two transactions that lock two card types in opposite
// orders, each waiting on its first try until the other holds its first
// row: InnoDB kills one as the deadlock victim.
func crosswise(t *testing.T, st *store.Store, retry bool) (tries [2]int, fresh [2]bool, errl [2]error) {
	t.Helper()
	a, b := MustCardType(t, st, "A100"), MustCardType(t, st, "H20")
	var holding sync.WaitGroup
	holding.Add(2)
	between := func(try int) {
		if try == 1 {
			holding.Done()
			holding.Wait()
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i, order := range [2][2]int64{{a.ID, b.ID}, {b.ID, a.ID}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tries[i], fresh[i], errl[i] = st.LockRowsCrosswise(ctx, retry, order[0], order[1], between)
		}()
	}
	wg.Wait()
	return tries, fresh, errl
}

// TestDeadlockVictimRetried: of two transactions deadlocking on MariaDB,
// the victim runs again from the start, with fresh notes, and both commit.
func TestDeadlockVictimRetried(t *testing.T) {
	storetest.SkipUnlessMySQL(t)
	st := storetest.MustOpen(t, store.MySQL)
	tries, fresh, errl := crosswise(t, st, true)
	for i := range errl {
		if errl[i] != nil {
			t.Errorf("transaction %d: %v, want a commit after the retry", i, errl[i])
		}
		if !fresh[i] {
			t.Errorf("transaction %d: a try began with an earlier try's notes", i)
		}
	}
	if tries[0]+tries[1] < 3 {
		t.Errorf("tries %v: want one transaction run again (no deadlock happened?)", tries)
	}
}

// TestDeadlockWithoutRetryReachesCaller: run once, the victim's error
// reaches its caller as the busy conflict the retry exists to absorb.
func TestDeadlockWithoutRetryReachesCaller(t *testing.T) {
	storetest.SkipUnlessMySQL(t)
	st := storetest.MustOpen(t, store.MySQL)
	tries, _, errl := crosswise(t, st, false)
	failed := 0
	for i, err := range errl {
		if tries[i] != 1 {
			t.Errorf("transaction %d ran %d times, want once", i, tries[i])
		}
		if err != nil {
			failed++
			storetest.AssertCode(t, err, errs.Conflict, "error.busy")
		}
	}
	if failed != 1 {
		t.Errorf("%d transactions failed, want the one deadlock victim (errors %v)", failed, errl)
	}
}
