package store

import (
	"context"
	"fmt"

	"gorm.io/gorm"

	"cardhour/errs"
	"cardhour/schedule"
)

// commitPlacement writes a placed booking: the booking row, one row per
// assigned card, and the preemption of displaced backfill bookings. before
// is the stored booking when a waiting one is placed, nil for a new one.
func (s *Store) commitPlacement(ctx context.Context, tx *gorm.DB, before, b *Booking, res *BookingResult) error {
	p := b.pending
	if p == nil {
		return errs.Internalf("store.commitPlacement", "booking %d has no placement", b.ID)
	}
	now := s.now()
	b.ConfirmedAt = &now
	b.UpdatedAt = now
	if err := s.saveBooking(tx, before, b); err != nil {
		return err
	}
	w := deferredWrites(tx)
	for _, cardID := range p.cards {
		bc := bookingCard{BookingID: b.ID, CardID: cardID, CardTypeID: b.CardTypeID, StartAt: b.StartAt, EndAt: b.EndAt, Held: true}
		if w != nil {
			w.cards = append(w.cards, bc)
		} else if err := tx.Create(&bc).Error; err != nil {
			return err
		}
		noteInserted(tx, b.CardTypeID, heldRow{CardID: cardID, BookingID: b.ID, TeamID: b.TeamID,
			StartAt: b.StartAt.UTC(), EndAt: b.EndAt.UTC(), Priority: b.Priority})
	}
	for _, id := range p.preempt {
		if err := s.preempt(ctx, tx, id, b); err != nil {
			return err
		}
	}
	res.Cards = p.uuids
	b.pending = nil
	return nil
}

// preempt cuts a backfill booking short where a core booking needs its
// cards: it ends when the core booking starts (or now), and its owner is
// told why.
func (s *Store) preempt(ctx context.Context, tx *gorm.DB, id int64, by *Booking) error {
	// The victim's held rows, even the victim, may be among the writes
	// still deferred.
	if err := flushDeferred(tx); err != nil {
		return err
	}
	id = deferredWrites(tx).realID(id)
	var victim Booking
	if err := tx.First(&victim, id).Error; err != nil {
		return err
	}
	before := victim
	cut := by.StartAt
	if now := s.now(); cut.Before(now) {
		cut = now
	}
	if cut.Before(victim.StartAt) {
		cut = victim.StartAt
	}
	victim.State = BookingPreempted
	victim.EndedAt = &cut
	victim.NoteKey, victim.NoteArgs = NotePreemptedBy, NoteArgs{by.ID}
	victim.UpdatedAt = s.now()
	if err := s.saveBooking(tx, &before, &victim); err != nil {
		return err
	}
	noteBookingMoved(tx, victim.CardTypeID, victim.ID)
	held := tx.Model(&bookingCard{}).Where("booking_id = ?", id)
	if cut.After(victim.StartAt) {
		if err := held.Update("end_at", cut).Error; err != nil {
			return err
		}
	} else if err := held.Update("held", false).Error; err != nil {
		return err
	}
	var task Task
	if err := tx.First(&task, by.TaskID).Error; err != nil {
		return err
	}
	if err := s.notifyTeam(tx, victim.TeamID, victim.UserID, "preempted", "notify.preempted", fmt.Sprintf("/bookings/%d", victim.ID), victim.ID, task.Name); err != nil {
		return err
	}
	return s.auditNoted(ctx, tx, "preempt", "booking", victim.ID, auditMsg("audit.sum.preempted_by", argText(by.ID), argText(task.Name)), before, victim)
}

func noCapacityErr(op string, s *schedule.Shortfall) error {
	if s.Reserved {
		return &errs.Error{Code: errs.Conflict, Op: op, Key: "booking.no_capacity_reserved", Args: []any{s.Wanted, s.Free}}
	}
	return &errs.Error{Code: errs.Conflict, Op: op, Key: "booking.no_capacity", Args: []any{s.Wanted, s.Free}}
}
