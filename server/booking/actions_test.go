package booking_test

// Tests of which actions a booking's page offers: the ones schedule's rules
// allow for its state and window, the same rules the store applies when the
// action is posted (or called through the API).

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

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

// TestAssignedCardsShowHostAndIndex: a booking's cards are named by host
// and index (gpu-01 #2), as on the host itself, on its page and in the
// API's answers — when it is made and when it is read — beside the uuids.
func TestAssignedCardsShowHostAndIndex(t *testing.T) {
	t.Parallel()
	f := servertest.NewFleet(t, servertest.Options{}, 4, 1000)
	type card struct {
		UUID  string `json:"uuid"`
		Host  string `json:"host"`
		Index int    `json:"index"`
		Label string `json:"label"`
	}
	type booking struct {
		ID       int64    `json:"id"`
		Cards    []string `json:"cards"`
		Assigned []card   `json:"assigned_cards"`
	}
	index := map[string]int{}
	for _, cd := range f.Cards {
		index[cd.UUID] = cd.GPUIndex
	}
	check := func(what string, b booking) {
		t.Helper()
		if len(b.Assigned) != 2 || len(b.Cards) != 2 {
			t.Fatalf("%s: cards %v, assigned %+v; want two of each", what, b.Cards, b.Assigned)
		}
		for i, a := range b.Assigned {
			want := card{UUID: b.Cards[i], Host: "gpu-01", Index: index[b.Cards[i]], Label: fmt.Sprintf("gpu-01 #%d", index[b.Cards[i]])}
			if a != want {
				t.Errorf("%s: assigned card %d is %+v, want %+v", what, i, a, want)
			}
		}
	}
	member := f.Token(store.RoleMember)
	made := servertest.Decode[booking](t, f.Call(http.MethodPost, "/api/v1/bookings", member, f.BookingBody(f.Normal.ID, "H800", 2, 0, 2)), http.StatusCreated)
	check("POST /api/v1/bookings", made)
	read := servertest.Decode[booking](t, f.Call(http.MethodGet, "/api/v1/bookings/"+strconv.FormatInt(made.ID, 10), member, ""), http.StatusOK)
	check("GET /api/v1/bookings/:id", read)

	page := f.E.LoggedIn(store.RoleMember).Get("/bookings/" + strconv.FormatInt(made.ID, 10))
	bkpWant(t, page, http.StatusOK, "GET the booking page")
	var labels []string
	page.Doc(t).Find("[data-testid=booking-card]").Each(func(_ int, s *goquery.Selection) {
		labels = append(labels, strings.TrimSpace(s.Find("[data-testid=booking-card-label]").Text())+" "+s.AttrOr("data-uuid", ""))
	})
	want := []string{read.Assigned[0].Label + " " + read.Cards[0], read.Assigned[1].Label + " " + read.Cards[1]}
	if !slices.Equal(labels, want) {
		t.Errorf("the page names the cards %q, want %q", labels, want)
	}
}
