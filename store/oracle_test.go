package store

import (
	"time"

	"gorm.io/gorm"

	"cardhour/schedule"
)

// The straightforward versions of the held-assignment and quota-use
// queries: they load every row and work in Go. Production uses the indexed
// and SQL versions; these stay as the oracles the agreement tests compare
// them with.

// heldAssignments lists the cards of a type held during w, with the class of
// the booking that holds each; except skips one booking (itself, when
// re-placing).
func heldAssignments(tx *gorm.DB, cardTypeID int64, w schedule.Interval, except int64) ([]schedule.Assignment, error) {
	type row struct {
		CardID, BookingID int64
		StartAt, EndAt    time.Time
		Priority          string
	}
	var rows []row
	err := tx.Table("booking_cards bc").Select("bc.card_id, bc.booking_id, bc.start_at, bc.end_at, b.priority").
		Joins("JOIN bookings b ON b.id = bc.booking_id").
		Where("bc.card_type_id = ? AND bc.held = ? AND bc.start_at < ? AND bc.end_at > ? AND bc.booking_id <> ?", cardTypeID, true, w.End, w.Start, except).
		Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	out := make([]schedule.Assignment, len(rows))
	for i, r := range rows {
		out[i] = schedule.Assignment{CardID: r.CardID, BookingID: r.BookingID, Interval: schedule.Interval{Start: r.StartAt.UTC(), End: r.EndAt.UTC()}, Priority: r.Priority}
	}
	return out, nil
}

// quotaUse sums the card-seconds the team's bookings of the type commit
// inside the quota window, and the most cards they hold at once during w.
func quotaUse(tx *gorm.DB, teamID, cardTypeID int64, quotaWindow, w schedule.Interval, except int64) (int64, int, error) {
	var bs []Booking
	err := tx.Where("team_id = ? AND card_type_id = ? AND state <> ? AND id <> ? AND start_at < ? AND end_at > ?",
		teamID, cardTypeID, BookingCancelled, except, quotaWindow.End, quotaWindow.Start).Find(&bs).Error
	if err != nil {
		return 0, 0, err
	}
	var used int64
	var spans []schedule.Span
	for _, b := range bs {
		start, end := b.StartAt, b.EndAt
		if b.EndedAt != nil && b.EndedAt.Before(end) && !b.Live() {
			end = *b.EndedAt
		}
		if start.Before(quotaWindow.Start) {
			start = quotaWindow.Start
		}
		if end.After(quotaWindow.End) {
			end = quotaWindow.End
		}
		used += schedule.CardSeconds(b.CardCount, start, end)
		if b.State == BookingConfirmed || b.State == BookingActive {
			spans = append(spans, schedule.Span{Interval: b.Window(), N: b.CardCount})
		}
	}
	return used, schedule.PeakCards(spans, w), nil
}
