package board

import (
	"context"
	"time"

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

// SaveRollupsNow writes every minute rollup and usage the fleet holds.
func (a *Area) SaveRollupsNow(ctx context.Context) error { return a.live.saveRollups(ctx, time.Time{}) }

// RefreshNow reloads the inventory and the holds, as the loops would.
func (a *Area) RefreshNow(ctx context.Context) error {
	if err := a.live.refreshInventory(ctx); err != nil {
		return err
	}
	return a.live.refreshHolds(ctx)
}

// ProcessEventsNow turns the alert episodes the fleet saw into alerts.
func (a *Area) ProcessEventsNow(ctx context.Context) error { return a.live.processEvents(ctx) }

// SetCredentialCheck sets how often open sockets' credentials are asked
// again unprompted; call it before Start.
func (a *Area) SetCredentialCheck(d time.Duration) { a.live.credEvery = d }

// SetInventoryNow puts metas in the live state as if the inventory loop had
// loaded them: a benchmark's 10,000 cards without 10,000 database rows.
func (a *Area) SetInventoryNow(metas []telemetry.CardMeta) { a.live.fleet.SetInventory(metas) }

// IngestNow feeds samples into the live state as a push would.
func (a *Area) IngestNow(samples []telemetry.Sample) telemetry.IngestResult {
	return a.live.fleet.Ingest(samples, telemetry.SourceAgent, time.Now())
}

// SetHoldsNow says which booking holds which card, as the holds loop would.
func (a *Area) SetHoldsNow(holds map[string]telemetry.Hold) { a.live.fleet.SetHolds(holds) }

// Snapshot is every card of the live state.
func (a *Area) Snapshot() []telemetry.CardView { return a.live.fleet.Snapshot() }
