// Package booking is the area of taking cards (按需取用，用完早释放):
// task baselines (priority, card-hour estimate, data readiness, VRAM and
// precision), the VRAM estimator that picks the card type, bookings now or
// ahead with their preview, release, cancel, extend and approval, the
// booking home with its notices, and the loop that moves bookings along
// with the clock.
package booking

import (
	"cardhour/server/area"
)

// Area serves tasks, the estimator and bookings.
type Area struct {
	area.Deps
}

// New builds the area.
func New(d area.Deps) *Area { return &Area{Deps: d} }
