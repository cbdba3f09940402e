package dataset

import (
	"context"
	"fmt"
	"math"
	"sort"
	"time"

	"cardhour/schedule"
	"cardhour/store"
)

// genBooking is a booking of the synthetic year.
type genBooking struct {
	id, task, team, user, cardType int64
	priority, state                string
	cards                          []int64
	start, end                     time.Time // the window (extensions included)
	actualEnd                      time.Time
	price                          int64
	busy, idle                     float64 // shares of held time
	submitted                      time.Time
}

// planBookings places the bookings in start order on free cards of their
// type, in memory.
func (g *generator) planBookings(ctx context.Context) error {
	spec := g.spec
	var nextID int64
	if err := g.st.DB().QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM bookings").Scan(&nextID); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	yearEnd := g.stats.To
	span := yearEnd.Sub(spec.From)
	// Some bookings would run past the end: draw more starts than needed,
	// place them all, then drop the surplus at random (dropping a booking
	// never makes two overlap), so the whole year stays evenly covered.
	starts := make([]time.Time, spec.Bookings+spec.Bookings/20+10)
	for i := range starts {
		starts[i] = spec.From.Add(time.Duration(g.rng.Int64N(int64(span - 2*time.Hour)))).Truncate(time.Minute)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].Before(starts[j]) })
	freeAt := make([]map[int64]time.Time, len(genTypes))
	for i := range freeAt {
		freeAt[i] = map[int64]time.Time{}
		for _, c := range g.cardsOf[i] {
			freeAt[i][c] = spec.From
		}
	}
	g.bookings = make([]genBooking, 0, spec.Bookings)
	for i, start := range starts {
		if b, ok := g.placeBooking(start, yearEnd, freeAt, &nextID); ok {
			g.bookings = append(g.bookings, b)
		}
		if i%1000 == 0 {
			spec.Progress("plan", i, len(starts))
		}
	}
	g.dropSurplus()
	return nil
}

// placeBooking draws a booking asked for at start and places it on the
// cards of its type free soonest (freeAt, per type and card), taking the
// next id; false when its type has no cards or it would run past yearEnd.
func (g *generator) placeBooking(start, yearEnd time.Time, freeAt []map[int64]time.Time, nextID *int64) (genBooking, bool) {
	rng := g.rng
	task := g.tasks[rng.IntN(len(g.tasks))]
	ti := task.types[rng.IntN(len(task.types))]
	if len(g.cardsOf[ti]) == 0 {
		return genBooking{}, false
	}
	count := []int{1, 1, 2, 2, 4, 8}[rng.IntN(6)]
	count = min(count, len(g.cardsOf[ti]))
	hours := math.Min(72, math.Max(1, math.Exp(rng.NormFloat64()*0.8+2.6)))
	dur := time.Duration(hours * float64(time.Hour)).Truncate(time.Minute)
	// The count cards free soonest; the booking waits for the last.
	pool := g.cardsOf[ti]
	order := make([]int64, len(pool))
	copy(order, pool)
	sort.Slice(order, func(a, b int) bool {
		fa, fb := freeAt[ti][order[a]], freeAt[ti][order[b]]
		if !fa.Equal(fb) {
			return fa.Before(fb)
		}
		return order[a] < order[b]
	})
	chosen := order[:count]
	if last := freeAt[ti][chosen[count-1]]; last.After(start) {
		start = last
	}
	end := start.Add(dur)
	if !end.Before(yearEnd) {
		return genBooking{}, false
	}
	*nextID++
	b := genBooking{id: *nextID, task: task.id, team: task.team, user: task.users[rng.IntN(3)], cardType: g.typeIDs[ti],
		priority: task.priority, state: store.BookingCompleted, cards: append([]int64(nil), chosen...), start: start, end: end,
		actualEnd: end, price: genTypes[ti].priceFen, submitted: start.Add(-time.Duration(rng.IntN(72*60)) * time.Minute)}
	g.fate(&b, dur, yearEnd)
	if b.state != store.BookingCancelled {
		for _, c := range b.cards {
			freeAt[ti][c] = b.actualEnd
		}
	}
	return b, true
}

// fate decides how a placed booking of duration dur went — completed,
// released early, preempted, extended or cancelled — and how busy its
// cards were.
func (g *generator) fate(b *genBooking, dur time.Duration, yearEnd time.Time) {
	rng := g.rng
	start, end := b.start, b.end
	switch x := rng.Float64(); {
	case x < 0.12: // released early
		b.state = store.BookingReleased
		b.actualEnd = start.Add(time.Duration(float64(dur) * (0.2 + 0.7*rng.Float64()))).Truncate(time.Second)
	case x < 0.16 && b.priority == schedule.Backfill: // preempted by a core booking
		b.state = store.BookingPreempted
		b.actualEnd = start.Add(time.Duration(float64(dur) * (0.1 + 0.8*rng.Float64()))).Truncate(time.Minute)
	case x < 0.24: // extended: a longer window, completed
		b.end = end.Add(time.Duration(1+rng.IntN(8)) * time.Hour)
		if !b.end.Before(yearEnd) {
			b.end = end
		}
		b.actualEnd = b.end
	case x < 0.28: // cancelled before it began: held nothing
		b.state = store.BookingCancelled
		b.actualEnd = start
	}
	if rng.Float64() < 0.15 {
		b.busy = 0.05 + 0.35*rng.Float64() // an idle-heavy round ("空转")
	} else {
		b.busy = 0.6 + 0.38*rng.Float64()
	}
	b.idle = (1 - b.busy) * (0.5 + 0.4*rng.Float64())
}

// dropSurplus drops, at random, the bookings placed beyond the spec's
// number.
func (g *generator) dropSurplus() {
	surplus := len(g.bookings) - g.spec.Bookings
	if surplus <= 0 {
		return
	}
	drop := map[int]bool{}
	for _, i := range g.rng.Perm(len(g.bookings))[:surplus] {
		drop[i] = true
	}
	kept := g.bookings[:0]
	for i, b := range g.bookings {
		if !drop[i] {
			kept = append(kept, b)
		}
	}
	g.bookings = kept
}

// writeBookings writes the planned bookings and their cards.
func (g *generator) writeBookings() error {
	ins := g.ins
	bookingCols := []string{"id", "task_id", "team_id", "user_id", "card_type_id", "card_count", "start_at", "end_at", "state",
		"wait_reason", "kind", "priority", "price_fen", "submitted_at", "confirmed_at", "ended_at", "state_note", "state_note_args", "created_at", "updated_at"}
	if err := ins.begin("bookings", bookingCols); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	for i, b := range g.bookings {
		kind := store.KindAdvance
		if b.submitted.After(b.start.Add(-5 * time.Minute)) {
			kind = store.KindOnDemand
		}
		var ended any = b.actualEnd
		// A generated preemption names no booking of the set: core work.
		note := ""
		if b.state == store.BookingPreempted {
			note = store.NotePreempted
		}
		if err := ins.add(b.id, b.task, b.team, b.user, b.cardType, len(b.cards), b.start, b.end, b.state, "", kind, b.priority,
			b.price, b.submitted, b.submitted, ended, note, "[]", b.submitted, b.actualEnd); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if i%5000 == 0 {
			g.spec.Progress("bookings", i, len(g.bookings))
		}
	}
	if err := ins.end(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := ins.begin("booking_cards", []string{"booking_id", "card_id", "card_type_id", "start_at", "end_at", "held"}); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	for _, b := range g.bookings {
		held := b.state != store.BookingCancelled
		end := b.end
		if b.state == store.BookingReleased || b.state == store.BookingPreempted {
			end = b.actualEnd
		}
		for _, c := range b.cards {
			if err := ins.add(b.id, c, b.cardType, b.start, end, held); err != nil {
				return fmt.Errorf("%s: %w", op, err)
			}
			g.stats.BookingCards++
		}
	}
	if err := ins.end(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	g.stats.Bookings = len(g.bookings)
	return nil
}
