package server

import (
	"context"

	"cardhour/telemetry"
)

// Hooks for the external tests: what the loops would do on their next
// tick, done now.

// ParkUnknownNow records the unregistered cards seen so far.
func (s *Server) ParkUnknownNow(ctx context.Context) error { return s.live.parkUnknown(ctx) }

// LiveCard is one card of the live state.
func (s *Server) LiveCard(uuid string) telemetry.CardView {
	v, _ := s.live.fleet.Card(uuid)
	return v
}
