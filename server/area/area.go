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
	// Cluster is what the replicas share (samples, invalidations, rate
	// limits); cluster.Local when there is one process.
	Cluster cluster.Cluster
}

// Job is background work an area does every Every until the portal stops.
type Job struct {
	Name  string
	Every time.Duration
	Run   func(ctx context.Context) error
}

// Loop runs j every j.Every until ctx ends. A failure is logged by its
// weight — an unreachable database or object store is a warning (it
// comes back by itself), anything else an error — and the next round
// tries again.
func Loop(ctx context.Context, log *slog.Logger, j Job) {
	t := time.NewTicker(j.Every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := j.Run(ctx); err != nil && ctx.Err() == nil {
			if errs.Is(err, errs.Unavailable) {
				log.Warn(j.Name+" skipped: unavailable", "err", err)
			} else {
				log.Error(j.Name+" failed", "err", err)
			}
		}
	}
}
