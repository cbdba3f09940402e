package store

import (
	"database/sql"
	"fmt"
	"time"

	"gorm.io/gorm"

	"cardhour/schedule"
)

// quotaUseSQL sums the card-seconds the team's bookings of the type commit
// inside the quota window, and the most cards they hold at once during w,
// with the sum done by the database: the same
// card-seconds (each booking's whole seconds, clipped to the quota window,
// up to its early end once it is over) and the same peak, without loading
// every booking of the team. Loading them all (quotaUse, kept as the tests'
// oracle) made each booking cost more than the last; under load it was
// seven tenths of the server's time.
func quotaUseSQL(tx *gorm.DB, dialect string, teamID, cardTypeID int64, quotaWindow, w schedule.Interval, except int64) (int64, int, error) {
	used, err := quotaUsedSQL(tx, dialect, teamID, cardTypeID, quotaWindow, except)
	if err != nil {
		return 0, 0, err
	}
	peak, err := peakCards(tx, teamID, cardTypeID, quotaWindow, w, except)
	return used, peak, err
}

// quotaUsedSQL is quotaUseSQL's card-second sum alone, what recounting a
// quota's running total needs.
func quotaUsedSQL(tx *gorm.DB, dialect string, teamID, cardTypeID int64, quotaWindow schedule.Interval, except int64) (int64, error) {
	qs, qe := quotaWindow.Start.UTC(), quotaWindow.End.UTC()
	// Each booking counts from its start to its early end once it is over
	// and ended before its window did, else to its end; both clipped to the
	// quota window.
	seconds := "TIMESTAMPDIFF(SECOND, s, e)"
	clip := "GREATEST(start_at, ?) AS s, LEAST(%s, ?) AS e"
	if dialect != MySQL {
		seconds = "((" + sqliteMicros("e") + " - " + sqliteMicros("s") + ") / 1000000)"
		clip = "MAX(start_at, ?) AS s, MIN(%s, ?) AS e"
	}
	end := "CASE WHEN ended_at IS NOT NULL AND ended_at < end_at AND state NOT IN ('pending', 'confirmed', 'active') THEN ended_at ELSE end_at END"
	query := "SELECT SUM(card_count * " + seconds + ") FROM (SELECT card_count, " + fmt.Sprintf(clip, end) + " FROM bookings" +
		" WHERE team_id = ? AND card_type_id = ? AND state NOT IN ? AND id <> ? AND start_at < ? AND end_at > ?) clipped WHERE e > s"
	var used sql.NullInt64
	if err := tx.Raw(query, qs, qe, teamID, cardTypeID, withdrawnStates, except, qe, qs).Row().Scan(&used); err != nil {
		return 0, err
	}
	return used.Int64, nil
}

// peakCards is the most cards the team's live bookings of the type hold at
// once during w (inside the quota window), but except; it needs only the
// bookings that meet w.
func peakCards(tx *gorm.DB, teamID, cardTypeID int64, quotaWindow, w schedule.Interval, except int64) (int, error) {
	qs, qe := quotaWindow.Start.UTC(), quotaWindow.End.UTC()
	var live []struct {
		StartAt, EndAt time.Time
		CardCount      int
	}
	err := tx.Model(&Booking{}).Select("start_at, end_at, card_count").
		Where("team_id = ? AND card_type_id = ? AND state IN ? AND id <> ? AND start_at < ? AND end_at > ? AND start_at < ? AND end_at > ?",
			teamID, cardTypeID, []string{BookingConfirmed, BookingActive}, except, qe, qs, w.End.UTC(), w.Start.UTC()).
		Scan(&live).Error
	if err != nil {
		return 0, err
	}
	spans := make([]schedule.Span, len(live))
	for i, b := range live {
		spans[i] = schedule.Span{Interval: schedule.Interval{Start: b.StartAt.UTC(), End: b.EndAt.UTC()}, N: b.CardCount}
	}
	return schedule.PeakCards(spans, w), nil
}

// sqliteMicros is a stored time in microseconds since the epoch. SQLite's
// date functions keep only milliseconds, so the fraction the driver writes
// ("2026-12-01 08:00:01.234567+00:00", trailing zeros dropped, no dot when
// whole) is read from the text itself: the whole seconds minus the
// difference would otherwise be off by one now and then.
func sqliteMicros(x string) string {
	frac := "substr(" + x + ", 21, instr(substr(" + x + ", 21), '+') - 1)"
	return "(unixepoch(" + x + ") * 1000000 + CASE WHEN substr(" + x + ", 20, 1) = '.' THEN CAST(substr(" + frac + " || '000000', 1, 6) AS INTEGER) ELSE 0 END)"
}
