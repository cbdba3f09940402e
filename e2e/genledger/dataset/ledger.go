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

// quotaKey is one team's quota of one card type in one calendar quarter.
type quotaKey struct {
	team, cardType int64
	quarter        time.Time
}

// createQuotas gives each team's card types a quota per calendar quarter
// in the zone, a fifth over what it booked.
func (g *generator) createQuotas() error {
	quarterOf := func(t time.Time) time.Time {
		l := t.In(g.spec.Zone)
		return time.Date(l.Year(), l.Month()-(l.Month()-1)%3, 1, 0, 0, 0, 0, g.spec.Zone)
	}
	used := map[quotaKey]int64{}
	for _, b := range g.bookings {
		if b.state == store.BookingCancelled {
			continue
		}
		used[quotaKey{b.team, b.cardType, quarterOf(b.start)}] += schedule.CardSeconds(len(b.cards), b.start, b.actualEnd)
	}
	keys := make([]quotaKey, 0, len(used))
	for k := range used {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.team != b.team {
			return a.team < b.team
		}
		if a.cardType != b.cardType {
			return a.cardType < b.cardType
		}
		return a.quarter.Before(b.quarter)
	})
	for _, k := range keys {
		if _, err := g.st.CreateQuota(g.actx, store.QuotaInput{TeamID: k.team, CardTypeID: k.cardType, CardHours: math.Ceil(float64(used[k]) * 1.2 / 3600),
			ValidFrom: k.quarter, ExpiresAt: k.quarter.AddDate(0, 3, 0), Note: "generated"}); err != nil {
			return fmt.Errorf("%s: quota: %w", op, err)
		}
	}
	return nil
}

// settleLedger runs the ledger pass, as the server's ticker runs it.
func (g *generator) settleLedger(ctx context.Context) error {
	pass, err := g.st.SettleLedger(ctx, store.LedgerPassOptions{Zone: g.spec.Zone, Batch: 1000})
	if err != nil {
		return err
	}
	g.stats.Rounds = pass.Added
	return nil
}

// writeOutputs records outputs for three rounds in five, a few corrected.
func (g *generator) writeOutputs(ctx context.Context) error {
	rng, ins := g.rng, g.ins
	var nextOut int64
	if err := g.st.DB().QueryRowContext(ctx, "SELECT COALESCE(MAX(id), 0) FROM ledger_outputs").Scan(&nextOut); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	kindOf := map[int64]string{}
	for _, t := range g.tasks {
		kindOf[t.id] = t.kind
	}
	if err := ins.begin("ledger_outputs", []string{"id", "booking_id", "quantity", "unit", "note", "corrects_id", "created_by", "created_at"}); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	for _, b := range g.bookings {
		if b.state == store.BookingCancelled || !b.actualEnd.After(b.start) || rng.Float64() >= 0.6 {
			continue
		}
		u := genUnits[kindOf[b.task]]
		hours := float64(schedule.CardSeconds(len(b.cards), b.start, b.actualEnd)) / 3600
		q := math.Round(hours*u.perHour*b.busy*(0.6+0.8*rng.Float64())*100) / 100
		nextOut++
		at := b.actualEnd.Add(10 * time.Minute)
		if err := ins.add(nextOut, b.id, q, u.unit, "generated", nil, b.user, at); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		g.stats.Outputs++
		if rng.Float64() < 0.03 {
			first := nextOut
			nextOut++
			if err := ins.add(nextOut, b.id, math.Round(q*0.9*100)/100, u.unit, "corrected: counted a warm-up run", first, b.user, at.Add(time.Hour)); err != nil {
				return fmt.Errorf("%s: %w", op, err)
			}
			g.stats.Outputs++
		}
	}
	if err := ins.end(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return nil
}
