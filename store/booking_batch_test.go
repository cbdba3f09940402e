package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"cardhour/errs"
	"cardhour/schedule"
	"cardhour/store"
	"cardhour/store/storetest"
)

// TestBookingsInOneTransaction runs requests of one card type as one batch
// (group commit): each is placed against what the ones before it took, a
// core booking preempts a backfill booking written in the same transaction,
// refusals leave the others alone, and a request whose insert fails is
// retried apart so that the others still land. Afterwards the ids, audit
// entries, quota totals and the placement book are what one-by-one
// bookings would have left.
func TestBookingsInOneTransaction(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 4)
		doomed, err := w.st.CreateTask(as(w.member), store.TaskInput{TeamID: w.team.ID, Name: "doomed", Priority: schedule.Normal,
			EstimateCardHours: 10, DataReadiness: schedule.DataReady, VRAMGiB: 40, Precision: "bf16"})
		if err != nil {
			t.Fatal(err)
		}
		req := func(task *store.Task, count int, fromH, toH float64) store.BookingRequest {
			return store.BookingRequest{TaskID: task.ID, CardTypeID: w.ct.ID, Count: count, Start: w.at(fromH), End: w.at(toH)}
		}
		ctxs := []context.Context{as(w.member), as(w.member), as(w.outsider), as(w.member), as(w.member), as(w.member)}
		reqs := []store.BookingRequest{
			req(w.backfill, 4, 1, 3), // every card, written first
			req(w.core, 2, 2, 4),     // needs the backfill's cards from +2 h: preempts it
			req(w.core, 1, 5, 6),     // another team's member: refused
			req(w.normal, 4, 2, 4),   // two cards left from +2 h: no capacity
			req(doomed, 1, 7, 8),     // its task is gone before the batch: the insert fails
			req(w.normal, 2, 2, 4),   // the two cards left
		}
		reqs[2].TaskID = w.core.ID
		before := snapshot(t, w.st)
		res, errl := w.st.CreateBookingsTogether(ctxs, reqs, func() {
			if _, err := w.st.DB().Exec("DELETE FROM tasks WHERE id = ?", doomed.ID); err != nil {
				t.Fatal(err)
			}
		})
		for i, want := range []errs.Code{"", "", errs.Invalid, errs.Conflict, "x", ""} {
			switch got := errs.CodeOf(errl[i]); {
			case want == "x" && errl[i] == nil:
				t.Errorf("request %d: booked a task that is gone", i)
			case want != "x" && got != want:
				t.Errorf("request %d: error %v, want code %q", i, errl[i], want)
			}
		}
		if t.Failed() {
			t.FailNow()
		}
		backfill, core, normal := res[0], res[1], res[5]
		ids := map[int64]bool{}
		for _, r := range []*store.BookingResult{backfill, core, normal} {
			if r.Booking.ID <= 0 || ids[r.Booking.ID] {
				t.Fatalf("booking id %d: want a new positive id", r.Booking.ID)
			}
			ids[r.Booking.ID] = true
			if r.View == nil || r.View.ID != r.Booking.ID {
				t.Errorf("view of booking %d shows id %v", r.Booking.ID, r.View)
			}
		}
		if fmt.Sprint(core.Preempted) != fmt.Sprint([]int64{backfill.Booking.ID}) {
			t.Errorf("core booking preempted %v, want [%d]", core.Preempted, backfill.Booking.ID)
		}
		if len(core.Cards) != 2 || len(normal.Cards) != 2 {
			t.Errorf("cards: core %v, normal %v; want two each", core.Cards, normal.Cards)
		}
		victim, err := w.st.FindBookingByID(context.Background(), backfill.Booking.ID)
		if err != nil {
			t.Fatal(err)
		}
		if victim.State != store.BookingPreempted || victim.NoteKey != store.NotePreemptedBy || victim.PreemptedBy() != core.Booking.ID ||
			victim.EndedAt == nil || !victim.EndedAt.Equal(w.at(2)) {
			t.Errorf("backfill booking: %s %q %v ended %v; want preempted by #%d at +2 h", victim.State, victim.NoteKey, victim.NoteArgs, victim.EndedAt, core.Booking.ID)
		}
		after := snapshot(t, w.st)
		// Three bookings; 4 + 2 + 2 held-card rows; a create entry each and
		// the preemption's; one notification to the backfill's owner.
		if want := [4]int64{before[0] + 3, before[1] + 8, before[2] + 4, before[3] + 1}; after != want {
			t.Errorf("rows (bookings, booking_cards, audit_log, notifications) = %v, want %v", after, want)
		}
		for _, r := range []*store.BookingResult{backfill, core, normal} {
			es, _, err := w.st.FindAuditEntries(context.Background(), store.AuditFilter{Entity: "booking", EntityID: r.Booking.ID})
			if err != nil {
				t.Fatal(err)
			}
			var created *store.AuditEntry
			for i := range es {
				if es[i].Action == "create" {
					created = &es[i]
				}
			}
			if created == nil || created.AfterJSON == nil || created.ActorName != "dev" {
				t.Fatalf("booking %d: create entry %+v", r.Booking.ID, created)
			}
			var b struct {
				ID int64 `json:"id"`
			}
			if err := json.Unmarshal([]byte(*created.AfterJSON), &b); err != nil || b.ID != r.Booking.ID {
				t.Errorf("booking %d: audit JSON names id %d (%v)", r.Booking.ID, b.ID, err)
			}
		}
		drift, err := w.st.QuotaLedgerDrift(context.Background())
		if err != nil || len(drift) > 0 {
			t.Errorf("quota totals: %v %v", drift, err)
		}
		book, scan, err := w.st.BookDrift(context.Background(), w.ct.ID, schedule.Interval{Start: w.at(0), End: w.at(24)})
		if err != nil || fmt.Sprint(book) != fmt.Sprint(scan) {
			t.Errorf("placement book %v, database %v (%v)", book, scan, err)
		}
		storetest.AssertNoDoubleBooking(t, w.st)
		// The next booking sees the batch: nothing is free from +2 h to +4 h.
		if _, err := w.book(t, w.member, w.normal, 1, 2, 4); !errs.Is(err, errs.Conflict) {
			t.Errorf("booking a full window after the batch: %v, want a conflict", err)
		}
	})
}

// TestBookingsJoinBatchUnderLock: requests that queued while a batch waited
// for its card type's lock are written in that batch's transaction (one
// lock, one generation), not left for a transaction of their own.
func TestBookingsJoinBatchUnderLock(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 4)
		gen := func() int64 {
			var g int64
			if err := w.st.DB().QueryRow("SELECT booking_gen FROM card_types WHERE id = ?", w.ct.ID).Scan(&g); err != nil {
				t.Fatal(err)
			}
			return g
		}
		var ctxs []context.Context
		var reqs []store.BookingRequest
		for i := range 4 {
			ctxs = append(ctxs, as(w.member))
			reqs = append(reqs, store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: 1, Start: w.at(float64(1 + i)), End: w.at(float64(2 + i))})
		}
		before := gen()
		res, errl, left := w.st.CreateBookingsJoining(ctxs, reqs)
		for i := range reqs {
			if errl[i] != nil || res[i] == nil || res[i].Booking == nil {
				t.Fatalf("request %d: %v, %v; want a booking", i, res[i], errl[i])
			}
		}
		if left != 0 {
			t.Errorf("%d requests still waiting after the batch, want 0", left)
		}
		if got := gen() - before; got != 1 {
			t.Errorf("card type generation rose by %d, want 1 (one transaction)", got)
		}
	})
}
