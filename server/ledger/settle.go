package ledger

import (
	"context"
	"time"

	"cardhour/errs"
	"cardhour/store"
)

// ledgerLookback bounds the ticker's search for newly finished bookings
// once a full pass has run: a booking that finished more than this long ago
// had many passes to be picked up.
const ledgerLookback = 7 * 24 * time.Hour

// settleEvery is how often the ledger pass runs.
const settleEvery = 10 * time.Second

// Run keeps the ledger settled until ctx ends: it writes the rounds of
// bookings that finished, refreshes the usage of rounds still open to
// telemetry, and cuts months in the portal's zone. Its first successful
// pass searches every booking (the process may have been down while some
// finished, or the zone may have changed); later passes only look back
// ledgerLookback.
func (a *Area) Run(ctx context.Context) {
	t := time.NewTicker(settleEvery)
	defer t.Stop()
	full := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		full = a.settle(ctx, full) || full
	}
}

// settle runs one pass and reports whether it succeeded.
func (a *Area) settle(ctx context.Context, full bool) bool {
	o := store.LedgerPassOptions{Zone: a.cfg.TZ}
	if full {
		o.Since = time.Now().Add(-ledgerLookback)
	}
	res, err := a.store.SettleLedger(ctx, o)
	switch {
	case err == nil:
		if res != (store.LedgerPass{}) {
			a.log.Debug("ledger settled", "added", res.Added, "refreshed", res.Refreshed, "settled", res.Settled, "recut", res.Recut)
		}
		return true
	case errs.Is(err, errs.Unavailable), errs.Is(err, errs.Conflict):
		a.log.Warn("ledger pass skipped", "err", err)
	default:
		a.log.Error("ledger pass failed", "err", err)
	}
	return false
}
