package booking

import (
	"context"
	"time"

	"cardhour/errs"
	"cardhour/store"
)

// tickEvery is how often bookings move along with the clock: confirmed to
// active at their start, to completed at their end, and queued requests
// onto freed cards.
const tickEvery = 10 * time.Second

// Run calls store.Tick until ctx ends. Every process runs one; Tick is
// idempotent and serialised per card type, so several processes agree.
func (a *Area) Run(ctx context.Context) {
	t := time.NewTicker(tickEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		res, err := a.store.Tick(ctx)
		switch {
		case err == nil:
			if res != (store.TickResult{}) {
				a.log.Debug("bookings ticked", "activated", res.Activated, "completed", res.Completed, "expired", res.Expired, "back_to_data", res.BackToData)
			}
		case errs.Is(err, errs.Unavailable):
			a.log.Warn("booking tick skipped: database unavailable", "err", err)
		default:
			a.log.Error("booking tick failed", "err", err)
		}
	}
}
