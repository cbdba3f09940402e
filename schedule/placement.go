package schedule

import (
	"fmt"
	"sort"
	"time"
)

// Priority classes of a task, most important first.
const (
	Core     = "core"
	Normal   = "normal"
	Backfill = "backfill"
)

// PriorityRank orders classes: core 3, normal 2, backfill 1, unknown 0.
func PriorityRank(p string) int {
	switch p {
	case Core:
		return 3
	case Normal:
		return 2
	case Backfill:
		return 1
	}
	return 0
}

// Interval is the half-open window [Start, End).
type Interval struct {
	Start, End time.Time
}

// Overlaps tells whether two half-open windows share an instant; a booking
// ending at 10:00 and one starting at 10:00 do not overlap.
func (a Interval) Overlaps(b Interval) bool {
	return a.Start.Before(b.End) && b.Start.Before(a.End)
}

// Overlap is how long a and b share, 0 when they do not meet.
func (a Interval) Overlap(b Interval) time.Duration {
	start, end := a.Start, a.End
	if b.Start.After(start) {
		start = b.Start
	}
	if b.End.Before(end) {
		end = b.End
	}
	return max(0, end.Sub(start))
}

// Assignment is a card held by a booking for a window.
type Assignment struct {
	CardID    int64
	BookingID int64
	Interval
	Priority string
}

// Request asks for Count cards of one type for a window.
type Request struct {
	Count int
	Interval
	Priority string
	// MayPreempt lets a core request take cards held by backfill bookings.
	MayPreempt bool
}

// Pool is the state of one card type's cards around a request.
type Pool struct {
	Cards []int64      // bookable (active) cards of the type
	Busy  []Assignment // assignments overlapping the request's window or near it
	// CoreReserve is how many cards of the pool only core requests may use.
	CoreReserve int
}

// Placement is the outcome: the cards chosen, and the bookings that must
// be preempted to free them (empty unless a core request preempted).
type Placement struct {
	Cards   []int64
	Preempt []int64
}

// Shortfall says why a request cannot be placed, in numbers the user can act
// on.
type Shortfall struct {
	Wanted, Free int
	// Reserved is true when cards were free but held back for core tasks.
	Reserved bool
}

func (s *Shortfall) Error() string {
	if s.Reserved {
		return fmt.Sprintf("wanted %d cards, %d usable outside the core reserve", s.Wanted, s.Free)
	}
	return fmt.Sprintf("wanted %d cards, %d free", s.Wanted, s.Free)
}

// Place chooses cards for req. Free cards come first, preferring the one
// whose previous booking ends closest before the start, so bookings pack
// densely and long gaps stay whole for larger requests. A core request that
// may preempt takes cards held only by backfill bookings when free ones run
// out, choosing those whose preemption displaces the fewest bookings.
func Place(pool Pool, req Request) (Placement, *Shortfall) {
	if req.Count <= 0 {
		return Placement{}, &Shortfall{Wanted: req.Count}
	}
	type candidate struct {
		card     int64
		gap      time.Duration
		displace []int64
	}
	var free, preemptible []candidate
	for _, card := range pool.Cards {
		var blockers []int64
		blocked := false
		gap := time.Duration(1<<62 - 1)
		for _, a := range pool.Busy {
			if a.CardID != card {
				continue
			}
			if a.Overlaps(req.Interval) {
				blocked = true
				if a.Priority == Backfill {
					blockers = append(blockers, a.BookingID)
				} else {
					blockers = nil
					break
				}
			} else if !a.End.After(req.Start) {
				if g := req.Start.Sub(a.End); g < gap {
					gap = g
				}
			}
		}
		switch {
		case !blocked:
			free = append(free, candidate{card: card, gap: gap})
		case blockers != nil && req.Priority == Core && req.MayPreempt && allBackfill(pool.Busy, card, req.Interval):
			preemptible = append(preemptible, candidate{card: card, gap: gap, displace: blockers})
		}
	}
	sort.SliceStable(free, func(i, j int) bool {
		if free[i].gap != free[j].gap {
			return free[i].gap < free[j].gap
		}
		return free[i].card < free[j].card
	})

	usable := len(free)
	if req.Priority != Core && pool.CoreReserve > 0 {
		// Non-core work may never hold the reserve: count how many cards
		// non-core bookings already use at the busiest instant of the window.
		limit := len(pool.Cards) - pool.CoreReserve - peakNonCore(pool.Busy, req.Interval)
		if limit < usable {
			usable = max(limit, 0)
		}
		if usable < req.Count {
			return Placement{}, &Shortfall{Wanted: req.Count, Free: usable, Reserved: usable < len(free)}
		}
	}
	var out Placement
	for _, c := range free {
		if len(out.Cards) == req.Count || len(out.Cards) == usable {
			break
		}
		out.Cards = append(out.Cards, c.card)
	}
	if len(out.Cards) < req.Count {
		sort.SliceStable(preemptible, func(i, j int) bool {
			if len(preemptible[i].displace) != len(preemptible[j].displace) {
				return len(preemptible[i].displace) < len(preemptible[j].displace)
			}
			return preemptible[i].card < preemptible[j].card
		})
		if len(out.Cards)+len(preemptible) < req.Count {
			return Placement{}, &Shortfall{Wanted: req.Count, Free: len(free)}
		}
		seen := map[int64]bool{}
		for _, c := range preemptible[:req.Count-len(out.Cards)] {
			out.Cards = append(out.Cards, c.card)
			for _, b := range c.displace {
				if !seen[b] {
					seen[b] = true
					out.Preempt = append(out.Preempt, b)
				}
			}
		}
		sort.Slice(out.Preempt, func(i, j int) bool { return out.Preempt[i] < out.Preempt[j] })
	}
	return out, nil
}

func allBackfill(busy []Assignment, card int64, w Interval) bool {
	for _, a := range busy {
		if a.CardID == card && a.Overlaps(w) && a.Priority != Backfill {
			return false
		}
	}
	return true
}

// peakNonCore is the most cards that non-core assignments hold at one
// instant inside w.
func peakNonCore(busy []Assignment, w Interval) int {
	spans := make([]Span, 0, len(busy))
	for _, a := range busy {
		if a.Priority != Core {
			spans = append(spans, Span{Interval: a.Interval, N: 1})
		}
	}
	return PeakCards(spans, w)
}
