// Package ledger is the area of the true ledger (记真实账): each finished
// round's card type and card-hours against its output, a task's ledger,
// the monthly cost-versus-output report and the yearly baseline, with
// their CSV/XLSX/JSON exports, and the pass that settles finished bookings
// into rounds.
package ledger

import (
	"cardhour/server/area"
)

// Area serves the ledger and the reports.
type Area struct {
	area.Deps
}

// New builds the area.
func New(d area.Deps) *Area { return &Area{Deps: d} }
