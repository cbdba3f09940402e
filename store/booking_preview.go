package store

import (
	"context"
	"time"

	"cardhour/schedule"
)

// BookingPreview is what CreateBooking would do with a request, worked out
// without writing, so the form can show the cost before the user commits
// ("取用前先算清资源账单").
type BookingPreview struct {
	Task     Task
	CardType CardType
	// Start and End are the window as CreateBooking would store it (a start
	// a little in the past becomes now).
	Start, End  time.Time
	Kind        string
	CardSeconds int64
	CostFen     int64
	// FreeCards counts the type's active cards no booking holds at any
	// moment of the window; TotalCards counts its active cards.
	FreeCards, TotalCards int
	// Placed tells whether cards would be assigned at once; Preempts counts
	// the backfill bookings a core request would displace to get them.
	Placed   bool
	Preempts int
	// WaitReason is what the booking would wait for when not placed at once.
	WaitReason string
	Quota      schedule.QuotaVerdict
	// QuotaOverride is true when the request is over quota and goes through
	// only because a manager asked to override.
	QuotaOverride bool
	// Manager tells whether the actor manages the task's team (may override
	// the quota, needs no approval).
	Manager bool
}

// PreviewBooking runs CreateBooking's checks on req — who may book for the
// task's team, the window, the quota, capacity — and answers with the same
// errors, but writes nothing. A preview that succeeds may still meet a
// conflict when confirmed, if someone books the cards in between.
func (s *Store) PreviewBooking(ctx context.Context, req BookingRequest) (*BookingPreview, error) {
	const op = "store.PreviewBooking"
	if err := s.checkBookingRequest(op, &req); err != nil {
		return nil, err
	}
	party, err := s.readBookingParty(ctx, s.read(ctx), op, &req)
	if err != nil {
		return nil, err
	}
	return s.previewPlan(ctx, op, req, party)
}

// previewPlan plans a checked request for party without the lock and
// without writing, and says what it would do.
func (s *Store) previewPlan(ctx context.Context, op string, req BookingRequest, party *bookingParty) (*BookingPreview, error) {
	plan, err := s.planBooking(ctx, s.read(ctx), op, req, party, false)
	if err != nil {
		return nil, translate(op, err)
	}
	b := plan.booking
	p := &BookingPreview{Task: plan.task, CardType: plan.cardType, Start: b.StartAt, End: b.EndAt, Kind: b.Kind,
		Quota: plan.verdict, QuotaOverride: b.QuotaOverrideBy != nil, Manager: plan.manager, WaitReason: b.WaitReason,
		Placed: b.State != BookingPending, Preempts: len(plan.preempted)}
	p.CardSeconds = schedule.CardSeconds(b.CardCount, b.StartAt, b.EndAt)
	p.CostFen = schedule.CostFen(p.CardSeconds, plan.cardType.PriceFen)
	w := schedule.Interval{Start: b.StartAt, End: b.EndAt}
	if p.FreeCards, p.TotalCards, err = s.freeCards(ctx, plan.cardType.ID, w); err != nil {
		return nil, translate(op, err)
	}
	return p, nil
}

// freeCards counts the active cards of a type that no booking holds at any
// moment of w, and all its active cards.
func (s *Store) freeCards(ctx context.Context, cardTypeID int64, w schedule.Interval) (free, total int, err error) {
	db := s.read(ctx)
	var cards []int64
	if err := db.Model(&Card{}).Where("card_type_id = ? AND status = ?", cardTypeID, CardActive).Pluck("id", &cards).Error; err != nil {
		return 0, 0, err
	}
	busy, err := heldAssignmentsIndexed(db, cardTypeID, w, 0)
	if err != nil {
		return 0, 0, err
	}
	held := map[int64]bool{}
	for _, a := range busy {
		held[a.CardID] = true
	}
	for _, c := range cards {
		if !held[c] {
			free++
		}
	}
	return free, len(cards), nil
}
