package area

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"cardhour/store"
)

// keeper takes and renews one lease for a job's loop, on its own rhythm:
// a job that runs every minute still renews every few seconds, and a long
// round does not let the lease lapse underneath it.
type keeper struct {
	st     *store.Store
	log    *slog.Logger
	name   string
	holder string

	mu sync.Mutex
	// until is when this process stops trusting that it holds the lease
	// (its own clock: the last successful take plus the TTL less a margin);
	// zero when it does not hold it.
	until time.Time
	// lost is closed when the lease is lost; rounds under it are cancelled.
	lost chan struct{}
}

func newKeeper(st *store.Store, log *slog.Logger, name, holder string) *keeper {
	return &keeper{st: st, log: log, name: name, holder: holder}
}

// run takes the lease now and every LeaseRenew until ctx ends, then gives
// it up so another replica takes over at once.
func (k *keeper) run(ctx context.Context) {
	t := time.NewTicker(LeaseRenew)
	defer t.Stop()
	for {
		k.take(ctx)
		select {
		case <-ctx.Done():
			k.drop()
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			defer cancel()
			if err := k.st.ReleaseLease(rctx, k.name, k.holder); err != nil {
				k.log.Warn("lease not released: another replica takes over when it lapses", "lease", k.name, "err", err)
			}
			return
		case <-t.C:
		}
	}
}

func (k *keeper) take(ctx context.Context) {
	start := time.Now()
	held, err := k.st.TakeLease(ctx, k.name, k.holder, LeaseTTL)
	if err != nil {
		if ctx.Err() == nil {
			k.log.Warn("lease not renewed", "lease", k.name, "err", err)
		}
		// Still ours until the last renewal lapses (until), unless that passed.
		k.mu.Lock()
		expired := !k.until.IsZero() && time.Now().After(k.until)
		k.mu.Unlock()
		if expired {
			k.drop()
		}
		return
	}
	if !held {
		k.drop()
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.until.IsZero() {
		k.log.Info("lease taken: this replica runs the job", "lease", k.name, "holder", k.holder)
		k.lost = make(chan struct{})
	}
	// A margin for clocks and for the time the statement took.
	k.until = start.Add(LeaseTTL - LeaseRenew)
}

func (k *keeper) drop() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.until.IsZero() {
		return
	}
	k.log.Info("lease lost: another replica runs the job", "lease", k.name, "holder", k.holder)
	k.until = time.Time{}
	close(k.lost)
}

// heldContext is ctx for one round while the lease is held, cancelled if
// it is lost meanwhile; nil when it is not held.
func (k *keeper) heldContext(ctx context.Context) (context.Context, func()) {
	k.mu.Lock()
	held := !k.until.IsZero() && time.Now().Before(k.until)
	lost := k.lost
	k.mu.Unlock()
	if !held {
		return nil, func() {}
	}
	rctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-lost:
			cancel()
		case <-rctx.Done():
		}
	}()
	return rctx, cancel
}
