package store_test

import (
	"context"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

func TestFindLongStatesListsCardsLongIdleOrLongFull(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 3)
		ctx := context.Background()
		day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
		idle, full, mixed := w.cards[0], w.cards[1], w.cards[2]
		var minutes []store.Rollup
		hour := func(card *store.Card, at time.Time, busy, fullS float64) {
			minutes = append(minutes, store.Rollup{CardID: card.ID, At: at, Samples: 60, SampledSeconds: 3600, BusySeconds: busy, FullSeconds: fullS})
		}
		for h := 0; h < 22; h++ {
			at := day.Add(time.Duration(h) * time.Hour)
			hour(idle, at, 0, 0)
			hour(full, at, 3600, 3600)
			if h < 12 {
				hour(mixed, at, 0, 0) // 12 h idle …
			} else {
				hour(mixed, at, 3600, 0) // … and 10 h busy: neither
			}
		}
		// Hours outside the day do not count: the mixed card was idle the day before.
		for h := 1; h <= 10; h++ {
			hour(mixed, day.Add(-time.Duration(h)*time.Hour), 0, 0)
		}
		hour(mixed, day.Add(24*time.Hour), 0, 0)
		if err := w.st.SaveRollups(ctx, minutes, nil); err != nil {
			t.Fatal(err)
		}
		got, err := w.st.FindLongStates(ctx, day, day.Add(24*time.Hour), 20)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("long states %+v, want the idle and the full card", got)
		}
		i, f := got[0], got[1]
		if i.CardID != idle.ID || i.UUID != idle.UUID || i.HostName != "gpu-01" || i.GPUIndex != 0 || i.CardTypeName != "H800" ||
			i.SampledHours != 22 || i.BusyHours != 0 || i.IdleHours != 22 || !i.LongIdle || i.LongFull {
			t.Errorf("idle card %+v", i)
		}
		if f.CardID != full.ID || f.GPUIndex != 1 || f.FullHours != 22 || f.BusyHours != 22 || f.IdleHours != 0 || f.LongIdle || !f.LongFull {
			t.Errorf("full card %+v", f)
		}
		if got, err := w.st.FindLongStates(ctx, day, day.Add(24*time.Hour), 12); err != nil || len(got) != 3 || !got[2].LongIdle || got[2].IdleHours != 12 {
			t.Errorf("at 12 h: %+v %v", got, err)
		}
		_, err = w.st.FindLongStates(ctx, day, day, 20)
		storetest.AssertCode(t, err, errs.Invalid, "field.period_invalid")
		_, err = w.st.FindLongStates(ctx, day, day.Add(time.Hour), 0)
		storetest.AssertCode(t, err, errs.Invalid, "field.hours_range")
	})
}
