package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

// told lists a user's notifications of key as "args → link".
func told(t *testing.T, st *store.Store, u *store.User, key string) []string {
	t.Helper()
	ns, err := st.FindNotifications(context.Background(), u.ID, false, 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range ns {
		if n.MessageKey == key {
			out = append(out, fmt.Sprint(n.Args(), " → ", n.Link))
		}
	}
	return out
}

func TestAdminAlertsTellAdminsOncePerEpisode(t *testing.T) {
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := newBookingWorld(t, dialect, 2)
		ctx := context.Background()
		retired := MustUser(t, w.st, "oldroot", store.RoleAdmin)
		if _, err := w.st.UpdateUser(as(w.admin), retired.ID, store.UserUpdate{Disabled: ptr(true)}); err != nil {
			t.Fatal(err)
		}
		b := w.mustBook(t, w.member, w.core, 1, 0, 4)
		byUUID := map[string]*store.Card{w.cards[0].UUID: w.cards[0], w.cards[1].UUID: w.cards[1]}
		booked := byUUID[b.Cards[0]]
		free := w.cards[0]
		if free == booked {
			free = w.cards[1]
		}
		at := w.clock.Now()
		where := fmt.Sprintf("gpu-01 %d", booked.GPUIndex)
		bookingLink := fmt.Sprintf("/bookings/%d", b.Booking.ID)

		// A fault on a booked card: the admins, the holder and the team's managers.
		a, created, err := w.st.OpenAlert(ctx, store.AlertInput{Kind: store.AlertFault, CardID: booked.ID, BookingID: b.Booking.ID, At: at,
			Detail: map[string]string{"reading": "[GPU requires reset]"}})
		if err != nil || !created {
			t.Fatalf("open fault: %v %v", created, err)
		}
		if string(a.Detail) != `{"reading":"[GPU requires reset]"}` {
			t.Errorf("detail %s", a.Detail)
		}
		if _, created, err := w.st.OpenAlert(ctx, store.AlertInput{Kind: store.AlertFault, CardID: booked.ID, BookingID: b.Booking.ID, At: at.Add(time.Minute)}); err != nil || created {
			t.Errorf("the same fault again: created %v, %v", created, err)
		}
		for _, c := range []struct {
			who  *store.User
			want string
		}{
			{w.admin, "[" + where + "] → /admin/telemetry"}, {w.member, "[" + where + "] → " + bookingLink},
			{w.manager, "[" + where + "] → " + bookingLink}, {w.outsider, ""}, {retired, ""},
		} {
			got := told(t, w.st, c.who, store.NotifyAlertFault)
			if want := []string{c.want}; c.want == "" && len(got) != 0 || c.want != "" && fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s told %v, want %q", c.who.Username, got, c.want)
			}
		}

		// Unbooked use: the admins alone, with what was seen.
		seen := json.RawMessage(`{"processes":[{"pid":4242,"name":"python","user":"lihua","vram_mib":20480}]}`)
		if _, created, err := w.st.OpenAlert(ctx, store.AlertInput{Kind: store.AlertUnbooked, CardID: free.ID, Value: 20480, At: at, Detail: seen}); err != nil || !created {
			t.Fatalf("open unbooked: %v %v", created, err)
		}
		freeWhere := fmt.Sprintf("[gpu-01 %d] → /admin/telemetry", free.GPUIndex)
		if got := told(t, w.st, w.admin, store.NotifyAlertUnbooked); fmt.Sprint(got) != fmt.Sprint([]string{freeWhere}) {
			t.Errorf("admin told %v", got)
		}
		if got := told(t, w.st, w.member, store.NotifyAlertUnbooked); len(got) != 0 {
			t.Errorf("member told of unbooked use: %v", got)
		}

		// Foreign processes on a booked card: the admins, with the booking.
		if _, _, err := w.st.OpenAlert(ctx, store.AlertInput{Kind: store.AlertForeign, CardID: booked.ID, At: at}); !errs.Is(err, errs.Invalid) {
			t.Errorf("a foreign alert without its booking: %v", err)
		}
		if _, created, err := w.st.OpenAlert(ctx, store.AlertInput{Kind: store.AlertForeign, CardID: booked.ID, BookingID: b.Booking.ID, At: at,
			Detail: map[string]any{"users": []string{"mallory"}}}); err != nil || !created {
			t.Fatalf("open foreign: %v %v", created, err)
		}
		wantForeign := fmt.Sprintf("[gpu-01 %d %d] → /admin/telemetry", booked.GPUIndex, b.Booking.ID)
		if got := told(t, w.st, w.admin, store.NotifyAlertForeign); fmt.Sprint(got) != fmt.Sprint([]string{wantForeign}) {
			t.Errorf("admin told %v, want %s", got, wantForeign)
		}
		if got := told(t, w.st, w.member, store.NotifyAlertForeign); len(got) != 0 {
			t.Errorf("member told of foreign use: %v", got)
		}

		// Spoofed pushes: of a known card, and from a host the token is not
		// bound to (no card: told apart by host).
		if _, created, err := w.st.OpenAlert(ctx, store.AlertInput{Kind: store.AlertSpoof, CardID: free.ID, At: at,
			Detail: map[string]string{"host": "evil-01", "token": "gpu-02"}}); err != nil || !created {
			t.Fatalf("open spoof: %v %v", created, err)
		}
		spoof := func(host string) bool {
			t.Helper()
			_, created, err := w.st.OpenAlert(ctx, store.AlertInput{Kind: store.AlertSpoof, At: at, Detail: map[string]string{"host": host, "token": "gpu-02"}})
			if err != nil {
				t.Fatal(err)
			}
			return created
		}
		if !spoof("evil-01") || spoof("evil-01") || !spoof("evil-02") {
			t.Error("host spoofs: want one episode per host")
		}
		if got := told(t, w.st, w.admin, store.NotifyAlertSpoof); fmt.Sprint(got) != fmt.Sprint([]string{freeWhere}) {
			t.Errorf("admin told %v of the card spoof", got)
		}
		if got := told(t, w.st, w.admin, store.NotifyAlertSpoofHost); len(got) != 2 || got[1] != "[evil-01 gpu-02] → /admin/telemetry" {
			t.Errorf("admin told %v of the host spoofs", got)
		}
		if got := told(t, w.st, retired, store.NotifyAlertSpoofHost); len(got) != 0 {
			t.Errorf("a disabled admin was told: %v", got)
		}

		open, err := w.st.FindOpenAlerts(ctx)
		if err != nil || len(open) != 6 {
			t.Fatalf("open alerts %d %v", len(open), err)
		}
		kinds := map[string]store.AlertView{}
		for _, v := range open {
			if _, dup := kinds[v.Kind]; !dup {
				kinds[v.Kind] = v
			}
		}
		if f := kinds[store.AlertForeign]; f.HostName != "gpu-01" || f.GPUIndex != booked.GPUIndex || f.TeamName != "llm" || f.TaskName != "pretrain" ||
			string(f.Detail) != `{"users":["mallory"]}` {
			t.Errorf("foreign alert %+v detail %s", f, f.Detail)
		}
		if u := kinds[store.AlertUnbooked]; u.UUID != free.UUID || string(u.Detail) != string(seen) || u.TeamName != "" {
			t.Errorf("unbooked alert %+v detail %s", u, u.Detail)
		}
		if raw, _ := json.Marshal(kinds[store.AlertFault]); !json.Valid(raw) {
			t.Errorf("alert JSON %s", raw)
		}
		// A restart closes them all; the live state opens again what persists.
		if n, err := w.st.CloseStaleAlerts(ctx, at.Add(time.Hour)); err != nil || n != 6 {
			t.Errorf("closed %d stale alerts (%v), want 6", n, err)
		}
	})
}
