package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cardhour/schedule"
	"cardhour/store"
	"cardhour/store/storetest"
)

// TestNoShowFreesUntouchedCards: a booking whose cards telemetry saw
// untouched (no load, no VRAM taken) through the first 30 minutes ends as a
// no-show at the next tick — cards free from then, unused hours back to the
// quota, owner told, the change audited, the waiting request placed — while
// a booking held idle with a model loaded, and one no telemetry watched,
// stay active.
func TestNoShowFreesUntouchedCards(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 4)
		ctx := context.Background()
		if got := w.st.BookingPolicy().NoShowAfter; got != 30*time.Minute {
			t.Fatalf("default no-show grace %v, want 30 min", got)
		}
		cardID := map[string]int64{}
		for _, c := range w.cards {
			cardID[c.UUID] = c.ID
		}
		absent := w.mustBook(t, w.member, w.normal, 2, 0, 4)
		loaded := w.mustBook(t, w.member, w.normal, 1, 0, 4)
		unwatched := w.mustBook(t, w.member, w.normal, 1, 0, 4)
		waiting, err := w.st.CreateBooking(as(w.member), store.BookingRequest{TaskID: w.core.ID, CardTypeID: w.ct.ID, Count: 2,
			Start: w.at(0), End: w.at(2), Queue: true})
		if err != nil || waiting.Booking.State != store.BookingPending {
			t.Fatalf("queued request: %+v, %v", waiting, err)
		}
		if _, err := w.st.Tick(ctx); err != nil {
			t.Fatal(err)
		}
		feed := func(r *store.BookingResult, memMiB float64) {
			var minutes []store.Rollup
			for m := w.at(0); m.Before(w.at(0.5)); m = m.Add(time.Minute) {
				for _, u := range r.Cards {
					minutes = append(minutes, store.Rollup{CardID: cardID[u], At: m, Samples: 60, UtilSamples: 60, MemMaxMiB: memMiB,
						MemTotalMiB: 81559, SampledSeconds: 60, HeldSeconds: 60, HeldIdleSeconds: 60, BookingID: r.Booking.ID})
				}
			}
			if err := w.st.SaveRollups(ctx, minutes, nil); err != nil {
				t.Fatal(err)
			}
		}
		feed(absent, 312)
		feed(loaded, 27800)

		// Before the grace ends nothing happens.
		w.clock.Advance(29 * time.Minute)
		if res, err := w.st.Tick(ctx); err != nil || res.NoShows != 0 {
			t.Fatalf("tick at +29 min: %+v, %v", res, err)
		}
		w.clock.Advance(2 * time.Minute)
		audits := auditCount(t, w.st)
		res, err := w.st.Tick(ctx)
		if err != nil || res.NoShows != 1 {
			t.Fatalf("tick at +31 min: %+v, %v; want one no-show", res, err)
		}
		now := w.clock.Now()
		got, err := w.st.FindBookingByID(ctx, absent.Booking.ID)
		if err != nil {
			t.Fatal(err)
		}
		if mins, _ := got.NoteArgs.Int64(0); got.State != store.BookingNoShow || got.EndedAt == nil || !got.EndedAt.Equal(now) ||
			got.NoteKey != store.NoteNoShow || mins != 30 || len(got.NoteArgs) != 1 {
			t.Errorf("untouched booking: %s ended %v %q %v; want no_show at %v, noted with its 30 min", got.State, got.EndedAt, got.NoteKey, got.NoteArgs, now)
		}
		if want := schedule.CardSeconds(2, absent.Booking.StartAt, now); got.BookedCardSeconds() != want {
			t.Errorf("no-show draws %d card-seconds, want %d (up to now)", got.BookedCardSeconds(), want)
		}
		for _, r := range []*store.BookingResult{loaded, unwatched} {
			if b, err := w.st.FindBookingByID(ctx, r.Booking.ID); err != nil || b.State != store.BookingActive {
				t.Errorf("booking %d: %v, %v; want still active", r.Booking.ID, b.State, err)
			}
		}
		placed, err := w.st.FindBookingByID(ctx, waiting.Booking.ID)
		if err != nil || placed.State != store.BookingActive || len(placed.Cards) != 2 {
			t.Errorf("queued request after the no-show: %s with %v, %v; want active on the freed cards", placed.State, placed.Cards, err)
		}
		notes, err := w.st.FindNotifications(ctx, w.member.ID, false, 20)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, n := range notes {
			found = found || (n.MessageKey == "notify.no_show" && fmt.Sprint(n.Args()) == fmt.Sprintf("[%d 30]", absent.Booking.ID))
		}
		if !found {
			t.Errorf("owner not told of the no-show: %+v", notes)
		}
		es, _, err := w.st.FindAuditEntries(ctx, store.AuditFilter{Entity: "booking", EntityID: absent.Booking.ID})
		if err != nil || len(es) == 0 || es[0].SummaryKey != "audit.sum.transition" || fmt.Sprint(es[0].Args()) != "[{ bkstate.active <nil>} { bkstate.no_show <nil>}]" || auditCount(t, w.st) <= audits {
			t.Errorf("audit of the no-show: %+v, %v", es, err)
		}
		drift, err := w.st.QuotaLedgerDrift(ctx)
		if err != nil || len(drift) > 0 {
			t.Errorf("quota totals: %v %v", drift, err)
		}
		book, scan, err := w.st.BookDrift(ctx, w.ct.ID, schedule.Interval{Start: w.at(-1), End: w.at(8)})
		if err != nil || fmt.Sprint(book) != fmt.Sprint(scan) {
			t.Errorf("placement book %v, database %v (%v)", book, scan, err)
		}
		storetest.AssertNoDoubleBooking(t, w.st)
		// The next tick changes nothing more.
		if res, err := w.st.Tick(ctx); err != nil || res.NoShows != 0 {
			t.Errorf("second tick: %+v, %v", res, err)
		}
	})
}
