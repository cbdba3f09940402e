package store_test

import (
	"context"
	"math"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

func TestFindCardHoldsIsWhatHoldsACardNow(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 3)
		now := w.mustBook(t, w.member, w.core, 2, 0, 4)
		later := w.mustBook(t, w.member, w.normal, 1, 6, 8)
		holds, err := w.st.FindCardHolds(context.Background(), w.at(1))
		if err != nil {
			t.Fatal(err)
		}
		if len(holds) != 2 {
			t.Fatalf("holds at +1h: %+v, want the 2 cards of the first booking", holds)
		}
		h := holds[0]
		if h.BookingID != now.Booking.ID || h.TeamName != "llm" || h.TaskName != "pretrain" || h.Username != "dev" ||
			!h.EndAt.Equal(w.at(4)) || (h.UUID != now.Cards[0] && h.UUID != now.Cards[1]) {
			t.Errorf("hold %+v", h)
		}
		if holds, _ := w.st.FindCardHolds(context.Background(), w.at(7)); len(holds) != 1 || holds[0].BookingID != later.Booking.ID {
			t.Errorf("holds at +7h: %+v", holds)
		}
		// A released booking holds nothing from its release on.
		if _, err := w.st.ReleaseBooking(as(w.member), now.Booking.ID); err != nil {
			t.Fatal(err)
		}
		if holds, _ := w.st.FindCardHolds(context.Background(), w.at(0.5)); len(holds) != 0 {
			t.Errorf("holds after the release: %+v", holds)
		}
	})
}

func TestUnknownCardsWaitForRegistration(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 1)
		ctx := context.Background()
		seen := w.clock.Now()
		in := []store.UnknownCard{
			{UUID: "GPU-11111111-2222-3333-4444-555555555555", Host: "gpu-new-07", Index: 3, Name: "NVIDIA H20", MemTotalMiB: 97871, SeenAt: seen},
			{UUID: w.cards[0].UUID, Host: "gpu-01", SeenAt: seen}, // known: skipped
		}
		if err := w.st.RecordUnknownCards(ctx, in); err != nil {
			t.Fatal(err)
		}
		if err := w.st.RecordUnknownCards(ctx, in[:1]); err != nil { // again: refreshed, not duplicated
			t.Fatal(err)
		}
		pending, _, err := w.st.FindPendingCardsPage(ctx, 500, 0)
		if err != nil || len(pending) != 1 {
			t.Fatalf("pending %+v %v", pending, err)
		}
		p := pending[0]
		if p.HostName != "gpu-new-07" || p.GPUIndex != 3 || p.GPUName != "NVIDIA H20" || p.MemTotalMiB != 97871 {
			t.Errorf("pending %+v", p)
		}
		if _, err := w.st.FindHostByName(ctx, "gpu-new-07"); err != nil {
			t.Errorf("the new host was not created: %v", err)
		}
		if _, err := w.st.RegisterPendingCard(as(w.manager), p.ID, w.ct.ID); !errs.Is(err, errs.Forbidden) {
			t.Errorf("a manager registered a card: %v", err)
		}
		c, err := w.st.RegisterPendingCard(as(w.admin), p.ID, w.ct.ID)
		if err != nil {
			t.Fatal(err)
		}
		if c.UUID != p.UUID || c.GPUIndex != 3 || c.CardTypeID != w.ct.ID || c.Status != store.CardActive {
			t.Errorf("card %+v", c)
		}
		if pending, _, _ := w.st.FindPendingCardsPage(ctx, 500, 0); len(pending) != 0 {
			t.Errorf("still pending: %+v", pending)
		}
		// Registered now: reporting again parks nothing.
		if err := w.st.RecordUnknownCards(ctx, in[:1]); err != nil {
			t.Fatal(err)
		}
		if pending, _, _ := w.st.FindPendingCardsPage(ctx, 500, 0); len(pending) != 0 {
			t.Errorf("a registered card was parked again: %+v", pending)
		}
	})
}

func TestRollupsMergeAndFoldIntoHoursAndBookings(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 2)
		ctx := context.Background()
		b := w.mustBook(t, w.member, w.core, 1, 0, 2)
		var cardID int64
		for _, c := range w.cards {
			if c.UUID == b.Cards[0] {
				cardID = c.ID
			}
		}
		m0 := w.clock.Now().Truncate(time.Hour).Add(10 * time.Minute)
		minute := func(at time.Time, util float64, busy, heldIdle float64) store.Rollup {
			return store.Rollup{CardID: cardID, At: at, Samples: 60, UtilSum: util * 60, UtilSamples: 60, UtilMax: util, MemMaxMiB: 1000 * util,
				MemTotalMiB: 81559, SampledSeconds: 60, BusySeconds: busy, HeldSeconds: 60, HeldIdleSeconds: heldIdle, BookingID: b.Booking.ID}
		}
		err := w.st.SaveRollups(ctx, []store.Rollup{
			minute(m0, 80, 60, 0), minute(m0.Add(time.Minute), 2, 0, 60),
			{CardID: 999999, At: m0, Samples: 1}, // a card deleted meanwhile: dropped
		}, []store.UsageDelta{{BookingID: b.Booking.ID, SampledSeconds: 120, BusySeconds: 60, HeldIdleSeconds: 60}})
		if err != nil {
			t.Fatal(err)
		}
		// A late partial minute adds to the stored one.
		late := minute(m0, 20, 0, 0)
		late.Samples, late.UtilSum, late.UtilSamples, late.SampledSeconds, late.HeldSeconds, late.UtilMax, late.MemMaxMiB = 10, 200, 10, 10, 10, 90, 90000
		if err := w.st.SaveRollups(ctx, []store.Rollup{late}, []store.UsageDelta{{BookingID: b.Booking.ID, SampledSeconds: 10}}); err != nil {
			t.Fatal(err)
		}
		mins, err := w.st.FindMinuteRollups(ctx, cardID, m0, m0.Add(time.Hour))
		if err != nil || len(mins) != 2 {
			t.Fatalf("minutes %+v %v", mins, err)
		}
		if m := mins[0]; !m.At.Equal(m0) || m.Samples != 70 || m.UtilSum != 4800+200 || m.UtilMax != 90 || m.MemMaxMiB != 90000 ||
			m.SampledSeconds != 70 || m.BusySeconds != 60 || m.BookingID != b.Booking.ID {
			t.Errorf("merged minute %+v", m)
		}
		hours, err := w.st.FindHourRollups(ctx, m0.Truncate(time.Hour), m0.Truncate(time.Hour).Add(time.Hour))
		if err != nil || len(hours) != 1 {
			t.Fatalf("hours %+v %v", hours, err)
		}
		if h := hours[0]; h.Samples != 130 || h.BusySeconds != 60 || h.HeldIdleSeconds != 60 || h.SampledSeconds != 130 || h.UtilMax != 90 ||
			math.Abs(h.UtilAvg()-(4800+120+200)/130.0) > 1e-9 {
			t.Errorf("hour %+v (avg %v)", h, h.UtilAvg())
		}
		if s, err := w.st.HeldIdleSecondsSince(ctx, m0.Truncate(time.Hour)); err != nil || s != 60 {
			t.Errorf("held idle since: %v %v", s, err)
		}
		w.clock.Advance(30 * time.Minute)
		u, err := w.st.FindBookingUsage(ctx, b.Booking.ID)
		if err != nil {
			t.Fatal(err)
		}
		if u.BookedCardSeconds != 7200 || u.ElapsedCardSeconds != 1800 || u.SampledSeconds != 130 || u.BusySeconds != 60 ||
			u.IdleSeconds != 70 || u.HeldIdleSeconds != 60 || u.UpdatedAt == nil {
			t.Errorf("usage %+v", u)
		}
		// Retention: minutes go first, hours later.
		n, err := w.st.PruneRollups(ctx, m0.Add(time.Minute), time.Time{})
		if err != nil || n != 1 {
			t.Errorf("pruned %d %v, want the first minute", n, err)
		}
		if hours, _ := w.st.FindHourRollups(ctx, m0.Add(-time.Hour), m0.Add(time.Hour)); len(hours) != 1 {
			t.Errorf("an hour went with its minutes: %+v", hours)
		}
		if u, err := w.st.FindBookingUsage(ctx, 999999); !errs.Is(err, errs.NotFound) {
			t.Errorf("usage of a missing booking: %+v %v", u, err)
		}
	})
}
