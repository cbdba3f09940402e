package store_test

import (
	"sync"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

// TestTwoProcessesKeepTheirBooksCurrent runs two stores on one database, as
// two server processes would, each with its own placement books. Bookings
// from both fill every slot exactly; then one process cancels and the other
// must see the freed cards at once (its book is stale, the generation says
// so), and never place on a card the first one took.
func TestTwoProcessesKeepTheirBooksCurrent(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
		one, two := openTwoStores(t, dialect, clock.Now)
		const cards, slots = 3, 8
		w := buildBookingWorld(t, one, clock, cards)
		book := func(st *store.Store, slot int) (*store.BookingResult, error) {
			return st.CreateBooking(as(w.member), store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 1,
				Start: w.at(float64(slot)), End: w.at(float64(slot) + 1)})
		}
		// Both processes book every slot, concurrently, twice over.
		var mu sync.Mutex
		var made []*store.BookingResult
		var wg sync.WaitGroup
		for i := 0; i < 2*cards*slots; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				st := one
				if i%2 == 1 {
					st = two
				}
				r, err := book(st, 1+i%slots)
				switch {
				case err == nil:
					mu.Lock()
					made = append(made, r)
					mu.Unlock()
				case !errs.Is(err, errs.Conflict):
					t.Error(err)
				}
			}(i)
		}
		wg.Wait()
		if len(made) != cards*slots {
			t.Fatalf("%d bookings made, want exactly %d", len(made), cards*slots)
		}
		// The second process frees one card in each slot; the first books
		// them again, and nothing more.
		for _, r := range made[:slots] {
			if _, err := two.CancelBooking(as(w.member), r.Booking.ID); err != nil {
				t.Fatal(err)
			}
		}
		freed := map[time.Time]int{}
		for _, r := range made[:slots] {
			freed[r.Booking.StartAt]++
		}
		for slot := 1; slot <= slots; slot++ {
			for n := 0; n < freed[w.at(float64(slot))]; n++ {
				if _, err := book(one, slot); err != nil {
					t.Fatalf("slot %d after the other process cancelled: %v", slot, err)
				}
			}
			if _, err := book(one, slot); !errs.Is(err, errs.Conflict) {
				t.Fatalf("slot %d: a booking past capacity got %v, want a conflict", slot, err)
			}
		}
		// A new price set through one process applies to the next booking
		// in both, whose books were current a moment ago.
		in := h100(w.ct.Name)
		in.PriceFen = w.ct.PriceFen + 1234
		if _, err := one.UpdateCardType(as(w.admin), w.ct.ID, in); err != nil {
			t.Fatal(err)
		}
		for i, st := range []*store.Store{one, two} {
			r, err := st.CreateBooking(as(w.member), store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 1,
				Start: w.at(float64(slots + 2 + i)), End: w.at(float64(slots + 3 + i))})
			if err != nil {
				t.Fatal(err)
			}
			if r.Booking.PriceFen != in.PriceFen {
				t.Errorf("process %d booked at %d fen an hour after the price became %d", i+1, r.Booking.PriceFen, in.PriceFen)
			}
		}
		storetest.AssertNoDoubleBooking(t, one)
	})
}
