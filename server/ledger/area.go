// Package ledger is the area of the true ledger (记真实账): each finished
// round's card type and card-hours against its output, a task's ledger,
// the monthly cost-versus-output report and the yearly baseline, with
// their CSV/XLSX/JSON exports, and the pass that settles finished bookings
// into rounds.
package ledger

import (
	"log/slog"

	"cardhour/config"
	"cardhour/server/response"
	"cardhour/store"
)

// Area serves the ledger and the reports.
type Area struct {
	store *store.Store
	cfg   config.Config
	log   *slog.Logger
	pages *response.Pages
}

// New builds the area.
func New(st *store.Store, cfg config.Config, log *slog.Logger, pages *response.Pages) *Area {
	return &Area{store: st, cfg: cfg, log: log, pages: pages}
}
