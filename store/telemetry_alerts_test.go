package store_test

import (
	"context"
	"testing"
	"time"

	"cardhour/store"
	"cardhour/store/storetest"
)

func TestAlertsTellOwnerAndManagersOncePerEpisode(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 1)
		ctx := context.Background()
		b := w.mustBook(t, w.member, w.core, 1, 0, 4)
		card := w.cards[0].ID
		notes := func(u *store.User) int {
			ns, err := w.st.FindNotifications(ctx, u.ID, false, 100)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, x := range ns {
				if x.MessageKey == "notify.alert_held_idle" {
					n++
				}
			}
			return n
		}
		at := w.clock.Now()
		a, created, err := w.st.OpenAlert(ctx, store.AlertInput{Kind: store.AlertHeldIdle, CardID: card, BookingID: b.Booking.ID, Value: 10, At: at})
		if err != nil || !created {
			t.Fatalf("open: %v %v", created, err)
		}
		// The same episode seen again (every sample, or after a restart): no new alert, nobody told twice.
		again, created, err := w.st.OpenAlert(ctx, store.AlertInput{Kind: store.AlertHeldIdle, CardID: card, BookingID: b.Booking.ID, Value: 11, At: at.Add(time.Minute)})
		if err != nil || created || again.ID != a.ID {
			t.Errorf("second open: %+v %v %v", again, created, err)
		}
		if notes(w.member) != 1 || notes(w.manager) != 1 || notes(w.outsider) != 0 {
			t.Errorf("notified member %d manager %d outsider %d, want 1 1 0", notes(w.member), notes(w.manager), notes(w.outsider))
		}
		open, err := w.st.FindOpenAlerts(ctx)
		if err != nil || len(open) != 1 || open[0].HostName != "gpu-01" || open[0].TaskName != "pretrain" || open[0].TeamName != "llm" {
			t.Errorf("open alerts %+v %v", open, err)
		}
		if err := w.st.CloseAlert(ctx, store.AlertHeldIdle, card, b.Booking.ID, 42, at.Add(2*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if open, _ := w.st.FindOpenAlerts(ctx); len(open) != 0 {
			t.Errorf("still open: %+v", open)
		}
		// Idle again an hour later: a new episode, told again.
		if _, created, err := w.st.OpenAlert(ctx, store.AlertInput{Kind: store.AlertHeldIdle, CardID: card, BookingID: b.Booking.ID, At: at.Add(time.Hour)}); err != nil || !created {
			t.Errorf("new episode: %v %v", created, err)
		}
		if notes(w.member) != 2 {
			t.Errorf("member told %d times, want 2", notes(w.member))
		}
		list, err := w.st.FindBookingAlerts(ctx, b.Booking.ID)
		if err != nil || len(list) != 2 || list[1].Value != 42 || list[1].EndedAt == nil {
			t.Errorf("booking alerts %+v %v", list, err)
		}
		// An unbooked card's VRAM episode is recorded, with nobody to tell.
		before := countRows(t, w.st, "notifications")
		if _, created, err := w.st.OpenAlert(ctx, store.AlertInput{Kind: store.AlertVRAM, CardID: card, Value: 97, At: at}); err != nil || !created {
			t.Errorf("vram: %v %v", created, err)
		}
		if countRows(t, w.st, "notifications") != before {
			t.Error("an unbooked card's alert notified someone")
		}
		// A fresh holder of the alerts spares what its live state still raises.
		if n, err := w.st.CloseStaleAlertsExcept(ctx, at.Add(2*time.Hour), func(a store.Alert) bool { return a.Kind == store.AlertVRAM }); err != nil || n != 1 {
			t.Errorf("closed %d stale alerts sparing the VRAM one (%v), want 1", n, err)
		}
		if n, err := w.st.CloseStaleAlerts(ctx, at.Add(2*time.Hour)); err != nil || n != 1 {
			t.Errorf("closed %d stale alerts (%v), want the VRAM one left", n, err)
		}
	})
}

func TestAutoReleaseActsForTheOwnerAndTellsThem(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 2)
		ctx := context.Background()
		b := w.mustBook(t, w.member, w.core, 2, 0, 4)
		w.clock.Advance(time.Hour)
		if _, _, err := w.st.OpenAlert(ctx, store.AlertInput{Kind: store.AlertReleaseWarned, BookingID: b.Booking.ID, Value: 45}); err != nil {
			t.Fatal(err)
		}
		res, err := w.st.AutoReleaseBooking(ctx, b.Booking.ID, 60)
		if err != nil {
			t.Fatal(err)
		}
		if res.Booking.State != store.BookingReleased || res.ReturnedCardSeconds != 2*3*3600 {
			t.Errorf("release %+v", res)
		}
		e := lastAuditOf(t, w.st, "booking", b.Booking.ID)
		if e.Action != "release" || e.ActorName != "auto-release" {
			t.Errorf("audit %+v", e)
		}
		ns, _ := w.st.FindNotifications(ctx, w.member.ID, false, 50)
		var keys []string
		for _, n := range ns {
			keys = append(keys, n.MessageKey)
		}
		if !contains(keys, "notify.alert_released") || !contains(keys, "notify.alert_release_warned") {
			t.Errorf("owner's notifications %v", keys)
		}
		if open, _ := w.st.FindOpenAlerts(ctx); len(open) != 0 {
			t.Errorf("open alerts after the release: %+v", open)
		}
	})
}

func lastAuditOf(t *testing.T, st *store.Store, entity string, id int64) store.AuditEntry {
	t.Helper()
	es, _, err := st.FindAuditEntries(context.Background(), store.AuditFilter{Entity: entity, EntityID: id, Limit: 1})
	if err != nil || len(es) == 0 {
		t.Fatalf("audit of %s %d: %v", entity, id, err)
	}
	return es[0]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
