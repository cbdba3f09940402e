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

		// A cancel is not replayed: the other store reads whole and finds
		// the freed card.
		if _, err := one.CancelBooking(as(w.member), made[0].Booking.ID); err != nil {
			t.Fatal(err)
		}
		before, _, _ = two.BookReads()
		slot := int(made[0].Booking.StartAt.Sub(w.at(0)) / time.Hour)
		if _, err := book(two, slot); err != nil {
			t.Fatalf("slot %d after the other store cancelled: %v", slot, err)
		}
		if after, _, _ := two.BookReads(); after != before+1 {
			t.Errorf("after a cancel the second store read its book whole %d times, want once", after-before)
		}
		storetest.AssertNoDoubleBooking(t, one)
		for i, st := range stores {
			if drift, err := st.BookQuotaDrift(context.Background(), w.ct.ID); err != nil || len(drift) > 0 {
				t.Errorf("store %d at the end: quota drift %v, %v", i+1, drift, err)
			}
		}
	})
}
