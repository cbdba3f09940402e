package board_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/telemetry"
)

// openAlerts lists the open alerts of a kind.
func openAlerts(t *testing.T, st *store.Store, kind string) []store.AlertView {
	t.Helper()
	all, err := st.FindOpenAlerts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var out []store.AlertView
	for _, a := range all {
		if a.Kind == kind {
			out = append(out, a)
		}
	}
	return out
}

// TestSpoofedPushIsRefusedAndChangesNothing: an agent token reports only
// its hosts, and a card only from the host the inventory puts it on; a
// push that breaks either is refused whole, changes no card and no
// booking, and tells the admins.
func TestSpoofedPushIsRefusedAndChangesNothing(t *testing.T) {
	t.Parallel()
	fe := newFleetEnv(t, false)
	body := fixture(t, "nvidia-smi-nounits.csv")
	// The agent token's first push binds it to its host.
	if r := fe.push(fe.agentTok, "gpu-bj-h800-01", body); r.StatusCode != http.StatusOK {
		t.Fatalf("first push: %d %s", r.StatusCode, r)
	}
	before := fe.Srv.Board().LiveCard(uuid0)
	if err := fe.Srv.Board().ParkUnknownNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	parked, _, _ := fe.St.FindPendingCardsPage(context.Background(), 500, 0)
	// The same token naming another host.
	r := fe.push(fe.agentTok, "gpu-evil", body)
	e := servertest.MustAPIError(t, r, http.StatusForbidden, "forbidden")
	if !strings.Contains(e.Error.Message, "gpu-evil") {
		t.Errorf("refusal %q does not name the host", e.Error.Message)
	}
	// A token bound to another host reporting this host's cards under its own.
	evil := servertest.Decode[struct {
		Token string   `json:"token"`
		Hosts []string `json:"hosts"`
	}](t, fe.Client().APICall(http.MethodPost, "/api/v1/agent-tokens", fe.Users["admin"].Token, `{"name":"evil","hosts":["gpu-evil"]}`), http.StatusCreated)
	if len(evil.Hosts) != 1 || evil.Hosts[0] != "gpu-evil" {
		t.Fatalf("token hosts %v", evil.Hosts)
	}
	lie := strings.ReplaceAll(body, " 100, ", " 0, ") // the real card "idle"
	servertest.MustAPIError(t, fe.push(evil.Token, "gpu-evil", lie), http.StatusConflict, "conflict")
	batch := fmt.Sprintf(`{"host":"gpu-evil","samples":[{"uuid":%q,"index":0,"at":%q,"util":0,"mem_used_mib":0}]}`,
		uuid0, time.Now().UTC().Format(time.RFC3339Nano))
	servertest.MustAPIError(t, fe.Client().APICall(http.MethodPost, telemetry.SamplesPath, evil.Token, batch), http.StatusConflict, "conflict")

	after := fe.Srv.Board().LiveCard(uuid0)
	if !after.LastSample.Equal(before.LastSample) || *after.Util != *before.Util {
		t.Errorf("a refused push changed the card: before %v %v, after %v %v", before.LastSample, *before.Util, after.LastSample, *after.Util)
	}
	if err := fe.Srv.Board().ParkUnknownNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	if pending, _, _ := fe.St.FindPendingCardsPage(context.Background(), 500, 0); len(pending) != len(parked) {
		t.Errorf("a refused push parked %d cards", len(pending)-len(parked))
	}
	spoofs := openAlerts(t, fe.St, store.AlertSpoof)
	if len(spoofs) != 2 {
		t.Fatalf("%d spoof alerts, want one for the unbound host and one for the card: %+v", len(spoofs), spoofs)
	}
	notes, err := fe.St.FindNotifications(context.Background(), fe.Users["admin"].ID, true, 20)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, n := range notes {
		keys = append(keys, n.MessageKey)
	}
	if !strings.Contains(strings.Join(keys, " "), store.NotifyAlertSpoof) {
		t.Errorf("the admin was not told: %v", keys)
	}
}

// TestFaultReadingTakesTheCardOutUntilCleared: a fault reading makes the
// card faulty on the board and in the inventory (no new bookings), alerts
// once, and only an admin's clearing returns it.
func TestFaultReadingTakesTheCardOutUntilCleared(t *testing.T) {
	t.Parallel()
	fe := newFleetEnv(t, false)
	ctx := context.Background()
	admin := fe.Users["admin"].Token
	push := func(fault string) {
		t.Helper()
		b := fmt.Sprintf(`{"host":"gpu-bj-h800-01","samples":[{"uuid":%q,"index":0,"at":%q,"fault":%q}]}`, uuid0, time.Now().UTC().Format(time.RFC3339Nano), fault)
		if r := fe.Client().APICall(http.MethodPost, telemetry.SamplesPath, fe.agentTok, b); r.StatusCode != http.StatusOK {
			t.Fatalf("push: %d %s", r.StatusCode, r)
		}
		if err := fe.Srv.Board().ProcessEventsNow(ctx); err != nil {
			t.Fatal(err)
		}
	}
	push("GPU requires reset")
	time.Sleep(2 * time.Millisecond)
	push("GPU requires reset")
	if v := fe.Srv.Board().LiveCard(uuid0); v.State != telemetry.StateFault || v.Fault != "GPU requires reset" {
		t.Errorf("board card %s %q, want fault", v.State, v.Fault)
	}
	cd, err := fe.St.FindCardByID(ctx, fe.cards[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if cd.Status != store.CardFault || cd.FaultReason != "GPU requires reset" {
		t.Errorf("inventory card %s %q, want fault", cd.Status, cd.FaultReason)
	}
	if a := openAlerts(t, fe.St, store.AlertFault); len(a) != 1 {
		t.Errorf("%d fault alerts, want one per episode", len(a))
	}
	// A healthy-looking sample does not clear it; an admin does.
	time.Sleep(2 * time.Millisecond)
	push("")
	if err := fe.Srv.Board().RefreshNow(ctx); err != nil {
		t.Fatal(err)
	}
	if v := fe.Srv.Board().LiveCard(uuid0); v.State != telemetry.StateFault {
		t.Errorf("after a healthy sample the card is %s, want still fault", v.State)
	}
	servertest.MustAPIError(t, fe.Client().APICall(http.MethodPost, fmt.Sprintf("/api/v1/cards/%d/clear-fault", fe.cards[1].ID), admin, ""), http.StatusConflict, "conflict")
	servertest.MustAPIError(t, fe.Client().APICall(http.MethodPost, fmt.Sprintf("/api/v1/cards/%d/clear-fault", fe.cards[0].ID), fe.Users["manager"].Token, ""), http.StatusForbidden, "forbidden")
	cleared := servertest.Decode[store.CardView](t, fe.Client().APICall(http.MethodPost, fmt.Sprintf("/api/v1/cards/%d/clear-fault", fe.cards[0].ID), admin, ""), http.StatusOK)
	if cleared.Status != store.CardActive || cleared.FaultReason != "" {
		t.Errorf("cleared card %+v", cleared)
	}
	if a := openAlerts(t, fe.St, store.AlertFault); len(a) != 0 {
		t.Errorf("the fault alert is still open after clearing")
	}
	if err := fe.Srv.Board().RefreshNow(ctx); err != nil {
		t.Fatal(err)
	}
	if v := fe.Srv.Board().LiveCard(uuid0); v.State == telemetry.StateFault {
		t.Errorf("after clearing the card is still %s", v.State)
	}
}

// TestLongStatesListsTheDaysIdleAndFullCards: the daily list, linked from
// the heatmap, names a card idle 22 of 24 hours and one full 21.
func TestLongStatesListsTheDaysIdleAndFullCards(t *testing.T) {
	t.Parallel()
	fe := newFleetEnv(t, false)
	loc := fe.Cfg.TZ
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, loc)
	var minutes []store.Rollup
	for h := range 24 {
		at := day.Add(time.Duration(h) * time.Hour).UTC()
		busy0, full1 := 3600.0, 0.0
		if h >= 2 {
			busy0 = 0 // card 0: idle from 02:00
		}
		if h >= 3 {
			full1 = 3600 // card 1: full from 03:00
		}
		minutes = append(minutes,
			store.Rollup{CardID: fe.cards[0].ID, At: at, Samples: 60, SampledSeconds: 3600, BusySeconds: busy0},
			store.Rollup{CardID: fe.cards[1].ID, At: at, Samples: 60, SampledSeconds: 3600, BusySeconds: 3600, FullSeconds: full1})
	}
	if err := fe.St.SaveRollups(context.Background(), minutes, nil); err != nil {
		t.Fatal(err)
	}
	c := fe.LoggedIn(store.RoleViewer)
	if !strings.Contains(c.Get("/board/heatmap?day=2026-11-30").String(), `href="/board/long?day=2026-11-30"`) {
		t.Error("the heatmap does not link the day's list")
	}
	doc := c.Get("/board/long?day=2026-11-30&lang=en").Doc(t)
	idle := doc.Find(`[data-testid=long-row][data-uuid="` + uuid0 + `"] [data-testid=long-idle]`).Length()
	full := doc.Find(`[data-testid=long-row][data-uuid="` + uuid1 + `"] [data-testid=long-full]`).Length()
	if idle != 1 || full != 1 {
		t.Errorf("long-idle flag %d, long-full flag %d, want both", idle, full)
	}
	if r := c.Get("/board/long?day=yesterday"); r.StatusCode != http.StatusUnprocessableEntity {
		t.Errorf("a bad day: %d", r.StatusCode)
	}
}

// TestBoardShowsTheQueueByCardType: requests waiting for cards are
// counted per card type, with how long the oldest has waited, in the
// fleet JSON and on the board (盯住占用与等待).
func TestBoardShowsTheQueueByCardType(t *testing.T) {
	t.Parallel()
	f := servertest.NewFleet(t, servertest.Options{Vars: map[string]string{"CARDHOUR_SIMULATOR": "false"}}, 1, 1000)
	member := f.Token(store.RoleMember)
	servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings", member, f.BookingBody(f.Normal.ID, "H800", 1, 1, 3)), http.StatusCreated)
	queued := strings.TrimSuffix(f.BookingBody(f.Normal.ID, "H800", 1, 1, 3), "}") + `,"queue":true}`
	for range 2 {
		if b := servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings", member, queued), http.StatusCreated); b.State != store.BookingPending {
			t.Fatalf("queued booking %s", b.State)
		}
	}
	if err := f.E.Srv.Board().RefreshNow(context.Background()); err != nil {
		t.Fatal(err)
	}
	fl := servertest.Decode[struct {
		Summary telemetry.Summary `json:"summary"`
	}](t, f.Call(http.MethodGet, "/api/v1/fleet", member, ""), http.StatusOK)
	if w := fl.Summary.Waiting; len(w) != 1 || w[0].CardType != "H800" || w[0].Requests != 2 || time.Since(w[0].OldestSince) > time.Minute {
		t.Errorf("waiting %+v, want two H800 requests since moments ago", w)
	}
	doc := f.E.LoggedIn(store.RoleViewer).Get("/board?lang=en").Doc(t)
	if sec := doc.Find("[data-testid=waiting]"); sec.AttrOr("hidden", "no") != "no" || !strings.Contains(sec.Text(), "H800: 2 waiting") {
		t.Errorf("the board's queue reads %q", strings.TrimSpace(sec.Text()))
	}
}

// TestAgentTokenPushWithoutAHostIsRefused: a sample naming no host would
// pass both host checks (the token's hosts, the inventory's placement),
// so an agent token must name one.
func TestAgentTokenPushWithoutAHostIsRefused(t *testing.T) {
	t.Parallel()
	fe := newFleetEnv(t, false)
	evil := servertest.Decode[struct {
		Token string `json:"token"`
	}](t, fe.Client().APICall(http.MethodPost, "/api/v1/agent-tokens", fe.Users["admin"].Token, `{"name":"evil","hosts":["gpu-evil"]}`), http.StatusCreated)
	batch := fmt.Sprintf(`{"samples":[{"uuid":%q,"index":0,"at":%q,"util":0,"mem_used_mib":0}]}`, uuid0, time.Now().UTC().Format(time.RFC3339Nano))
	servertest.MustAPIError(t, fe.Client().APICall(http.MethodPost, telemetry.SamplesPath, evil.Token, batch), http.StatusUnprocessableEntity, "invalid")
	if v := fe.Srv.Board().LiveCard(uuid0); !v.LastSample.IsZero() {
		t.Errorf("a push without a host reached the card: %+v", v)
	}
	// An admin's own token may still push without one.
	if r := fe.Client().APICall(http.MethodPost, telemetry.SamplesPath, fe.Users["admin"].Token, batch); r.StatusCode != http.StatusOK {
		t.Errorf("admin push: %d %s", r.StatusCode, r)
	}
}
