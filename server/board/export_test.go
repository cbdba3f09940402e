package board

import (
	"context"

	"cardhour/telemetry"
)

// Hooks for the external tests: what the loops would do on their next
// tick, done now.

// ParkUnknownNow records the unregistered cards seen so far.
func (a *Area) ParkUnknownNow(ctx context.Context) error { return a.live.parkUnknown(ctx) }

// LiveCard is one card of the live state.
func (a *Area) LiveCard(uuid string) telemetry.CardView {
	v, _ := a.live.fleet.Card(uuid)
	return v
}
