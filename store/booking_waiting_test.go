package store_test

import (
	"context"
	"testing"
	"time"

	"cardhour/store"
	"cardhour/store/storetest"
)

func TestFindWaitingCountsTheQueuePerCardType(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 1)
		ctx := context.Background()
		// Another type, with nothing waiting: left out.
		MustCardType(t, w.st, "L40S")
		if got, err := w.st.FindWaiting(ctx); err != nil || len(got) != 0 {
			t.Fatalf("waiting with an empty queue: %+v %v", got, err)
		}
		w.mustBook(t, w.member, w.normal, 1, 0, 4)
		queue := func(fromH float64) *store.BookingResult {
			t.Helper()
			r, err := w.st.CreateBooking(as(w.member), store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 1,
				Start: w.at(fromH), End: w.at(fromH + 1), Queue: true})
			if err != nil || r.Booking.State != store.BookingPending {
				t.Fatalf("queue: %+v %v", r, err)
			}
			return r
		}
		first := queue(1)
		w.clock.Advance(time.Minute)
		queue(2)
		w.clock.Advance(time.Minute)
		if _, err := w.st.UpdateTeam(as(w.admin), w.team.ID, store.TeamInput{Name: w.team.Name, RequiresApproval: true}); err != nil {
			t.Fatal(err)
		}
		if r := w.mustBook(t, w.member, w.normal, 1, 5, 6); r.Booking.WaitReason != store.WaitApproval {
			t.Fatalf("approval request %+v", r.Booking)
		}
		got, err := w.st.FindWaiting(ctx)
		if err != nil || len(got) != 1 {
			t.Fatalf("waiting %+v %v", got, err)
		}
		g := got[0]
		if g.CardTypeID != w.ct.ID || g.CardType != "H800" || g.Waiting != 3 {
			t.Errorf("waiting %+v", g)
		}
		if g.OldestSince == nil || !g.OldestSince.Equal(first.Booking.SubmittedAt) {
			t.Errorf("oldest since %v, want %v", g.OldestSince, first.Booking.SubmittedAt)
		}
	})
}
