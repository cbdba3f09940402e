package dataset

import (
	"fmt"
	"math"
	"time"

	"cardhour/store"
)

// usage is a booking's sampled, busy and held-idle card-seconds.
type usage struct{ sampled, busy, idle float64 }

// writeBookingHours writes each booking's hours and its usage totals.
func (g *generator) writeBookingHours() error {
	ins := g.ins
	if err := ins.begin("telemetry_booking_hours", []string{"booking_id", "hour_at", "sampled_seconds", "busy_seconds", "held_idle_seconds"}); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	totals := make([]usage, len(g.bookings))
	for i, b := range g.bookings {
		if b.state == store.BookingCancelled {
			continue
		}
		n := float64(len(b.cards))
		for h := b.start.Truncate(time.Hour); h.Before(b.actualEnd); h = h.Add(time.Hour) {
			held := overlapSeconds(b.start, b.actualEnd, h, h.Add(time.Hour))
			if held <= 0 {
				continue
			}
			busy, idle := genShares(b, h)
			u := usage{held * n, held * n * busy, held * n * idle}
			totals[i].sampled += u.sampled
			totals[i].busy += u.busy
			totals[i].idle += u.idle
			if err := ins.add(b.id, h, u.sampled, u.busy, u.idle); err != nil {
				return fmt.Errorf("%s: %w", op, err)
			}
			g.stats.BookingHourRows++
		}
		if i%5000 == 0 {
			g.spec.Progress("booking hours", i, len(g.bookings))
		}
	}
	if err := ins.end(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := ins.begin("telemetry_booking_usage", []string{"booking_id", "sampled_seconds", "busy_seconds", "held_idle_seconds", "updated_at"}); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	for i, b := range g.bookings {
		if b.state == store.BookingCancelled {
			continue
		}
		if err := ins.add(b.id, totals[i].sampled, totals[i].busy, totals[i].idle, b.actualEnd); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	if err := ins.end(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// cardState is one card as the hour rollups walk through its bookings.
type cardState struct {
	id       int64
	memTotal float64
	list     []int // its bookings, in start order
	next     int
}

// hourRollupCols are telemetry_hours' columns, in the order
// writeHourRollups gives the values.
var hourRollupCols = []string{"card_id", "hour_at", "samples", "util_sum", "util_samples", "util_max", "mem_max_mib", "mem_total_mib",
	"sampled_seconds", "busy_seconds", "full_seconds", "held_seconds", "held_idle_seconds"}

// writeHourRollups writes an hour rollup for every card and hour,
// consistent with the bookings, hour by hour as telemetry arrives: the
// hour index then grows at its end, and the (card, hour) key in one short
// run per card, which keeps the pages either touches few enough to stay
// cached.
func (g *generator) writeHourRollups() error {
	cards := g.cardStates()
	if err := g.ins.begin("telemetry_hours", hourRollupCols); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	hoursN := int(g.stats.To.Sub(g.spec.From) / time.Hour)
	for h := 0; h < hoursN; h++ {
		from := g.spec.From.Add(time.Duration(h) * time.Hour)
		for _, cs := range cards {
			if err := g.writeCardHour(cs, from); err != nil {
				return fmt.Errorf("%s: %w", op, err)
			}
		}
		if h%24 == 0 {
			g.spec.Progress("hour rollups", h, hoursN)
		}
	}
	if err := g.ins.end(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}

// cardStates lists every card of the fleet with the bookings that held it.
func (g *generator) cardStates() []*cardState {
	var cards []*cardState
	at := map[int64]*cardState{}
	for ti, cs := range g.cardsOf {
		for _, c := range cs {
			cs := &cardState{id: c, memTotal: float64(genTypes[ti].vram) * 1024}
			cards = append(cards, cs)
			at[c] = cs
		}
	}
	for i, b := range g.bookings {
		if b.state == store.BookingCancelled {
			continue
		}
		for _, c := range b.cards {
			at[c].list = append(at[c].list, i)
		}
	}
	return cards
}

// writeCardHour writes one card's rollup of the hour from, from the
// bookings that held it then; the hours must come in order.
func (g *generator) writeCardHour(cs *cardState, from time.Time) error {
	to := from.Add(time.Hour)
	var held, busy, idle float64
	for cs.next < len(cs.list) && !g.bookings[cs.list[cs.next]].actualEnd.After(from) {
		cs.next++
	}
	for k := cs.next; k < len(cs.list); k++ {
		b := g.bookings[cs.list[k]]
		if !b.start.Before(to) {
			break
		}
		o := overlapSeconds(b.start, b.actualEnd, from, to)
		if o <= 0 {
			continue
		}
		bs, is := genShares(b, from)
		held += o
		busy += o * bs
		idle += o * is
	}
	const samples = 720 // one every 5 s
	util := 100 * busy / 3600
	memMax := cs.memTotal * math.Min(0.95, 0.05+0.9*busy/3600+0.3*held/3600)
	if err := g.ins.add(cs.id, from, samples, util*samples, samples, math.Min(100, util*1.4), memMax, cs.memTotal,
		3600.0, busy, 0.0, held, idle); err != nil {
		return err
	}
	g.stats.HourRows++
	return nil
}

// genShares are the busy and held-idle shares of a booking's hour: its own
// level, varied from hour to hour but the same for every card and on every
// run, so the card rollups and the booking hours agree.
func genShares(b genBooking, hour time.Time) (busy, idle float64) {
	x := uint64(b.id)*0x9e3779b97f4a7c15 ^ uint64(hour.Unix())
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	j := float64(x%1000)/1000*0.2 - 0.1
	busy = math.Max(0, math.Min(1, b.busy+j))
	idle = math.Max(0, math.Min(1-busy, b.idle-j/2))
	return busy, idle
}

// overlapSeconds is the length of [a0, a1) ∩ [b0, b1) in seconds.
func overlapSeconds(a0, a1, b0, b1 time.Time) float64 {
	s, e := a0, a1
	if b0.After(s) {
		s = b0
	}
	if b1.Before(e) {
		e = b1
	}
	if !e.After(s) {
		return 0
	}
	return e.Sub(s).Seconds()
}
