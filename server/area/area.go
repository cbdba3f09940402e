// Package area is what the kernel gives every area of the portal and what
// it asks of one: the dependencies an area is built from (Deps), and the
// background work an area does (Job), which the kernel starts, runs on
// its interval and stops with the portal.
package area

import (
	"context"
	"log/slog"
	"time"

	"cardhour/cluster"
	"cardhour/config"
	"cardhour/errs"
	"cardhour/server/response"
	"cardhour/store"
)

// Deps are what every area is built from.
type Deps struct {
	Store  *store.Store
	Config config.Config
	Log    *slog.Logger
	Pages  *response.Pages
	// Holder names this process in the leases its jobs take
	// (store.NewHolder); empty, Loop makes one.
	Holder string
	// Cluster is what the replicas share (samples, invalidations, rate
	// limits); cluster.Local when there is one process.
	Cluster cluster.Cluster
}

// Job is background work an area does every Every until the portal stops.
type Job struct {
	Name  string
	Every time.Duration
	Run   func(ctx context.Context) error
	// Once names the lease under which the job runs when it must run once
	// across the replicas on one database: only the replica holding the
	// lease runs it. Empty, every replica runs the job.
	Once string
	// Else, with Once, is what a replica not holding the lease does each
	// round instead (drop what the holder keeps); nil, nothing.
	Else func(ctx context.Context) error
}

// Lease timing: a holder renews every LeaseRenew and holds for LeaseTTL
// from its last renewal; one that dies is replaced within
// LeaseTTL + LeaseRenew.
const (
	LeaseTTL   = 10 * time.Second
	LeaseRenew = 3 * time.Second
)

// Loop runs j every j.Every until ctx ends. A failure is logged by its
// weight — an unreachable database or object store is a warning (it
// comes back by itself), anything else an error — and the next round
// tries again. A job with Once runs only while this process holds its
// lease (see keepLease); a round under a lease that is lost meanwhile
// is cancelled.
func Loop(ctx context.Context, d Deps, j Job) {
	log := d.Log
	var lease *keeper
	if j.Once != "" {
		holder := d.Holder
		if holder == "" {
			holder = store.NewHolder()
		}
		lease = newKeeper(d.Store, log, j.Once, holder)
		done := make(chan struct{})
		defer func() { <-done }()
		go func() {
			defer close(done)
			lease.run(ctx)
		}()
	}
	t := time.NewTicker(j.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		run, rctx, stop := j.Run, ctx, func() {}
		if lease != nil {
			if rctx, stop = lease.heldContext(ctx); rctx == nil {
				if j.Else == nil {
					continue
				}
				run, rctx = j.Else, ctx
			}
		}
		err := run(rctx)
		stop()
		if err != nil && ctx.Err() == nil && rctx.Err() == nil {
			if errs.Is(err, errs.Unavailable) {
				log.Warn(j.Name+" skipped: unavailable", "err", err)
			} else {
				log.Error(j.Name+" failed", "err", err)
			}
		}
	}
}
