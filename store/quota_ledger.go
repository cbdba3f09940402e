package store

import (
	"time"

	"gorm.io/gorm"

	"cardhour/errs"
	"cardhour/schedule"
)

// Each quota keeps a running total of the card-seconds its team's bookings
// of the type draw from it (quotas.used_card_seconds). Every write of a
// booking goes through saveBooking, which adjusts the total by the change
// in what the booking draws, inside the same transaction and under the
// card type's lock. The quota check then reads one row instead of summing
// the team's bookings; quotaUseSQL remains for recounting a quota whose
// window changes, and the tests compare the totals with it.

// drawnCardSeconds is what b draws from a quota window w: its card-seconds
// clipped to w, up to its early end once it is over, nothing once it is
// cancelled. It is the Go twin of quotaUseSQL's sum, second for second.
func drawnCardSeconds(b *Booking, w schedule.Interval) int64 {
	if b == nil || schedule.Withdrawn(b.State) {
		return 0
	}
	start, end := b.StartAt, b.EndAt
	if b.EndedAt != nil && b.EndedAt.Before(end) && !b.Live() {
		end = *b.EndedAt
	}
	if start.Before(w.Start) {
		start = w.Start
	}
	if end.After(w.End) {
		end = w.End
	}
	if !end.After(start) {
		return 0
	}
	// Whole seconds of the stored (microsecond) times, as the database
	// counts them.
	d := end.Truncate(time.Microsecond).Sub(start.Truncate(time.Microsecond))
	return int64(b.CardCount) * int64(d/time.Second)
}

// saveBooking writes b (inserting it when new) and moves the quota totals
// by the change from before (nil for a new booking). Every write of a
// booking row must come through here, or the totals drift; and it refuses
// a change of state schedule does not allow, so that no code path invents
// one.
func (s *Store) saveBooking(tx *gorm.DB, before, b *Booking) error {
	from := ""
	if before != nil {
		from = before.State
	}
	if !schedule.CanTransition(from, b.State) {
		return errs.Internalf("store.saveBooking", "booking %d: schedule allows no transition from %q to %q", b.ID, from, b.State)
	}
	if w := deferredWrites(tx); b.ID == 0 && w != nil && w.bookingsToo {
		w.deferBooking(b)
	} else if b.ID == 0 {
		if err := tx.Create(b).Error; err != nil {
			return err
		}
	} else if err := tx.Save(b).Error; err != nil {
		return err
	}
	return adjustQuotaUse(tx, before, b)
}

// adjustQuotaUse moves the totals of the quotas either version of the
// booking meets. Quotas of one team and type never overlap, so each
// booking-second counts in at most one.
func adjustQuotaUse(tx *gorm.DB, before, after *Booking) error {
	if before != nil && sameDraw(before, after) {
		return nil
	}
	if before == nil && after.quota != nil {
		// A new booking inside the quota it was checked against: quotas of
		// a team and type never overlap, so that one is all it draws on.
		return addQuotaUse(tx, after.CardTypeID, after.quota.ID, drawnCardSeconds(after, after.quota.window()))
	}
	lo, hi := after.StartAt, after.EndAt
	if before != nil {
		if before.StartAt.Before(lo) {
			lo = before.StartAt
		}
		if before.EndAt.After(hi) {
			hi = before.EndAt
		}
	}
	var qs []Quota
	if err := tx.Select("id, valid_from, expires_at").
		Where("team_id = ? AND card_type_id = ? AND valid_from < ? AND expires_at > ?", after.TeamID, after.CardTypeID, hi, lo).
		Find(&qs).Error; err != nil {
		return err
	}
	for _, q := range qs {
		w := schedule.Interval{Start: q.ValidFrom.UTC(), End: q.ExpiresAt.UTC()}
		delta := drawnCardSeconds(after, w) - drawnCardSeconds(before, w)
		if err := addQuotaUse(tx, after.CardTypeID, q.ID, delta); err != nil {
			return err
		}
	}
	return nil
}

func addQuotaUse(tx *gorm.DB, typeID, quotaID, delta int64) error {
	if delta == 0 {
		return nil
	}
	noteQuotaUse(tx, typeID, quotaID, delta)
	if w := deferredWrites(tx); w != nil {
		if w.quotaUse == nil {
			w.quotaUse = map[int64]int64{}
		}
		w.quotaUse[quotaID] += delta
		return nil
	}
	return tx.Exec("UPDATE quotas SET used_card_seconds = used_card_seconds + ? WHERE id = ?", delta, quotaID).Error
}

// sameDraw tells whether two versions of a booking draw the same from any
// quota window: the same cards, span and countedness.
func sameDraw(a, b *Booking) bool {
	end := func(x *Booking) time.Time {
		if x.EndedAt != nil && x.EndedAt.Before(x.EndAt) && !x.Live() {
			return *x.EndedAt
		}
		return x.EndAt
	}
	return a.CardCount == b.CardCount && a.StartAt.Equal(b.StartAt) && end(a).Equal(end(b)) &&
		schedule.Withdrawn(a.State) == schedule.Withdrawn(b.State)
}

// recountQuotaUse sets a quota's total from the bookings themselves, for a
// new quota or one whose window changed.
func (s *Store) recountQuotaUse(tx *gorm.DB, q *Quota) error {
	w := schedule.Interval{Start: q.ValidFrom.UTC(), End: q.ExpiresAt.UTC()}
	used, err := quotaUsedSQL(tx, s.dialect, q.TeamID, q.CardTypeID, w, 0)
	if err != nil {
		return err
	}
	q.UsedCardSeconds = used
	return nil
}
