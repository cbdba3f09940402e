package booking_test

// Tests of which actions a booking's page offers: the ones schedule's rules
// allow for its state and window, the same rules the store applies when the
// action is posted (or called through the API).

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"cardhour/server/servertest"
	"cardhour/store"
)

// TestBookingPageOffersOnlyTheActionsTheRulesAllow: a booking that has not
// started offers cancel, not release early (there is nothing to release);
// a running one release, not cancel; one waiting for approval cancel, not
// extend. A release or extension posted anyway is refused with the rule's
// message, on the page and in the API.
func TestBookingPageOffersOnlyTheActionsTheRulesAllow(t *testing.T) {
	t.Parallel()
	w := bkpSetup(t)
	m := w.e.LoggedIn(store.RoleMember)
	offered := func(id int64) map[string]bool {
		t.Helper()
		r := m.Get("/bookings/" + strconv.FormatInt(id, 10))
		bkpWant(t, r, http.StatusOK, "GET the booking")
		doc := r.Doc(t)
		out := map[string]bool{}
		for _, a := range []string{"release", "cancel", "extend"} {
			out[a] = doc.Find("[data-testid=booking-"+a+"]").Length() > 0
		}
		return out
	}
	want := func(what string, got map[string]bool, release, cancel, extend bool) {
		t.Helper()
		if got["release"] != release || got["cancel"] != cancel || got["extend"] != extend {
			t.Errorf("%s offers release %v, cancel %v, extend %v; want %v, %v, %v", what,
				got["release"], got["cancel"], got["extend"], release, cancel, extend)
		}
	}

	// Ahead: cancel and extend, no release.
	start := time.Now().Add(3 * time.Hour).Truncate(time.Minute)
	bkpWant(t, m.PostForm("/booking", w.window(w.taskID, 1, start, start.Add(2*time.Hour)), true), http.StatusSeeOther, "book ahead")
	ahead := w.bookings(t)[0]
	want("a confirmed booking that has not started", offered(ahead.ID), false, true, true)
	r := m.PostForm("/bookings/"+strconv.FormatInt(ahead.ID, 10)+"/release", nil, true)
	bkpWant(t, r, http.StatusConflict, "release before the start")
	if got := bkpText(r.Doc(t), "[data-testid=list-error]"); got != bkpZH("booking.release_not_started") {
		t.Errorf("release before the start says %q, want %q", got, bkpZH("booking.release_not_started"))
	}
	servertest.MustAPIError(t, m.APICall(http.MethodPost, "/api/v1/bookings/"+strconv.FormatInt(ahead.ID, 10)+"/release",
		w.e.Users[store.RoleMember].Token, ""), http.StatusConflict, "conflict")
	if b, _ := w.e.St.FindBookingByID(context.Background(), ahead.ID); b.State != store.BookingConfirmed {
		t.Errorf("after the refused release the booking is %s", b.State)
	}

	// Running: release and extend, no cancel.
	now := m.PostForm("/booking", w.window(w.taskID, 1, time.Now(), time.Now().Add(2*time.Hour)), true)
	bkpWant(t, now, http.StatusSeeOther, "book now")
	var running store.BookingView
	for _, b := range w.bookings(t) {
		if b.State == store.BookingActive {
			running = b
		}
	}
	if running.ID == 0 {
		t.Fatalf("no running booking among %+v", w.bookings(t))
	}
	want("a running booking", offered(running.ID), true, false, true)

	// Waiting for approval: cancel only.
	ctx := w.e.AdminCtx()
	if _, err := w.e.St.UpdateTeam(ctx, w.teamID, store.TeamInput{Name: "llm", RequiresApproval: true}); err != nil {
		t.Fatal(err)
	}
	later := start.Add(24 * time.Hour)
	bkpWant(t, m.PostForm("/booking", w.window(w.taskID, 1, later, later.Add(2*time.Hour)), true), http.StatusSeeOther, "book in a team that approves")
	var waiting store.BookingView
	for _, b := range w.bookings(t) {
		if b.State == store.BookingPending && b.WaitReason == store.WaitApproval {
			waiting = b
		}
	}
	if waiting.ID == 0 {
		t.Fatalf("no booking waits for approval among %+v", w.bookings(t))
	}
	want("a booking waiting for approval", offered(waiting.ID), false, true, false)
	r = m.PostForm("/bookings/"+strconv.FormatInt(waiting.ID, 10)+"/extend", map[string][]string{"end": {w.local(later.Add(4 * time.Hour))}}, true)
	bkpWant(t, r, http.StatusConflict, "extend while waiting for approval")
	if got := bkpText(r.Doc(t), "[data-testid=list-error]"); got != bkpZH("booking.extend_awaiting_approval") {
		t.Errorf("extend while waiting for approval says %q, want %q", got, bkpZH("booking.extend_awaiting_approval"))
	}
	if b, _ := w.e.St.FindBookingByID(context.Background(), waiting.ID); !b.EndAt.Equal(later.Add(2 * time.Hour)) {
		t.Errorf("the refused extension moved the end to %v", b.EndAt)
	}
}
