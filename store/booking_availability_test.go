package store_test

import (
	"testing"

	"cardhour/store/storetest"
)

// TestAvailabilityCountsEachCardOncePerHour books a card back to back
// inside one hour (08:00–08:30, then 08:30–10:00) and two more cards
// across hours: each hour's free count is the cards not held at any moment
// of it, a card held twice in an hour counting once.
func TestAvailabilityCountsEachCardOncePerHour(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 4)
		// The world's clock is 08:00 on the hour.
		a := w.mustBook(t, w.member, w.normal, 1, 0, 0.5)
		w.mustBook(t, w.member, w.normal, 1, 0.5, 2) // the same card is free again: it goes there first
		w.mustBook(t, w.member, w.normal, 2, 1, 3)
		got, err := w.st.FindAvailability(as(w.member), w.at(0), 4)
		if err != nil {
			t.Fatal(err)
		}
		var free []int
		for _, av := range got {
			if av.CardTypeID == w.ct.ID {
				free = av.Free
			}
		}
		// 08h: one card (two bookings); 09h: three cards; 10h: two; 11h: none.
		want := []int{3, 1, 2, 4}
		if len(free) != len(want) {
			t.Fatalf("free = %v, want %v", free, want)
		}
		for i := range want {
			if free[i] != want[i] {
				t.Fatalf("free by hour = %v, want %v (first booking on %v)", free, want, a.Cards)
			}
		}
	})
}
