package area_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cardhour/server/area"
	"cardhour/store"
	"cardhour/store/storetest"
)

// Two replicas running one job under a lease: only the holder runs it; when
// it stops, the other takes the job over within a renewal.
func TestJobUnderLeaseRunsOnOneReplica(t *testing.T) {
	t.Parallel()
	st := storetest.MustOpen(t, store.SQLite)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	var runs [2]atomic.Int32
	var elses [2]atomic.Int32
	ctxs := make([]context.CancelFunc, 2)
	var wg sync.WaitGroup
	start := func(i int) {
		ctx, cancel := context.WithCancel(context.Background())
		ctxs[i] = cancel
		wg.Add(1)
		go func() {
			defer wg.Done()
			area.Loop(ctx, area.Deps{Store: st, Log: log, Holder: []string{"one", "two"}[i]}, area.Job{
				Name: "tick", Every: 50 * time.Millisecond, Once: "tick",
				Run:  func(context.Context) error { runs[i].Add(1); return nil },
				Else: func(context.Context) error { elses[i].Add(1); return nil },
			})
		}()
	}
	start(0)
	waitFor(t, func() bool { return runs[0].Load() > 0 })
	start(1)
	waitFor(t, func() bool { return elses[1].Load() > 5 })
	if n := runs[1].Load(); n != 0 {
		t.Fatalf("the replica without the lease ran the job %d times", n)
	}
	ctxs[0]() // the holder stops (and gives the lease up)
	began := time.Now()
	waitFor(t, func() bool { return runs[1].Load() > 0 })
	if d := time.Since(began); d > area.LeaseTTL+area.LeaseRenew {
		t.Errorf("taken over after %s", d)
	}
	ctxs[1]()
	wg.Wait()
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(area.LeaseTTL + 2*area.LeaseRenew)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
