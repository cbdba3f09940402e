package schedule

import (
	"math"
	"strconv"
	"time"
)

// CardSeconds is cards × the length of [start, end), never negative.
func CardSeconds(cards int, start, end time.Time) int64 {
	if !end.After(start) || cards <= 0 {
		return 0
	}
	return int64(cards) * int64(end.Sub(start)/time.Second)
}

// CardHours is card-seconds as hours, for display. It is the one
// conversion: pages, the API, messages and plans all go through it (or
// Hours, for the fractional seconds telemetry counts).
func CardHours(cardSeconds int64) float64 { return float64(cardSeconds) / 3600 }

// Hours is fractional seconds (telemetry's sampled, busy and idle time)
// as hours.
func Hours(seconds float64) float64 { return seconds / 3600 }

// HoursText is card-seconds as card-hours with one decimal, for messages
// ("returned 4.0 card-hours").
func HoursText(cardSeconds int64) string {
	return strconv.FormatFloat(CardHours(cardSeconds), 'f', 1, 64)
}

// HoursPlain is card-seconds as card-hours with at most two decimals and
// no trailing zeros, for files a person reads and diffs (the card-hour
// plan).
func HoursPlain(cardSeconds int64) string {
	return strconv.FormatFloat(math.Round(float64(cardSeconds)/36)/100, 'f', -1, 64)
}

// CostFen is card-seconds × the price per card-hour, rounded half up to the
// fen; integer arithmetic so sums over a year agree to the fen.
func CostFen(cardSeconds, priceFen int64) int64 {
	return (cardSeconds*priceFen + 1800) / 3600
}

// RefundFen is what an early end gives back of a booking that would have
// cost CostFen(fullSeconds): the full cost less the cost of what was kept,
// not the returned card-seconds priced on their own — each rounded apart,
// cost and refund could miss the preview by a fen (¥0.27 + ¥87.72 for
// ¥88.00).
func RefundFen(fullSeconds, keptSeconds, priceFen int64) int64 {
	return CostFen(fullSeconds, priceFen) - CostFen(keptSeconds, priceFen)
}
