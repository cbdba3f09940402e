package store

import (
	"math"
	"time"

	"cardhour/schedule"
)

// monthLayout writes a calendar month as "2006-01".
const monthLayout = "2006-01"

// MonthBounds are the first instant of the month "YYYY-MM" in loc and of
// the month after it, in UTC. A month that does not parse is an error for the
// caller to report as a field message.
func MonthBounds(month string, loc *time.Location) (from, to time.Time, err error) {
	t, err := time.ParseInLocation(monthLayout, month, loc)
	if err != nil {
		return time.Time{}, time.Time{}, err
	}
	return t.UTC(), t.AddDate(0, 1, 0).UTC(), nil
}

// MonthOf is the month "YYYY-MM" that t falls in, in loc.
func MonthOf(t time.Time, loc *time.Location) string { return t.In(loc).Format(monthLayout) }

// AddMonths is the month n months after month (n may be negative).
func AddMonths(month string, n int) string {
	t, err := time.Parse(monthLayout, month)
	if err != nil {
		return month
	}
	return t.AddDate(0, n, 0).Format(monthLayout)
}

// roundMonth is a round's share of one calendar month.
type roundMonth struct {
	Month              string
	BookedCardSeconds  int64
	CostFen            int64
	SampledCardSeconds int64
	BusyCardSeconds    int64
	HeldIdleSeconds    int64
	IsEndMonth         bool
}

// usageHour is a booking's telemetry of one hour, summed over its cards.
type usageHour struct {
	HourAt          time.Time
	SampledSeconds  float64
	BusySeconds     float64
	HeldIdleSeconds float64
}

// splitRound cuts a round [start, end) of cards at the month boundaries of
// loc. Booked card-seconds and cost are cut cumulatively — each month gets
// the whole-round figure up to its end minus the figure up to its start —
// so the months add up exactly to the round's own CardSeconds and CostFen,
// to the second and to the fen, however the boundaries fall. Telemetry goes
// to the month its hour starts in (hours are whole in every zone with a
// whole-hour offset, such as Asia/Shanghai); an hour outside the round's
// months is counted in the nearest one, so the month set is the window's.
func splitRound(cards int, start, end time.Time, priceFen int64, hours []usageHour, loc *time.Location) []roundMonth {
	if !end.After(start) {
		return nil
	}
	var out []roundMonth
	index := map[string]int{}
	var prevSeconds, prevCost int64
	cursor := start
	for cursor.Before(end) {
		local := cursor.In(loc)
		next := time.Date(local.Year(), local.Month(), 1, 0, 0, 0, 0, loc).AddDate(0, 1, 0).UTC()
		cut := end
		if next.Before(end) {
			cut = next
		}
		cum := schedule.CardSeconds(cards, start, cut)
		cumCost := schedule.CostFen(cum, priceFen)
		m := roundMonth{Month: local.Format(monthLayout), BookedCardSeconds: cum - prevSeconds, CostFen: cumCost - prevCost}
		index[m.Month] = len(out)
		out = append(out, m)
		prevSeconds, prevCost = cum, cumCost
		cursor = cut
	}
	out[len(out)-1].IsEndMonth = true

	first, last := out[0].Month, out[len(out)-1].Month
	sums := make([][3]float64, len(out))
	for _, h := range hours {
		m := MonthOf(h.HourAt, loc)
		if m < first {
			m = first
		} else if m > last {
			m = last
		}
		i, ok := index[m]
		if !ok {
			continue // a month inside the window always has a row; defensive
		}
		sums[i][0] += h.SampledSeconds
		sums[i][1] += h.BusySeconds
		sums[i][2] += h.HeldIdleSeconds
	}
	for i := range out {
		out[i].SampledCardSeconds = int64(math.Round(sums[i][0]))
		out[i].BusyCardSeconds = int64(math.Round(sums[i][1]))
		out[i].HeldIdleSeconds = int64(math.Round(sums[i][2]))
	}
	return out
}
