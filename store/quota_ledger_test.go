package store_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"cardhour/schedule"
	"cardhour/store"
	"cardhour/store/storetest"
)

// TestQuotaTotalsFollowEveryBookingChange drives a random mix of every
// booking change — on-demand and advance bookings, queued ones, core
// preempting backfill, releases, cancels, extensions, the clock moving
// bookings along, quotas renewed — across two consecutive quotas, and after
// each step compares every quota's running total with a plain count of its
// bookings, and the card type's placement book with the held assignments
// in the database.
func TestQuotaTotalsFollowEveryBookingChange(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 4)
		ctx := context.Background()
		// Split the world's quota in two at +30 h so that bookings straddle.
		split := w.at(30)
		in := store.QuotaInput{TeamID: w.team.ID, CardTypeID: w.ct.ID, CardHours: 40, ValidFrom: w.quota.ValidFrom, ExpiresAt: split}
		if _, err := w.st.UpdateQuota(as(w.admin), w.quota.ID, in); err != nil {
			t.Fatal(err)
		}
		second, err := w.st.CreateQuota(as(w.admin), store.QuotaInput{TeamID: w.team.ID, CardTypeID: w.ct.ID, CardHours: 60, ValidFrom: split, ExpiresAt: w.at(24 * 20)})
		if err != nil {
			t.Fatal(err)
		}
		check := func(step string) {
			t.Helper()
			drift, err := w.st.QuotaLedgerDrift(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(drift) > 0 {
				t.Fatalf("after %s: %v", step, drift)
			}
		}
		check("setup")
		rng := rand.New(rand.NewPCG(1, uint64(len(dialect))))
		wrng := rand.New(rand.NewPCG(2, 2)) // the windows checked, apart so the steps stay the same
		tasks := []*store.Task{w.core, w.normal, w.backfill}
		var ids []int64
		pick := func() int64 { return ids[rng.IntN(len(ids))] }
		for step := 0; step < 160; step++ {
			var what string
			switch op := rng.IntN(10); {
			case op < 4 || len(ids) == 0:
				what = "book"
				from := float64(rng.IntN(60)) - 0.5*float64(rng.IntN(2))
				if from < 0 {
					from = 0
				}
				task := tasks[rng.IntN(len(tasks))]
				r, err := w.st.CreateBooking(as(w.member), store.BookingRequest{TaskID: task.ID, CardTypeID: w.ct.ID, Count: 1 + rng.IntN(3),
					Start: w.at(from), End: w.at(from + 0.5 + float64(rng.IntN(12))), Queue: rng.IntN(2) == 0})
				if err == nil {
					ids = append(ids, r.Booking.ID)
				}
			case op < 5:
				what = "release"
				// Mostly a running booking: before its start a release is a cancel.
				running, err := w.st.FindBookings(as(w.admin), store.BookingFilter{States: []string{store.BookingActive}})
				if err != nil {
					t.Fatal(err)
				}
				id := pick()
				if len(running) > 0 && rng.IntN(4) > 0 {
					id = running[rng.IntN(len(running))].ID
				}
				_, _ = w.st.ReleaseBooking(as(w.member), id)
			case op < 6:
				what = "cancel"
				_, _ = w.st.CancelBooking(as(w.member), pick())
			case op < 7:
				what = "extend"
				id := pick()
				b, err := w.st.FindBookingByID(as(w.member), id)
				if err == nil {
					_, _ = w.st.ExtendBooking(as(w.manager), id, b.EndAt.Add(time.Duration(1+rng.IntN(8))*30*time.Minute))
				}
			case op < 9:
				what = "tick"
				w.clock.Advance(time.Duration(rng.IntN(5)) * 37 * time.Minute)
				if _, err := w.st.Tick(ctx); err != nil {
					t.Fatal(err)
				}
			default:
				what = "renew"
				in := store.QuotaInput{TeamID: w.team.ID, CardTypeID: w.ct.ID, CardHours: 60 + float64(rng.IntN(40)),
					ValidFrom: split.Add(time.Duration(rng.IntN(3)) * time.Hour), ExpiresAt: w.at(24 * float64(10+rng.IntN(10)))}
				if _, err := w.st.UpdateQuota(as(w.admin), second.ID, in); err != nil {
					t.Fatalf("renew: %v", err)
				}
			}
			check(what)
			// The placement book agrees with the database on a window from
			// now, whatever the step changed.
			from := w.clock.Now().Add(time.Duration(wrng.IntN(40)) * time.Hour)
			win := schedule.Interval{Start: from, End: from.Add(time.Duration(1+wrng.IntN(30)) * time.Hour)}
			book, scan, err := w.st.BookDrift(ctx, w.ct.ID, win)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(book, scan) {
				t.Fatalf("after %s, window %v: the book says %v, the database %v", what, win, book, scan)
			}
		}
		// The mix must have reached the states that move the totals.
		seen := map[string]bool{}
		for _, id := range ids {
			b, err := w.st.FindBookingByID(as(w.admin), id)
			if err != nil {
				t.Fatal(err)
			}
			seen[b.State] = true
		}
		for _, state := range []string{store.BookingReleased, store.BookingCancelled, store.BookingCompleted, store.BookingPreempted} {
			if !seen[state] {
				t.Errorf("no booking ended %s; states seen %v", state, seen)
			}
		}
	})
}

// TestQuotaLedgerMigrationCountsExistingBookings rolls the ledger's
// migration back under existing bookings (running, released early,
// preempted, cancelled, straddling the quota's start) and applies it again:
// its backfill must give each quota what its bookings draw.
func TestQuotaLedgerMigrationCountsExistingBookings(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 5)
		ctx := context.Background()
		r := w.mustBook(t, w.member, w.normal, 1, 0, 5)
		w.mustBook(t, w.member, w.backfill, 2, 0, 6)
		if got := w.mustBook(t, w.member, w.core, 3, 1, 4); len(got.Preempted) != 1 {
			t.Fatalf("the core booking preempted %v, want the backfill", got.Preempted)
		}
		c := w.mustBook(t, w.member, w.normal, 1, 10, 12)
		w.mustBook(t, w.member, w.normal, 1, 20, 26)
		w.clock.Advance(90*time.Minute + 1234567*time.Microsecond)
		if _, err := w.st.ReleaseBooking(as(w.member), r.Booking.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := w.st.CancelBooking(as(w.member), c.Booking.ID); err != nil {
			t.Fatal(err)
		}
		// A quota that starts inside a booking counts only its part.
		if _, err := w.st.UpdateQuota(as(w.admin), w.quota.ID, store.QuotaInput{TeamID: w.team.ID, CardTypeID: w.ct.ID, CardHours: 500,
			ValidFrom: w.at(2.25), ExpiresAt: w.at(23)}); err != nil {
			t.Fatal(err)
		}
		before, err := w.st.FindQuotas(ctx, store.QuotaFilter{TeamIDs: []int64{w.team.ID}})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.st.MigrateDownTo(ctx, 4); err != nil {
			t.Fatal(err)
		}
		if err := w.st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		drift, err := w.st.QuotaLedgerDrift(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(drift) > 0 {
			t.Fatalf("after the backfill: %v", drift)
		}
		after, err := w.st.FindQuotas(ctx, store.QuotaFilter{TeamIDs: []int64{w.team.ID}})
		if err != nil {
			t.Fatal(err)
		}
		for i := range before {
			if before[i].UsedCardSeconds != after[i].UsedCardSeconds || before[i].UsedCardSeconds == 0 {
				t.Errorf("quota %d: %d card-seconds before the migration ran again, %d after", before[i].ID, before[i].UsedCardSeconds, after[i].UsedCardSeconds)
			}
		}
	})
}
