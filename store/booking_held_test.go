package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"
	"time"

	"cardhour/schedule"
	"cardhour/store"
	"cardhour/store/storetest"
)

// TestHeldAssignmentsIndexedAgrees: the two-probe query finds exactly the
// assignments the scan finds, after bookings, preemptions, releases and
// cancellations, for windows that start inside, between and before them.
func TestHeldAssignmentsIndexedAgrees(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, d string) {
		w := newBookingWorld(t, d, 6)
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 3))
		var ids []int64
		for i := 0; i < 120; i++ {
			w.clock.Advance(time.Duration(rng.IntN(900_000)+1) * time.Microsecond)
			from := float64(rng.IntN(400)) / 8
			to := from + 0.25 + float64(rng.IntN(40))/8
			task := []*store.Task{w.normal, w.backfill, w.backfill, w.core}[rng.IntN(4)]
			if i%12 == 0 {
				from = 0
			}
			if r, err := w.book(t, w.member, task, 1+rng.IntN(3), from, to); err == nil {
				ids = append(ids, r.Booking.ID)
			}
		}
		ctx := as(w.member)
		for i, id := range ids {
			switch i % 6 {
			case 1:
				_, _ = w.st.ReleaseBooking(ctx, id)
			case 2:
				_, _ = w.st.CancelBooking(ctx, id)
			}
		}
		key := func(as []schedule.Assignment) string {
			var s []string
			for _, a := range as {
				s = append(s, fmt.Sprintf("%d/%d/%s/%s/%s", a.CardID, a.BookingID, a.Start.Format(time.RFC3339Nano), a.End.Format(time.RFC3339Nano), a.Priority))
			}
			sort.Strings(s)
			return fmt.Sprint(s)
		}
		checked := 0
		for i := 0; i < 200; i++ {
			from := w.at(float64(rng.IntN(480))/8 - 2)
			win := schedule.Interval{Start: from.Add(time.Duration(rng.IntN(1000)) * time.Microsecond), End: from.Add(time.Duration(1+rng.IntN(30)) * 15 * time.Minute)}
			except := int64(0)
			if i%3 == 0 {
				except = ids[rng.IntN(len(ids))]
			}
			scan, indexed, err := w.st.HeldBoth(context.Background(), w.ct.ID, win, except)
			if err != nil {
				t.Fatal(err)
			}
			if key(scan) != key(indexed) {
				t.Fatalf("window %v except %d:\nscan    %s\nindexed %s", win, except, key(scan), key(indexed))
			}
			checked += len(scan)
		}
		if checked == 0 {
			t.Fatal("no window met an assignment; the test checks nothing")
		}
	})
}
