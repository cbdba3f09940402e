package store

import (
	"context"
	"time"

	"cardhour/errs"
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
	v := errs.NewValidation(op)
	v.Check(req.TaskID > 0, "task_id", "task.not_found")
	v.Check(req.CardTypeID > 0, "card_type", "cardtype.not_found")
	v.Check(req.Count >= 1 && req.Count <= s.policy.MaxCards, "count", "booking.count_range")
	req.Start, req.End = s.validateWindow(op, req.Start, req.End, v)
	if err := v.Err(); err != nil {
		return nil, err
	}
	db := s.read(ctx)
	u, err := actorUser(ctx, db, op)
	if err != nil {
		return nil, err
	}
	p := &BookingPreview{Start: req.Start, End: req.End}
	if err := db.First(&p.Task, req.TaskID).Error; err != nil {
		return nil, fieldErr(op, "task_id", "task.not_found")
	}
	ok, err := mayBookFor(db, u, p.Task.TeamID)
	if err != nil {
		return nil, translate(op, err)
	}
	if !ok {
		return nil, fieldErr(op, "task_id", "booking.not_your_team")
	}
	if err := db.First(&p.CardType, req.CardTypeID).Error; err != nil {
		return nil, fieldErr(op, "card_type", "cardtype.not_found")
	}
	var team Team
	if err := db.First(&team, p.Task.TeamID).Error; err != nil {
		return nil, translate(op, err)
	}
	if p.Manager, err = managesTeam(db, u, p.Task.TeamID); err != nil {
		return nil, translate(op, err)
	}
	w := schedule.Interval{Start: req.Start, End: req.End}
	if p.Quota, err = s.checkQuota(db, p.Task.TeamID, p.CardType.ID, req.Count, w, 0); err != nil {
		return nil, translate(op, err)
	}
	if !p.Quota.OK() {
		if !(req.OverrideQuota && p.Manager) {
			return nil, quotaErr(op, p.Quota)
		}
		p.QuotaOverride = true
	}
	now := s.now()
	p.Kind = KindAdvance
	if !req.Start.After(now.Add(time.Minute)) {
		p.Kind = KindOnDemand
	}
	p.CardSeconds = schedule.CardSeconds(req.Count, req.Start, req.End)
	p.CostFen = schedule.CostFen(p.CardSeconds, p.CardType.PriceFen)
	if p.FreeCards, p.TotalCards, err = s.freeCards(ctx, p.CardType.ID, w); err != nil {
		return nil, translate(op, err)
	}
	switch {
	case team.RequiresApproval && !p.Manager:
		p.WaitReason = WaitApproval
		return p, nil
	case p.Task.DataReadiness == schedule.DataNotReady && !req.Start.After(now):
		p.WaitReason = WaitData
		return p, nil
	}
	b := &Booking{CardTypeID: p.CardType.ID, CardCount: req.Count, StartAt: req.Start, EndAt: req.End, Priority: p.Task.Priority}
	placed, short, err := s.place(db, &p.CardType, b)
	if err != nil {
		return nil, translate(op, err)
	}
	if short != nil {
		if !req.Queue {
			return nil, noCapacityErr(op, short)
		}
		p.WaitReason = WaitCapacity
		return p, nil
	}
	p.Placed, p.Preempts = true, len(placed.Preempt)
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
	busy, err := heldAssignments(db, cardTypeID, w, 0)
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
