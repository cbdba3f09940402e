package store

import (
	"context"
	"time"

	"cardhour/schedule"
)

// quotaMonths lists the quotas in force at some time in [from, to) for the
// teams (nil: all), with what the teams' bookings committed of them: in the
// month, and from the quota's start to the month's end (or its expiry).
// Committed as the quota check counts it (quotaUseSQL): every booking not
// cancelled, from its start to its early end once it is over, clipped to
// the window. The bookings are read once for all the quotas and clipped
// here: per-quota sums in SQL cost a scan of the team's bookings each. A
// booking that finished since the last ledger pass (seconds) is missing
// until the next one.
func (s *Store) quotaMonths(ctx context.Context, from, to time.Time, teams []int64, names *reportNames) ([]QuotaMonth, error) {
	var qs []Quota
	q := s.read(ctx).Where("valid_from < ? AND expires_at > ?", to, from)
	if err := inTeams(q, "team_id", teams).Order("team_id, card_type_id, valid_from").Find(&qs).Error; err != nil {
		return nil, err
	}
	out := make([]QuotaMonth, 0, len(qs))
	if len(qs) == 0 {
		return out, nil
	}
	earliest := to
	var teamIDs []int64
	for _, qt := range qs {
		earliest = earlierOf(earliest, qt.ValidFrom.UTC())
		teamIDs = append(teamIDs, qt.TeamID)
	}
	type key struct{ team, cardType int64 }
	type span struct {
		TeamID     int64
		CardTypeID int64
		CardCount  int
		StartAt    time.Time
		EndAt      time.Time
	}
	// Finished bookings from the ledger, whose end is where they really
	// ended (an index on team and end bounds the read to the window), and
	// bookings still waiting, confirmed or running from the bookings.
	var done, live []span
	teamIDs = uniqueIDs(teamIDs)
	err := s.read(ctx).Table("ledger_rounds").Select("team_id, card_type_id, card_count, start_at, end_at").
		Where("team_id IN ? AND end_at > ? AND start_at < ? AND booked_card_seconds > 0", teamIDs, earliest, to).Scan(&done).Error
	if err != nil {
		return nil, err
	}
	err = s.read(ctx).Table("bookings").Select("team_id, card_type_id, card_count, start_at, end_at").
		Where("state IN ? AND team_id IN ? AND start_at < ? AND end_at > ?", []string{BookingPending, BookingConfirmed, BookingActive},
			teamIDs, to, earliest).Scan(&live).Error
	if err != nil {
		return nil, err
	}
	spans := map[key][]schedule.Span{}
	for _, r := range append(done, live...) {
		k := key{r.TeamID, r.CardTypeID}
		spans[k] = append(spans[k], schedule.Span{Interval: schedule.Interval{Start: r.StartAt.UTC(), End: r.EndAt.UTC()}, N: r.CardCount})
	}
	used := func(list []schedule.Span, w schedule.Interval) int64 {
		var sum int64
		for _, sp := range list {
			sum += schedule.CardSeconds(sp.N, laterOf(sp.Start, w.Start), earlierOf(sp.End, w.End))
		}
		return sum
	}
	for _, qt := range qs {
		start, end := qt.ValidFrom.UTC(), qt.ExpiresAt.UTC()
		list := spans[key{qt.TeamID, qt.CardTypeID}]
		out = append(out, QuotaMonth{QuotaID: qt.ID, TeamID: qt.TeamID, Team: names.teams[qt.TeamID], CardTypeID: qt.CardTypeID,
			CardType: names.cardTypes[qt.CardTypeID], GrantedCardSeconds: qt.CardSeconds, ValidFrom: start, ExpiresAt: end,
			UsedInMonthCardSeconds:    used(list, schedule.Interval{Start: laterOf(start, from), End: earlierOf(end, to)}),
			UsedToMonthEndCardSeconds: used(list, schedule.Interval{Start: start, End: earlierOf(end, to)})})
	}
	return out, nil
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

func earlierOf(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
