package board

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cardhour/errs"
)

// blockingLoad is a load that counts its runs and, while held, waits.
type blockingLoad struct {
	runs    atomic.Int32
	started chan struct{} // one send per run
	release chan struct{} // closed to let the runs end
	err     error
}

func newBlockingLoad() *blockingLoad {
	return &blockingLoad{started: make(chan struct{}, 100), release: make(chan struct{})}
}

func (b *blockingLoad) load(context.Context) error {
	b.runs.Add(1)
	b.started <- struct{}{}
	<-b.release
	return b.err
}

// callers runs n callers of within(maxAge) at once and returns their
// errors once all are back.
func callers(r *reloader, n int, maxAge time.Duration) <-chan error {
	out := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out <- r.within(context.Background(), maxAge)
		}()
	}
	go func() { wg.Wait(); close(out) }()
	return out
}

func TestReloaderCallersAtOnceShareOneLoad(t *testing.T) {
	b := newBlockingLoad()
	r := &reloader{load: b.load}
	done := callers(r, 50, 5*time.Second)
	<-b.started
	close(b.release)
	for err := range done {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := b.runs.Load(); n != 1 {
		t.Errorf("50 callers at once: %d loads, want 1", n)
	}
	// Recent enough for the next caller: no load at all.
	if err := r.within(context.Background(), 5*time.Second); err != nil || b.runs.Load() != 1 {
		t.Errorf("a caller right after: %v, %d loads, want none more", err, b.runs.Load())
	}
}

func TestReloaderCallersDuringALoadThatMustBeLaterShareTheNext(t *testing.T) {
	b := newBlockingLoad()
	r := &reloader{load: b.load}
	first := callers(r, 1, 0)
	<-b.started
	// These need a load that starts after them: not the one in flight.
	later := callers(r, 30, 0)
	for r.queued() < 30 {
		time.Sleep(time.Millisecond)
	}
	close(b.release)
	for _, ch := range []<-chan error{first, later} {
		for err := range ch {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := b.runs.Load(); n != 2 {
		t.Errorf("one load in flight, 30 callers that need a later one: %d loads in all, want 2", n)
	}
}

func TestReloaderStartsLoadsAGapApart(t *testing.T) {
	var starts []time.Time
	r := &reloader{gap: 50 * time.Millisecond, load: func(context.Context) error {
		starts = append(starts, time.Now())
		return nil
	}}
	for range 3 {
		if err := r.within(context.Background(), 0); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i < len(starts); i++ {
		if d := starts[i].Sub(starts[i-1]); d < 50*time.Millisecond {
			t.Errorf("loads %d and %d started %s apart, want at least the gap", i-1, i, d)
		}
	}
}

func TestReloaderHandsAFailureToItsCallersAndTriesAgainAfter(t *testing.T) {
	b := newBlockingLoad()
	b.err = errs.E(errs.Unavailable, "test.load", "db.down")
	r := &reloader{load: b.load}
	done := callers(r, 5, 5*time.Second)
	<-b.started
	for r.inFlight() < 5 {
		time.Sleep(time.Millisecond)
	}
	close(b.release)
	for err := range done {
		if !errors.Is(err, b.err) {
			t.Errorf("a caller of the failed load got %v, want its error", err)
		}
	}
	b.err = nil
	go func() { <-b.started }()
	if err := r.within(context.Background(), 5*time.Second); err != nil || b.runs.Load() != 2 {
		t.Errorf("after a failure: %v, %d loads, want a new one that succeeds", err, b.runs.Load())
	}
}

func TestReloaderCallerThatGivesUpLeavesTheLoadToTheOthers(t *testing.T) {
	b := newBlockingLoad()
	r := &reloader{load: b.load}
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() { gaveUp <- r.within(ctx, time.Minute) }()
	<-b.started
	other := callers(r, 1, time.Minute)
	cancel()
	if err := <-gaveUp; errs.CodeOf(err) != errs.Unavailable || !errors.Is(err, context.Canceled) {
		t.Errorf("the caller that gave up: %v, want unavailable wrapping its context's end", err)
	}
	close(b.release)
	if err := <-other; err != nil || b.runs.Load() != 1 {
		t.Errorf("the other caller: %v after %d loads, want the one load's success", err, b.runs.Load())
	}
}

// inFlight is how many callers wait for the running round.
func (r *reloader) inFlight() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.running == nil {
		return 0
	}
	return r.running.calls
}

// queued is how many callers wait for the next round.
func (r *reloader) queued() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.next == nil {
		return 0
	}
	return r.next.calls
}
