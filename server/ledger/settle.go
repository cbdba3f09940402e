package ledger

import (
	"context"
	"time"

	"cardhour/errs"
	"cardhour/server/area"
	"cardhour/store"
)

// ledgerLookback bounds the ticker's search for newly finished bookings
// once a full pass has run: a booking that finished more than this long ago
// had many passes to be picked up.
const ledgerLookback = 7 * 24 * time.Hour

// settleEvery is how often the ledger pass runs.
const settleEvery = 10 * time.Second

// Jobs is the ledger pass: it writes the rounds of bookings that
// finished, refreshes the usage of rounds still open to telemetry, and
// cuts months in the portal's zone. Its first successful pass searches
// every booking (the process may have been down while some finished, or
// the zone may have changed); later passes only look back ledgerLookback.
func (a *Area) Jobs() []area.Job {
	full := false
	return []area.Job{{Name: "ledger pass", Every: settleEvery, Run: func(ctx context.Context) error {
		err := a.settle(ctx, full)
		switch {
		case err == nil:
			full = true
		case errs.Is(err, errs.Conflict):
			// Another process settling the same rounds at the same moment
			// is no failure: the next pass picks them up (and searches as
			// widely as this one would have).
			a.Log.Warn("ledger pass skipped", "err", err)
			return nil
		}
		return err
	}, Once: "ledger pass"}}
}

// settle runs one pass.
func (a *Area) settle(ctx context.Context, full bool) error {
	o := store.LedgerPassOptions{Zone: a.Config.TZ}
	if full {
		o.Since = time.Now().Add(-ledgerLookback)
	}
	res, err := a.Store.SettleLedger(ctx, o)
	if err == nil && res != (store.LedgerPass{}) {
		a.Log.Debug("ledger settled", "added", res.Added, "refreshed", res.Refreshed, "settled", res.Settled, "recut", res.Recut)
	}
	return err
}
