package store_test

import (
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

// TestUseTemplateCommitsTaskAndBookingTogether: a template's use makes its
// task and its booking in one transaction, on both dialects. A use the
// booking rules refuse (no capacity) writes nothing: no task, no booking,
// no audit entry; its preview answers the same refusal and writes nothing
// either. A good use places the booking and names its cards.
func TestUseTemplateCommitsTaskAndBookingTogether(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 4)
		tpl, err := w.st.CreateTemplateFromTask(as(w.member), store.TemplateInput{Name: "three cards", TaskID: w.normal.ID,
			CardTypeID: w.ct.ID, Count: 3, Duration: 2 * time.Hour})
		if err != nil {
			t.Fatal(err)
		}
		w.mustBook(t, w.member, w.normal, 2, 1, 3)
		before, tasks := snapshot(t, w.st), countRows(t, w.st, "tasks")

		if _, err := w.st.PreviewTemplate(as(w.member), tpl.ID, "round 2", w.at(1), false); !errs.Is(err, errs.Conflict) {
			t.Errorf("preview of 3 cards where 2 are free: %v, want a conflict", err)
		}
		task, res, err := w.st.UseTemplate(as(w.member), tpl.ID, "round 2", w.at(1), false)
		wantCode(t, err, errs.Conflict, "booking.no_capacity")
		if task != nil || res != nil {
			t.Errorf("a refused use answered task %+v and booking %+v", task, res)
		}
		if after := snapshot(t, w.st); after != before || countRows(t, w.st, "tasks") != tasks {
			t.Errorf("a refused use wrote rows: bookings, cards, audit, notices %v → %v; tasks %d → %d", before, after, tasks, countRows(t, w.st, "tasks"))
		}

		pv, err := w.st.PreviewTemplate(as(w.member), tpl.ID, "round 2", w.at(4), false)
		if err != nil || !pv.Placed || pv.Task.Name != "round 2" || pv.CardSeconds != 3*2*3600 {
			t.Fatalf("preview of a free window: %+v, %v", pv, err)
		}
		if after := snapshot(t, w.st); after != before || countRows(t, w.st, "tasks") != tasks {
			t.Errorf("the preview wrote rows")
		}
		task, res, err = w.st.UseTemplate(as(w.member), tpl.ID, "round 2", w.at(4), false)
		if err != nil {
			t.Fatal(err)
		}
		if res.Booking.TaskID != task.ID || res.Booking.State != store.BookingConfirmed || len(res.Cards) != 3 || len(res.View.Assigned) != 3 ||
			res.View.Assigned[0].Host != "gpu-01" {
			t.Errorf("use of a free window: task %+v, booking %+v, view %+v", task, res.Booking, res.View)
		}
		if _, _, err := w.st.UseTemplate(as(w.member), tpl.ID, "round 2", w.at(8), false); !errs.Is(err, errs.Conflict) {
			t.Errorf("a second task of the same name: %v, want a conflict", err)
		}
		storetest.AssertNoDoubleBooking(t, w.st)
	})
}
