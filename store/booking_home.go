package store

import (
	"context"
	"time"
)

// The figures of a person's home page: what is wrong with their bookings,
// and for a manager how much of their teams' held time went idle.

// FindOpenAlertsOfUser lists the episodes still open on the user's live
// bookings (held but idle, VRAM near full, an auto-release warning…),
// newest first.
func (s *Store) FindOpenAlertsOfUser(ctx context.Context, userID int64) ([]AlertView, error) {
	return scanAlerts(s.alertViews(ctx).Where("a.ended_at IS NULL AND b.user_id = ? AND b.state IN ?", userID, []string{BookingConfirmed, BookingActive}).
		Order("a.started_at DESC, a.id DESC").Limit(50), "store.FindOpenAlertsOfUser")
}

// TeamsHeldIdleSeconds sums the card-seconds the teams' bookings held but
// left idle since t, from the bookings' hourly telemetry (t is taken to its
// hour, as the board's figure is).
func (s *Store) TeamsHeldIdleSeconds(ctx context.Context, teamIDs []int64, t time.Time) (float64, error) {
	if len(teamIDs) == 0 {
		return 0, nil
	}
	var sum *float64
	err := s.read(ctx).Table("telemetry_booking_hours h").Select("SUM(h.held_idle_seconds)").
		Joins("JOIN bookings b ON b.id = h.booking_id").
		Where("b.team_id IN ? AND h.hour_at >= ?", teamIDs, t.UTC().Truncate(time.Hour)).Scan(&sum).Error
	if err != nil {
		return 0, translate("store.TeamsHeldIdleSeconds", err)
	}
	if sum == nil {
		return 0, nil
	}
	return *sum, nil
}
