package store_test

import (
	"context"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

// TestTwoStoresCatchUpThroughTheLog: two processes booking one card type in
// turn each find their book one generation behind every time; they bring
// it up to date from the change log, not by reading it whole, and still
// never double book nor lose a quota's total. When the log no longer
// reaches back to a book (pruned), or holds a change it cannot replay (a
// cancel), the book is read whole once.
func TestTwoStoresCatchUpThroughTheLog(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
		one, two := openTwoStores(t, dialect, clock.Now)
		const cards, slots = 3, 6
		w := buildBookingWorld(t, one, clock, cards)
		book := func(st *store.Store, slot int) (*store.BookingResult, error) {
			return st.CreateBooking(as(w.member), store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 1,
				Start: w.at(float64(slot)), End: w.at(float64(slot) + 1)})
		}
		stores := []*store.Store{one, two}
		// In turn, twice as many requests as there are cards in each slot.
		var made []*store.BookingResult
		for i := 0; i < 2*cards*slots; i++ {
			r, err := book(stores[i%2], 1+(i/2)%slots)
			switch {
			case err == nil:
				made = append(made, r)
			case !errs.Is(err, errs.Conflict):
				t.Fatal(err)
			}
		}
		if len(made) != cards*slots {
			t.Fatalf("%d bookings made, want exactly %d", len(made), cards*slots)
		}
		storetest.AssertNoDoubleBooking(t, one)
		full, fromLog, rows := two.BookReads()
		if full != 1 || fromLog < int64(cards*slots-1) || rows == 0 {
			t.Fatalf("the second store read its book whole %d times and caught up from the log %d times (%d rows); want 1 and at least %d",
				full, fromLog, rows, cards*slots-1)
		}
		for i, st := range stores {
			drift, err := st.BookQuotaDrift(context.Background(), w.ct.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(drift) > 0 {
				t.Errorf("store %d: quota totals in the book differ from the database: %v", i+1, drift)
			}
		}

		// Pruned: the next catch-up finds generations missing and reads
		// the book whole.
		if _, err := book(one, slots+1); err != nil {
			t.Fatal(err)
		}
		if err := one.PruneBookChanges(context.Background(), clock.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		before, _, _ := two.BookReads()
		for n := 1; n < cards; n++ {
			if _, err := book(two, slots+1); err != nil {
				t.Fatalf("booking %d of slot %d after pruning: %v", n+1, slots+1, err)
			}
		}
		if _, err := book(two, slots+1); !errs.Is(err, errs.Conflict) {
			t.Fatalf("a booking past capacity after pruning got %v, want a conflict", err)
		}
		if after, _, _ := two.BookReads(); after != before+1 {
			t.Errorf("after pruning the second store read its book whole %d times, want once", after-before)
		}

		// A cancel is replayed from the log: the other store finds the
		// freed card without reading its book whole.
		if _, err := one.CancelBooking(as(w.member), made[0].Booking.ID); err != nil {
			t.Fatal(err)
		}
		before, _, _ = two.BookReads()
		slot := int(made[0].Booking.StartAt.Sub(w.at(0)) / time.Hour)
		if _, err := book(two, slot); err != nil {
			t.Fatalf("slot %d after the other store cancelled: %v", slot, err)
		}
		if after, _, _ := two.BookReads(); after != before {
			t.Errorf("after a cancel the second store read its book whole %d times, want none", after-before)
		}
		storetest.AssertNoDoubleBooking(t, one)
		// The first store catches up (a refused request takes the lock)
		// before the totals are compared.
		if _, err := book(one, slot); !errs.Is(err, errs.Conflict) {
			t.Fatalf("slot %d past capacity: got %v, want a conflict", slot, err)
		}
		for i, st := range stores {
			if drift, err := st.BookQuotaDrift(context.Background(), w.ct.ID); err != nil || len(drift) > 0 {
				t.Errorf("store %d at the end: quota drift %v, %v", i+1, drift, err)
			}
		}
	})
}

// TestTwoStoresReplayMovedBookings: a release, a cancel and an extension
// made through one store reach the other store's book through the log —
// it places against the freed or taken cards without reading its book
// whole — and neither store double books nor drifts from the quota totals.
func TestTwoStoresReplayMovedBookings(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		start := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
		clock := storetest.NewClock(start)
		one, two := openTwoStores(t, dialect, clock.Now)
		const cards = 3
		w := buildBookingWorld(t, one, clock, cards)
		base := w.at(0)
		at := func(h float64) time.Time { return base.Add(time.Duration(h * float64(time.Hour))) }
		book := func(st *store.Store, from, to float64) (*store.BookingResult, error) {
			return st.CreateBooking(as(w.member), store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 1,
				Start: at(from), End: at(to)})
		}
		fill := func(from, to float64) []*store.BookingResult {
			t.Helper()
			var out []*store.BookingResult
			for i := 0; i < cards; i++ {
				r, err := book([]*store.Store{one, two}[i%2], from, to)
				if err != nil {
					t.Fatalf("filling [%v, %v): booking %d: %v", from, to, i+1, err)
				}
				out = append(out, r)
			}
			if _, err := book(two, from, to); !errs.Is(err, errs.Conflict) {
				t.Fatalf("[%v, %v) past capacity: got %v, want a conflict", from, to, err)
			}
			return out
		}
		// fromLog runs the change in store one, then fn in store two, and
		// checks that store two caught up from the log, never whole. The
		// quota totals are compared once store one has caught up too, with
		// a request refused in the full hour fullHour (its generation logs
		// nothing else).
		fromLog := func(what string, change func() error, fn func(), fullHour float64) {
			t.Helper()
			if err := change(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			full, logged, _ := two.BookReads()
			fn()
			if f, l, _ := two.BookReads(); f != full || l == logged {
				t.Errorf("after a %s in the first store the second read its book whole %d times and caught up from the log %d times; want none and at least once",
					what, f-full, l-logged)
			}
			storetest.AssertNoDoubleBooking(t, one)
			if _, err := book(one, fullHour, fullHour+1); !errs.Is(err, errs.Conflict) {
				t.Fatalf("after a %s, [%v, %v) past capacity: got %v, want a conflict", what, fullHour, fullHour+1, err)
			}
			for i, st := range []*store.Store{one, two} {
				if drift, err := st.BookQuotaDrift(context.Background(), w.ct.ID); err != nil || len(drift) > 0 {
					t.Errorf("after a %s, store %d: quota drift %v, %v", what, i+1, drift, err)
				}
			}
		}

		// Cancel: the freed card is bookable through the other store.
		slot2 := fill(2, 3)
		fromLog("cancel", func() error { _, err := one.CancelBooking(as(w.member), slot2[1].Booking.ID); return err }, func() {
			if _, err := book(two, 2, 3); err != nil {
				t.Fatalf("the cancelled booking's card: %v", err)
			}
		}, 2)

		// Release at the very instant it starts (before, a release is
		// refused: that is a cancel): nothing was used, the whole span is
		// free again.
		slot4 := fill(4, 5)
		clock.Advance(at(4).Sub(clock.Now()))
		fromLog("release at the start", func() error { _, err := one.ReleaseBooking(as(w.member), slot4[0].Booking.ID); return err }, func() {
			if _, err := book(two, 4, 5); err != nil {
				t.Fatalf("the released booking's card: %v", err)
			}
		}, 4)

		// Extension: the longer booking takes its card in the next hour,
		// so that hour holds one booking fewer.
		slot6 := fill(6, 7)
		fromLog("extension", func() error { _, err := one.ExtendBooking(as(w.member), slot6[2].Booking.ID, at(8)); return err }, func() {
			for i := 0; i < cards-1; i++ {
				if _, err := book(two, 7, 8); err != nil {
					t.Fatalf("booking %d next to the extension: %v", i+1, err)
				}
			}
			if _, err := book(two, 7, 8); !errs.Is(err, errs.Conflict) {
				t.Fatalf("the extended booking's card got %v, want a conflict", err)
			}
		}, 7)

		// Release of a running booking: its card is free from now on.
		slot10 := fill(10, 12)
		clock.Advance(start.Add(10*time.Hour + 30*time.Minute).Sub(clock.Now()))
		fromLog("release of a running booking", func() error { _, err := one.ReleaseBooking(as(w.member), slot10[1].Booking.ID); return err }, func() {
			if _, err := book(two, 10.75, 12); err != nil {
				t.Fatalf("the rest of the released booking's span: %v", err)
			}
			if _, err := book(two, 11, 12); !errs.Is(err, errs.Conflict) {
				t.Fatalf("past capacity after the release: got %v, want a conflict", err)
			}
		}, 11)
	})
}
