package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
)

// A no-show is a booking whose cards nobody touched: from its start and for
// BookingPolicy.NoShowAfter, telemetry watched them and saw no load and no
// VRAM taken. Held idle on purpose — a notebook with a model loaded — is a
// different thing, which the board shows and alerts on; a no-show means the
// job never came, so the rest of the window goes back to the pool for the
// requests waiting (闲时不占) and to the team's quota, and the owner is told.
//
// Telemetry must have watched at least half of the cards' time: a card
// whose agent is silent proves nothing, and such a booking stays.

// noShowWatched is the share of the cards' time telemetry must have seen.
const noShowWatched = 0.5

// untouchedMemMiB is the most VRAM a card may show with nothing on it (the
// driver's own context); a process that loaded anything takes more.
const untouchedMemMiB = 1024

// noShowLate is how long after its grace a booking is still checked: the
// ticker runs every few seconds, and one that was down longer than this
// leaves those bookings alone rather than judging them late.
const noShowLate = 15 * time.Minute

// findNoShows returns, by id, the active bookings whose grace ended lately
// and whose cards telemetry saw untouched through it.
func (s *Store) findNoShows(ctx context.Context, now time.Time) (map[int64]*Booking, error) {
	const op = "store.findNoShows"
	grace := s.policy.NoShowAfter
	if grace <= 0 {
		return nil, nil
	}
	var cands []Booking
	err := s.read(ctx).Where("state = ? AND start_at <= ? AND start_at > ? AND end_at > ?",
		BookingActive, now.Add(-grace), now.Add(-grace-noShowLate), now).Find(&cands).Error
	if err != nil || len(cands) == 0 {
		return nil, translate(op, err)
	}
	ids := make([]int64, len(cands))
	for i, b := range cands {
		ids[i] = b.ID
	}
	var minutes []struct {
		BookingID      int64
		At             time.Time
		SampledSeconds float64
		BusySeconds    float64
		MemMaxMiB      float64 `gorm:"column:mem_max_mib"`
	}
	err = s.read(ctx).Table("telemetry_minutes").Select("booking_id, minute_at AS at, sampled_seconds, busy_seconds, mem_max_mib").
		Where("booking_id IN ?", ids).Scan(&minutes).Error
	if err != nil {
		return nil, translate(op, err)
	}
	type seen struct {
		sampled float64
		touched bool
	}
	byBooking := map[int64]*seen{}
	graceOf := map[int64]time.Time{}
	for _, b := range cands {
		byBooking[b.ID] = &seen{}
		graceOf[b.ID] = b.StartAt.UTC().Add(grace)
	}
	for _, m := range minutes {
		if !m.At.UTC().Before(graceOf[m.BookingID]) {
			continue // after the grace: judged on the grace alone
		}
		v := byBooking[m.BookingID]
		v.sampled += m.SampledSeconds
		v.touched = v.touched || m.BusySeconds > 0 || m.MemMaxMiB > untouchedMemMiB
	}
	out := map[int64]*Booking{}
	for i := range cands {
		b := &cands[i]
		v := byBooking[b.ID]
		if !v.touched && v.sampled >= noShowWatched*float64(b.CardCount)*grace.Seconds() {
			out[b.ID] = b
		}
	}
	return out, nil
}

// endNoShow ends an active booking as a no-show at now inside tx, which
// holds its card type's lock: its cards are free from now and its owner is
// told. The caller saves the booking and audits the change.
func (s *Store) endNoShow(tx *gorm.DB, b *Booking, now time.Time) error {
	noteBookingMoved(tx, b.CardTypeID, b.ID)
	if err := tx.Model(&bookingCard{}).Where("booking_id = ?", b.ID).Update("end_at", now).Error; err != nil {
		return err
	}
	mins := int(s.policy.NoShowAfter / time.Minute)
	b.State, b.EndedAt = BookingNoShow, &now
	b.NoteKey, b.NoteArgs = NoteNoShow, NoteArgs{mins}
	return s.notifyTeam(tx, b.TeamID, b.UserID, "no_show", "notify.no_show", fmt.Sprintf("/bookings/%d", b.ID), b.ID, mins)
}
