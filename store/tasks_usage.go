package store

import (
	"context"

	"cardhour/schedule"
)

// TaskUsage sets what a task booked and ran against its baseline.
type TaskUsage struct {
	TaskID int64 `json:"task_id"`
	// BookedCardSeconds counts every booking that holds or held cards (not
	// cancelled, not waiting), up to its end or its early end.
	BookedCardSeconds int64 `json:"booked_card_seconds"`
	// ElapsedCardSeconds is the part of the booked time already past. Until
	// telemetry measures real occupancy it stands in for "used".
	ElapsedCardSeconds int64 `json:"elapsed_card_seconds"`
	// WaitingCardSeconds is what pending bookings ask for.
	WaitingCardSeconds int64 `json:"waiting_card_seconds"`
	CostFen            int64 `json:"cost_fen"`
	Bookings           int   `json:"bookings"`
}

// Deviation classes of a task against its baseline, shown as a badge.
const (
	DeviationOnPlan = "on_plan"
	DeviationOver   = "over"
	DeviationUnder  = "under"
)

// Deviation compares booked card-hours with the estimate: more than 10 %
// over is "over"; a finished plan far below is "under"; else on plan.
func (u TaskUsage) Deviation(estimateCardSeconds int64) string {
	if estimateCardSeconds <= 0 {
		return DeviationOnPlan
	}
	ratio := float64(u.BookedCardSeconds+u.WaitingCardSeconds) / float64(estimateCardSeconds)
	switch {
	case ratio > 1.10:
		return DeviationOver
	case ratio < 0.5 && u.Bookings > 0 && u.ElapsedCardSeconds == u.BookedCardSeconds:
		return DeviationUnder
	}
	return DeviationOnPlan
}

// FindTaskUsage sums the bookings of the given tasks.
func (s *Store) FindTaskUsage(ctx context.Context, taskIDs []int64) (map[int64]TaskUsage, error) {
	out := map[int64]TaskUsage{}
	if len(taskIDs) == 0 {
		return out, nil
	}
	var bs []Booking
	if err := s.read(ctx).Where("task_id IN ? AND state NOT IN ?", taskIDs, withdrawnStates).Find(&bs).Error; err != nil {
		return nil, translate("store.FindTaskUsage", err)
	}
	now := s.now()
	for _, b := range bs {
		u := out[b.TaskID]
		u.TaskID = b.TaskID
		u.Bookings++
		if b.State == BookingPending {
			u.WaitingCardSeconds += schedule.CardSeconds(b.CardCount, b.StartAt, b.EndAt)
			out[b.TaskID] = u
			continue
		}
		booked := b.BookedCardSeconds()
		u.BookedCardSeconds += booked
		end := b.EndAt
		if b.EndedAt != nil && b.EndedAt.Before(end) {
			end = *b.EndedAt
		}
		if now.Before(end) {
			end = now
		}
		u.ElapsedCardSeconds += schedule.CardSeconds(b.CardCount, b.StartAt, end)
		u.CostFen += schedule.CostFen(booked, b.PriceFen)
		out[b.TaskID] = u
	}
	return out, nil
}
