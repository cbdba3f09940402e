package schedule

import "time"

// CardSeconds is cards × the length of [start, end), never negative.
func CardSeconds(cards int, start, end time.Time) int64 {
	if !end.After(start) || cards <= 0 {
		return 0
	}
	return int64(cards) * int64(end.Sub(start)/time.Second)
}

// CardHours is card-seconds as hours, for display.
func CardHours(cardSeconds int64) float64 { return float64(cardSeconds) / 3600 }

// CostFen is card-seconds × the price per card-hour, rounded half up to the
// fen; integer arithmetic so sums over a year agree to the fen.
func CostFen(cardSeconds, priceFen int64) int64 {
	return (cardSeconds*priceFen + 1800) / 3600
}
