package store

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"
)

// BookingHour is one booking's telemetry in one hour, summed over its
// cards: the card-seconds telemetry saw the cards held (sampled), busy,
// and held but idle.
type BookingHour struct {
	BookingID       int64
	HourAt          time.Time
	SampledSeconds  float64
	BusySeconds     float64
	HeldIdleSeconds float64
}

// bookingHoursFromMinutes folds the minute rollups keep accepts into
// per-booking hours. A minute counts for the booking that held the card in
// it, and only its held part: busy time is capped at the held time, so a
// card busy before its booking began is not charged to it.
func bookingHoursFromMinutes(minutes []Rollup, keep func(*Rollup) bool) []BookingHour {
	type key struct {
		booking int64
		hour    int64
	}
	at := map[key]int{}
	var out []BookingHour
	for i := range minutes {
		m := &minutes[i]
		if m.BookingID == 0 || m.HeldSeconds <= 0 || (keep != nil && !keep(m)) {
			continue
		}
		h := m.At.UTC().Truncate(time.Hour)
		k := key{m.BookingID, h.Unix()}
		j, ok := at[k]
		if !ok {
			j = len(out)
			at[k] = j
			out = append(out, BookingHour{BookingID: m.BookingID, HourAt: h})
		}
		b := &out[j]
		b.SampledSeconds += m.HeldSeconds
		b.BusySeconds += min(m.BusySeconds, m.HeldSeconds)
		b.HeldIdleSeconds += min(m.HeldIdleSeconds, m.HeldSeconds)
	}
	return out
}

// upsertBookingHours adds hours to the booking-hour table inside tx, and
// reopens the ledger rounds of those bookings: telemetry that arrives after
// a round was settled (an agent that was offline) still reaches the ledger.
func (s *Store) upsertBookingHours(tx *gorm.DB, hours []BookingHour) error {
	if len(hours) == 0 {
		return nil
	}
	ids := map[int64]bool{}
	var list []int64
	for _, h := range hours {
		if !ids[h.BookingID] {
			ids[h.BookingID] = true
			list = append(list, h.BookingID)
		}
	}
	// Bookings deleted meanwhile cannot take rows (foreign key).
	var exist []int64
	if err := tx.Table("bookings").Where("id IN ?", list).Pluck("id", &exist).Error; err != nil {
		return err
	}
	alive := map[int64]bool{}
	for _, id := range exist {
		alive[id] = true
	}
	sets := "sampled_seconds = sampled_seconds + excluded.sampled_seconds, busy_seconds = busy_seconds + excluded.busy_seconds, " +
		"held_idle_seconds = held_idle_seconds + excluded.held_idle_seconds"
	conflict := " ON CONFLICT(booking_id, hour_at) DO UPDATE SET "
	if s.dialect == MySQL {
		sets = strings.ReplaceAll(sets, "excluded.sampled_seconds", "VALUES(sampled_seconds)")
		sets = strings.ReplaceAll(sets, "excluded.busy_seconds", "VALUES(busy_seconds)")
		sets = strings.ReplaceAll(sets, "excluded.held_idle_seconds", "VALUES(held_idle_seconds)")
		conflict = " ON DUPLICATE KEY UPDATE "
	}
	chunk := s.upsertChunk(5)
	var kept []BookingHour
	for _, h := range hours {
		if alive[h.BookingID] {
			kept = append(kept, h)
		}
	}
	for start := 0; start < len(kept); start += chunk {
		part := kept[start:min(start+chunk, len(kept))]
		ph := make([]string, len(part))
		args := make([]any, 0, len(part)*5)
		for i, h := range part {
			ph[i] = "(?, ?, ?, ?, ?)"
			args = append(args, h.BookingID, h.HourAt.UTC(), h.SampledSeconds, h.BusySeconds, h.HeldIdleSeconds)
		}
		q := "INSERT INTO telemetry_booking_hours (booking_id, hour_at, sampled_seconds, busy_seconds, held_idle_seconds) VALUES " +
			strings.Join(ph, ", ") + conflict + sets
		if err := tx.Exec(q, args...).Error; err != nil {
			return err
		}
	}
	if len(exist) > 0 {
		return tx.Exec("UPDATE ledger_rounds SET settled = ? WHERE settled = ? AND booking_id IN ?", false, true, exist).Error
	}
	return nil
}

// findBookingHours loads the booking-hour telemetry of the given bookings,
// by booking and hour.
func findBookingHours(tx *gorm.DB, bookingIDs []int64) (map[int64][]usageHour, error) {
	out := map[int64][]usageHour{}
	if len(bookingIDs) == 0 {
		return out, nil
	}
	var rows []struct {
		BookingID       int64
		HourAt          time.Time
		SampledSeconds  float64
		BusySeconds     float64
		HeldIdleSeconds float64
	}
	err := tx.Table("telemetry_booking_hours").
		Select("booking_id, hour_at, sampled_seconds, busy_seconds, held_idle_seconds").
		Where("booking_id IN ?", bookingIDs).Order("booking_id, hour_at").Scan(&rows).Error
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[r.BookingID] = append(out[r.BookingID], usageHour{HourAt: r.HourAt.UTC(), SampledSeconds: r.SampledSeconds,
			BusySeconds: r.BusySeconds, HeldIdleSeconds: r.HeldIdleSeconds})
	}
	return out, nil
}

// FindBookingHours returns a booking's per-hour telemetry, oldest first.
func (s *Store) FindBookingHours(ctx context.Context, bookingID int64) ([]BookingHour, error) {
	m, err := findBookingHours(s.read(ctx), []int64{bookingID})
	if err != nil {
		return nil, translate("store.FindBookingHours", err)
	}
	out := make([]BookingHour, 0, len(m[bookingID]))
	for _, h := range m[bookingID] {
		out = append(out, BookingHour{BookingID: bookingID, HourAt: h.HourAt, SampledSeconds: h.SampledSeconds,
			BusySeconds: h.BusySeconds, HeldIdleSeconds: h.HeldIdleSeconds})
	}
	return out, nil
}
