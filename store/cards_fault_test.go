package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

// uuidsOf lists the cards' uuids.
func uuidsOf(cs ...*store.Card) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.UUID)
	}
	return out
}

func TestFaultyCardIsNeverPlacedUntilAnAdminClearsIt(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 4)
		ctx := context.Background()
		faulty, spare := w.cards[0], w.cards[3]
		// One card under maintenance: a fault reading changes nothing there.
		in := store.CardInput{UUID: spare.UUID, GPUIndex: spare.GPUIndex, HostID: spare.HostID, CardTypeID: spare.CardTypeID, Status: store.CardMaintenance}
		if _, err := w.st.UpdateCard(as(w.admin), spare.ID, in); err != nil {
			t.Fatal(err)
		}
		at := w.clock.Now().Add(-time.Minute)
		before := auditCount(t, w.st)
		changed, err := w.st.MarkCardFault(asActor(), faulty.ID, "GPU requires reset", at)
		if err != nil || !changed {
			t.Fatalf("mark fault: changed %v, %v", changed, err)
		}
		was, now := wantAudit(t, w.st, before, "fault", "card", faulty.ID, true, true)
		if was["status"] != store.CardActive || now["status"] != store.CardFault || now["fault_reason"] != "GPU requires reset" {
			t.Errorf("audit before %v after %v", was, now)
		}
		got, err := w.st.FindCardByID(ctx, faulty.ID)
		if err != nil || got.Status != store.CardFault || got.FaultReason != "GPU requires reset" || got.FaultAt == nil || !got.FaultAt.Equal(at) {
			t.Fatalf("faulty card %+v %v", got, err)
		}
		// Every later faulty sample: nothing changes, nothing is audited.
		before = auditCount(t, w.st)
		if changed, err := w.st.MarkCardFault(ctx, faulty.ID, "XID 79", w.clock.Now()); err != nil || changed {
			t.Errorf("second mark: changed %v, %v", changed, err)
		}
		if changed, err := w.st.MarkCardFault(ctx, spare.ID, "XID 79", w.clock.Now()); err != nil || changed {
			t.Errorf("mark of a card under maintenance: changed %v, %v", changed, err)
		}
		if n := auditCount(t, w.st); n != before {
			t.Errorf("%d audit entries for changes that changed nothing", n-before)
		}
		if c, _ := w.st.FindCardByID(ctx, spare.ID); c.Status != store.CardMaintenance || c.FaultReason != "" {
			t.Errorf("card under maintenance became %+v", c)
		}
		if _, err := w.st.MarkCardFault(ctx, 9999, "x", at); !errs.Is(err, errs.NotFound) {
			t.Errorf("unknown card: %v", err)
		}

		// Two healthy active cards are left: a request gets them, a third
		// finds no capacity.
		r := w.mustBook(t, w.member, w.normal, 2, 0, 2)
		if slices.Contains(r.Cards, faulty.UUID) {
			t.Fatalf("booked the faulty card: %v", r.Cards)
		}
		_, err = w.book(t, w.member, w.normal, 1, 0, 2)
		wantCode(t, err, errs.Conflict, "booking.no_capacity")
		// A form cannot make a card faulty, nor keep the fault by saving.
		in = store.CardInput{UUID: w.cards[1].UUID, GPUIndex: 1, HostID: w.cards[1].HostID, CardTypeID: w.ct.ID, Status: store.CardFault}
		_, err = w.st.UpdateCard(as(w.admin), w.cards[1].ID, in)
		if e := wantCode(t, err, errs.Invalid, "card.status_invalid"); e.Fields["status"] != "card.status_invalid" {
			t.Errorf("fields %v", e.Fields)
		}

		// Only an admin clears a fault, and only of a faulty card.
		if _, err := w.st.ClearCardFault(as(w.manager), faulty.ID); !errs.Is(err, errs.Forbidden) {
			t.Errorf("a manager cleared a fault: %v", err)
		}
		_, err = w.st.ClearCardFault(as(w.admin), w.cards[1].ID)
		wantCode(t, err, errs.Conflict, "card.not_faulty")
		cleared, err := w.st.ClearCardFault(as(w.admin), faulty.ID)
		if err != nil || cleared.Status != store.CardActive || cleared.FaultReason != "" || cleared.FaultAt != nil {
			t.Fatalf("cleared %+v %v", cleared, err)
		}
		if e := lastAudit(t, w.st); e.Action != "clear_fault" || e.EntityID != faulty.ID || e.ActorName != "root" {
			t.Errorf("audit %+v", e)
		}
		back := w.mustBook(t, w.member, w.normal, 1, 0, 2)
		if !slices.Equal(back.Cards, uuidsOf(faulty)) {
			t.Errorf("after clearing, the request got %v, want the cleared card", back.Cards)
		}

		// A card that fails under a booking: the booking keeps it.
		held := w.mustBook(t, w.member, w.normal, 3, 3, 5)
		if changed, err := w.st.MarkCardFault(ctx, faulty.ID, "Unknown Error", w.clock.Now()); err != nil || !changed {
			t.Fatalf("mark under a booking: %v %v", changed, err)
		}
		if e := lastAudit(t, w.st); e.ActorName != "telemetry" || e.ActorID != nil {
			t.Errorf("a fault without an actor is audited as %q/%v, want the telemetry", e.ActorName, e.ActorID)
		}
		holds, err := w.st.FindCardHolds(ctx, w.at(4))
		if err != nil || len(holds) != 3 {
			t.Errorf("holds of the booking after the fault: %+v %v", holds, err)
		}
		if b, err := w.st.FindBookingByID(as(w.member), held.Booking.ID); err != nil || b.State != held.Booking.State {
			t.Errorf("booking after the fault: %+v %v", b, err)
		}
		storetest.AssertNoDoubleBooking(t, w.st)
	})
}

// A card marked faulty through one process leaves the pool of the other at
// once: its placement book, current a moment ago, is read again.
func TestFaultyCardLeavesThePoolOfEveryProcess(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		clock := storetest.NewClock(time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC))
		one, two := openTwoStores(t, dialect, clock.Now)
		w := buildBookingWorld(t, one, clock, 2)
		book := func(st *store.Store, count int, slot float64) (*store.BookingResult, error) {
			return st.CreateBooking(as(w.member), store.BookingRequest{TaskID: w.normal.ID, CardTypeID: w.ct.ID, Count: count,
				Start: w.at(slot), End: w.at(slot + 1)})
		}
		// The second process books once, so it keeps a current book.
		if _, err := book(two, 2, 1); err != nil {
			t.Fatal(err)
		}
		if changed, err := one.MarkCardFault(context.Background(), w.cards[0].ID, "GPU requires reset", clock.Now()); err != nil || !changed {
			t.Fatalf("mark: %v %v", changed, err)
		}
		if _, err := book(two, 2, 2); !errs.Is(err, errs.Conflict) {
			t.Fatalf("the other process placed 2 cards with one faulty: %v", err)
		}
		r, err := book(two, 1, 2)
		if err != nil || !slices.Equal(r.Cards, uuidsOf(w.cards[1])) {
			t.Fatalf("the other process placed %v (%v), want only the healthy card", r, err)
		}
		if _, err := one.ClearCardFault(as(w.admin), w.cards[0].ID); err != nil {
			t.Fatal(err)
		}
		r, err = book(two, 1, 2)
		if err != nil || !slices.Equal(r.Cards, uuidsOf(w.cards[0])) {
			t.Fatalf("after the clear the other process placed %v (%v), want the cleared card", r, err)
		}
		storetest.AssertNoDoubleBooking(t, one)
	})
}

// An admin's edit of a faulty card keeps it faulty: its index changes, its
// fault and its open alert stay; making it active (or giving no status)
// is refused, pointing at Clear fault, and changes nothing; sending it to
// maintenance ends the fault and its alert.
func TestEditingAFaultyCardKeepsItFaulty(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 2)
		ctx := context.Background()
		faulty := w.cards[0]
		at := w.clock.Now().Add(-time.Minute)
		if changed, err := w.st.MarkCardFault(ctx, faulty.ID, "GPU requires reset", at); err != nil || !changed {
			t.Fatalf("mark fault: changed %v, %v", changed, err)
		}
		if _, _, err := w.st.OpenAlert(ctx, store.AlertInput{Kind: store.AlertFault, CardID: faulty.ID, At: at}); err != nil {
			t.Fatal(err)
		}
		in := store.CardInput{UUID: faulty.UUID, GPUIndex: 7, HostID: faulty.HostID, CardTypeID: faulty.CardTypeID, Status: store.CardFault}
		got, err := w.st.UpdateCard(as(w.admin), faulty.ID, in)
		if err != nil || got.Status != store.CardFault || got.GPUIndex != 7 || got.FaultReason != "GPU requires reset" || got.FaultAt == nil {
			t.Fatalf("edit of the index: %+v %v", got, err)
		}
		for _, status := range []string{store.CardActive, ""} {
			in.Status, in.GPUIndex = status, 3
			before := auditCount(t, w.st)
			_, err := w.st.UpdateCard(as(w.admin), faulty.ID, in)
			if e := wantCode(t, err, errs.Invalid, "card.fault_kept"); e.Fields["status"] != "card.fault_kept" {
				t.Errorf("status %q: fields %v", status, e.Fields)
			}
			if n := auditCount(t, w.st); n != before {
				t.Errorf("status %q: a refused edit wrote %d audit entries", status, n-before)
			}
		}
		cd, err := w.st.FindCardByID(ctx, faulty.ID)
		if err != nil || cd.Status != store.CardFault || cd.GPUIndex != 7 || cd.FaultReason != "GPU requires reset" {
			t.Errorf("after the refused edits: %+v %v", cd, err)
		}
		open := 0
		alerts, err := w.st.FindOpenAlerts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range alerts {
			if a.Kind == store.AlertFault && a.CardID != nil && *a.CardID == faulty.ID {
				open++
			}
		}
		if open != 1 {
			t.Errorf("%d open fault alerts on the card, want 1", open)
		}
		// Clearing it is what returns it to service.
		if _, err := w.st.ClearCardFault(as(w.admin), faulty.ID); err != nil {
			t.Fatal(err)
		}
		in.Status = store.CardMaintenance
		if got, err := w.st.UpdateCard(as(w.admin), faulty.ID, in); err != nil || got.Status != store.CardMaintenance {
			t.Errorf("edit after the clear: %+v %v", got, err)
		}
		// A faulty card sent to repair: maintenance, its fault episode over.
		other := w.cards[1]
		if _, err := w.st.MarkCardFault(ctx, other.ID, "XID 79", at); err != nil {
			t.Fatal(err)
		}
		if _, _, err := w.st.OpenAlert(ctx, store.AlertInput{Kind: store.AlertFault, CardID: other.ID, At: at}); err != nil {
			t.Fatal(err)
		}
		in = store.CardInput{UUID: other.UUID, GPUIndex: other.GPUIndex, HostID: other.HostID, CardTypeID: other.CardTypeID, Status: store.CardMaintenance}
		got, err = w.st.UpdateCard(as(w.admin), other.ID, in)
		if err != nil || got.Status != store.CardMaintenance || got.FaultReason != "" || got.FaultAt != nil {
			t.Errorf("a faulty card sent to maintenance: %+v %v", got, err)
		}
		alerts, err = w.st.FindOpenAlerts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range alerts {
			if a.Kind == store.AlertFault && a.CardID != nil && *a.CardID == other.ID {
				t.Error("the fault alert stays open after the card went to maintenance")
			}
		}
	})
}
