package store_test

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"cardhour/schedule"
	"cardhour/store"
	"cardhour/store/storetest"
)

// TestQuotaUseSQLAgreesWithQuotaUse: the database's sum equals the Go sum,
// to the second, on bookings in every state with windows that start and
// end at odd microseconds, for quota windows that cut bookings in two.
func TestQuotaUseSQLAgreesWithQuotaUse(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newBookingWorld(t, d, 8)
		rng := rand.New(rand.NewPCG(1, 2))
		var ids []int64
		for i := 0; i < 60; i++ {
			// Odd microseconds on the clock make on-demand starts fractional.
			w.clock.Advance(time.Duration(rng.IntN(900_000)+1) * time.Microsecond)
			from := float64(rng.IntN(200)) / 7
			to := from + 0.1 + float64(rng.IntN(50))/9
			task := []*store.Task{w.normal, w.backfill, w.core}[rng.IntN(3)]
			if i%10 == 0 {
				from = 0
			}
			r, err := w.book(t, w.member, task, 1+rng.IntN(2), from, to)
			if err != nil {
				continue
			}
			ids = append(ids, r.Booking.ID)
		}
		if len(ids) < 20 {
			t.Fatalf("only %d bookings placed", len(ids))
		}
		ctx := as(w.member)
		for i, id := range ids {
			switch i % 5 {
			case 1:
				_, _ = w.st.ReleaseBooking(ctx, id)
			case 2:
				_, _ = w.st.CancelBooking(ctx, id)
			}
		}
		w.clock.Advance(90 * time.Minute)
		for i, id := range ids {
			if i%5 == 3 {
				_, _ = w.st.ReleaseBooking(ctx, id)
			}
		}
		now := w.clock.Now()
		windows := []schedule.Interval{
			{Start: now.Add(-48 * time.Hour), End: now.Add(30 * 24 * time.Hour)},
			{Start: now.Add(-time.Hour - 123456*time.Microsecond), End: now.Add(5*time.Hour + 654321*time.Microsecond)},
			{Start: now.Add(3 * time.Hour), End: now.Add(9 * time.Hour)},
			{Start: now.Add(100 * time.Hour), End: now.Add(200 * time.Hour)},
		}
		for _, qw := range windows {
			for _, bw := range windows {
				for _, except := range []int64{0, ids[3]} {
					u, p, u2, p2, err := w.st.QuotaUseBoth(context.Background(), w.team.ID, w.ct.ID, qw, bw, except)
					if err != nil {
						t.Fatal(err)
					}
					if u != u2 || p != p2 {
						t.Errorf("quota window %v, booking window %v, except %d: quotaUse %d s peak %d, quotaUseSQL %d s peak %d", qw, bw, except, u, p, u2, p2)
					}
				}
			}
		}
	})
}
