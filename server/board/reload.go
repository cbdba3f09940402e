package board

import (
	"context"
	"sync"
	"time"

	"cardhour/errs"
)

// reloader runs one load (of the inventory, of the holds) at a time for
// any number of callers. Every push of a card the live state does not know,
// and every push right after start, wants the inventory loaded; with
// 10,000 new cards arriving in hundreds of pushes at once, each loading it
// for itself was a storm of whole reloads, each slowing the next. Now a
// caller that finds a load in flight that is recent enough for it waits
// for that one; one that needs a later load waits for the next, which
// starts when this one ends and serves everyone who asked meanwhile. Two
// loads start at least gap apart, so even callers that each insist on a
// new load get at most one per gap.
type reloader struct {
	load func(context.Context) error
	gap  time.Duration

	mu      sync.Mutex
	running *reloadRound // in flight, or waiting out the gap
	next    *reloadRound // to start when running ends
	fresh   time.Time    // when the last load that succeeded started
	started time.Time    // when the last load started
}

// reloadRound is one load and the callers waiting for it.
type reloadRound struct {
	ctx   context.Context // the values of the caller that asked first, not its end
	start time.Time       // when it starts: planned by begin, the real moment once it runs
	done  chan struct{}
	err   error
	calls int // callers that waited for it
}

// reloadTimeout bounds a load, which runs for all its callers and so is
// not cancelled with the one that happened to start it.
const reloadTimeout = 30 * time.Second

// within returns once a load that started no more than maxAge ago has
// ended, starting one if need be, with that load's error; maxAge 0 asks
// for a load that starts after the call. A caller whose ctx ends stops
// waiting; the load goes on for the others.
func (r *reloader) within(ctx context.Context, maxAge time.Duration) error {
	r.mu.Lock()
	now := time.Now()
	oldest := now.Add(-maxAge)
	if maxAge > 0 && !r.fresh.IsZero() && !r.fresh.Before(oldest) {
		r.mu.Unlock()
		return nil
	}
	var round *reloadRound
	switch {
	// In flight and recent enough, or yet to start (waiting out the gap):
	// it reads what was committed before this call.
	case r.running != nil && (maxAge > 0 && !r.running.start.Before(oldest) || r.running.start.After(now)):
		round = r.running
	case r.running != nil:
		if r.next == nil {
			r.next = &reloadRound{ctx: context.WithoutCancel(ctx), done: make(chan struct{})}
		}
		round = r.next
	default:
		round = &reloadRound{ctx: context.WithoutCancel(ctx), done: make(chan struct{})}
		r.begin(round, now)
	}
	round.calls++
	r.mu.Unlock()
	select {
	case <-round.done:
		return round.err
	case <-ctx.Done():
		return errs.Wrap(errs.Unavailable, "board.reload", ctx.Err())
	}
}

// begin makes round the running one, to start no sooner than gap after
// the last; r.mu must be held.
func (r *reloader) begin(round *reloadRound, now time.Time) {
	round.start = now
	if at := r.started.Add(r.gap); at.After(now) {
		round.start = at
	}
	r.running = round
	go r.run(round)
}

func (r *reloader) run(round *reloadRound) {
	time.Sleep(time.Until(round.start))
	// The moment it really starts: what it reads was committed before.
	r.mu.Lock()
	round.start = time.Now()
	r.started = round.start
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(round.ctx, reloadTimeout)
	err := r.load(ctx)
	cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	round.err = err
	if err == nil && round.start.After(r.fresh) {
		r.fresh = round.start
	}
	close(round.done)
	r.running = nil
	if next := r.next; next != nil {
		r.next = nil
		r.begin(next, time.Now())
	}
}
