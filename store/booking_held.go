package store

import (
	"time"

	"gorm.io/gorm"

	"cardhour/schedule"
)

// heldAssignmentsIndexed lists the cards of a type held during w, with the
// class of the booking that holds each (except skips one booking), without
// a scan: the held
// assignments of one card never overlap (the rule this whole package
// keeps), so those meeting w are the ones starting inside w plus, per
// card, at most the last one starting before w. The first is a range on
// ix_booking_cards_type_held, the second one probe per card on
// ix_booking_cards_card. The plain query (kept as heldAssignments, the
// tests' oracle) reads every held row of the type that starts before w
// ends — under load most of the table, inside the booking transaction.
func heldAssignmentsIndexed(tx *gorm.DB, cardTypeID int64, w schedule.Interval, except int64) ([]schedule.Assignment, error) {
	rows, err := heldRowsIndexed(tx, cardTypeID, w, except)
	if err != nil {
		return nil, err
	}
	out := make([]schedule.Assignment, len(rows))
	for i, r := range rows {
		out[i] = schedule.Assignment{CardID: r.CardID, BookingID: r.BookingID,
			Interval: schedule.Interval{Start: r.StartAt.UTC(), End: r.EndAt.UTC()}, Priority: r.Priority}
	}
	return out, nil
}

// heldRow is one held card of a booking, with what the rules need of it.
type heldRow struct {
	CardID, BookingID, TeamID int64
	StartAt, EndAt            time.Time
	Priority                  string
}

// heldRowsIndexed reads the held cards of heldAssignmentsIndexed.
func heldRowsIndexed(tx *gorm.DB, cardTypeID int64, w schedule.Interval, except int64) ([]heldRow, error) {
	start, end := w.Start.UTC(), w.End.UTC()
	var inside, before []heldRow
	err := tx.Table("booking_cards bc").Select("bc.card_id, bc.booking_id, b.team_id, bc.start_at, bc.end_at, b.priority").
		Joins("JOIN bookings b ON b.id = bc.booking_id").
		Where("bc.card_type_id = ? AND bc.held = ? AND bc.start_at >= ? AND bc.start_at < ? AND bc.booking_id <> ?", cardTypeID, true, start, end, except).
		Scan(&inside).Error
	if err != nil {
		return nil, err
	}
	last := tx.Table("booking_cards x").Select("x.id").
		Where("x.card_id = c.id AND x.held = ? AND x.start_at < ?", true, start).Order("x.start_at DESC").Limit(1)
	err = tx.Table("booking_cards bc").Select("bc.card_id, bc.booking_id, b.team_id, bc.start_at, bc.end_at, b.priority").
		Joins("JOIN bookings b ON b.id = bc.booking_id").
		Where("bc.id IN (?) AND bc.end_at > ? AND bc.booking_id <> ?",
			tx.Table("cards c").Select("(?)", last).Where("c.card_type_id = ?", cardTypeID), start, except).
		Scan(&before).Error
	if err != nil {
		return nil, err
	}
	return append(inside, before...), nil
}
