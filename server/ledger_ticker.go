package server

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

// ledgerSettler returns the ledger pass the ticker runs after moving the
// bookings: it writes the rounds of bookings that finished, refreshes the
// usage of rounds still open to telemetry, and cuts months in the portal's
// zone. Its first successful run searches every booking (the process may
// have been down while some finished, or the zone may have changed); later
// runs only look back ledgerLookback.
func (s *Server) ledgerSettler() func(ctx context.Context) {
	full := false
	return func(ctx context.Context) {
		o := store.LedgerPassOptions{Zone: s.cfg.TZ}
		if full {
			o.Since = time.Now().Add(-ledgerLookback)
		}
		res, err := s.store.SettleLedger(ctx, o)
		switch {
		case err == nil:
			full = true
			if res != (store.LedgerPass{}) {
				s.log.Debug("ledger settled", "added", res.Added, "refreshed", res.Refreshed, "settled", res.Settled, "recut", res.Recut)
			}
		case errs.Is(err, errs.Unavailable), errs.Is(err, errs.Conflict):
			s.log.Warn("ledger pass skipped", "err", err)
		default:
			s.log.Error("ledger pass failed", "err", err)
		}
	}
}
