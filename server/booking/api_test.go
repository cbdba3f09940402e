package booking_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/web"
)

// TestBookingAPIHappyPath: a member writes a task, books two cards now,
// reads the booking back and releases it early, getting the unused
// card-hours back; the task then shows what was booked.
func TestBookingAPIHappyPath(t *testing.T) {
	t.Parallel()
	f := servertest.NewFleet(t, servertest.Options{}, 4, 1000)
	member := f.Token(store.RoleMember)

	task := servertest.Decode[struct {
		ID                int64   `json:"id"`
		TeamID            int64   `json:"team_id"`
		EstimateCardHours float64 `json:"estimate_card_hours"`
		CardTypeIDs       []int64 `json:"card_type_ids"`
		DataReadyAt       *string `json:"data_ready_at"`
	}](t, f.Call(http.MethodPost, "/api/v1/tasks", member,
		`{"team":"llm","name":"finetune-7b","priority":"normal","estimate_card_hours":12.5,"data_readiness":"partial",
		  "data_ready_at":"2030-01-02T09:00:00+08:00","vram_gib":60,"precision":"bf16","card_types":["H800"]}`), http.StatusCreated)
	if task.TeamID != f.LLM.ID || task.EstimateCardHours != 12.5 || len(task.CardTypeIDs) != 1 || task.CardTypeIDs[0] != f.CT.ID {
		t.Errorf("created task: %+v", task)
	}
	if task.DataReadyAt == nil || *task.DataReadyAt != "2030-01-02T01:00:00Z" {
		t.Errorf("data_ready_at %v, want 2030-01-02T01:00:00Z (stored in UTC)", task.DataReadyAt)
	}

	start := time.Now().UTC().Truncate(time.Second)
	body := fmt.Sprintf(`{"task_id":%d,"card_type":"H800","count":2,"start":%q,"end":%q}`, task.ID,
		start.Format(time.RFC3339), start.Add(2*time.Hour).Format(time.RFC3339))
	b := servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings", member, body), http.StatusCreated)
	if b.ID == 0 || b.State != store.BookingActive || b.Kind != store.KindOnDemand || len(b.Cards) != 2 || b.Cards[0] == b.Cards[1] {
		t.Fatalf("booking: %+v", b)
	}
	// The window starts when the request arrives, a moment after start.
	if b.PriceFen != 1500 || b.CostFen < 5990 || b.CostFen > 2*2*1500 || b.Preempted == nil || len(b.Preempted) != 0 {
		t.Errorf("booking price %d cost %d preempted %v, want 1500, just under 6000, []", b.PriceFen, b.CostFen, b.Preempted)
	}
	uuids := map[string]bool{}
	for _, cd := range f.Cards {
		uuids[cd.UUID] = true
	}
	for _, u := range b.Cards {
		if !uuids[u] {
			t.Errorf("assigned card %q is not a card of the pool", u)
		}
	}

	got := servertest.Decode[servertest.Booking](t, f.Call(http.MethodGet, "/api/v1/bookings/"+strconv.FormatInt(b.ID, 10), f.Token(store.RoleViewer), ""), http.StatusOK)
	if got.State != b.State || strings.Join(got.Cards, ",") != strings.Join(b.Cards, ",") || got.CardType != "H800" {
		t.Errorf("GET by a viewer of the team: %+v, want the created booking %+v", got, b)
	}
	servertest.MustAPIError(t, f.Call(http.MethodGet, "/api/v1/bookings/"+strconv.FormatInt(b.ID, 10), f.Outsider.Token, ""), http.StatusNotFound, "not_found")

	list := servertest.Decode[struct{ Bookings []servertest.Booking }](t, f.Call(http.MethodGet, "/api/v1/bookings?mine=1&card_type=H800", member, ""), http.StatusOK)
	if len(list.Bookings) != 1 || list.Bookings[0].ID != b.ID {
		t.Errorf("GET /api/v1/bookings?mine=1: %+v", list.Bookings)
	}

	rel := servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings/"+strconv.FormatInt(b.ID, 10)+"/release", member, ""), http.StatusOK)
	if rel.State != store.BookingReleased {
		t.Errorf("released booking state %q", rel.State)
	}
	// Released moments after the start: nearly all of 2 cards × 2 h returns.
	if rel.ReturnedCardHours <= 3.9 || rel.ReturnedCardHours > 4 {
		t.Errorf("returned %.4f card-hours, want just under 4", rel.ReturnedCardHours)
	}
	if rel.ReturnedFen <= 5850 || rel.ReturnedFen > 6000 {
		t.Errorf("returned %d fen, want just under 6000", rel.ReturnedFen)
	}
	servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/bookings/"+strconv.FormatInt(b.ID, 10)+"/release", member, ""), http.StatusConflict, "conflict")

	detail := servertest.Decode[struct {
		EstimateCardHours float64 `json:"estimate_card_hours"`
		Usage             struct {
			BookedCardHours float64 `json:"booked_card_hours"`
			Bookings        int     `json:"bookings"`
			Deviation       string  `json:"deviation"`
		} `json:"usage"`
	}](t, f.Call(http.MethodGet, "/api/v1/tasks/"+strconv.FormatInt(task.ID, 10), member, ""), http.StatusOK)
	if detail.Usage.Bookings != 1 || detail.Usage.BookedCardHours < 0 || detail.Usage.BookedCardHours > 0.1 || detail.Usage.Deviation == "" {
		t.Errorf("task usage after the release: %+v", detail.Usage)
	}
	servertest.MustAPIError(t, f.Call(http.MethodGet, "/api/v1/tasks/"+strconv.FormatInt(task.ID, 10), f.Outsider.Token, ""), http.StatusNotFound, "not_found")
}

// TestBookingAPIFullPoolIsConflict: with every card taken the answer is 409
// with the free count, and with queue=true the request waits instead.
func TestBookingAPIFullPoolIsConflict(t *testing.T) {
	t.Parallel()
	f := servertest.NewFleet(t, servertest.Options{}, 4, 1000)
	member := f.Token(store.RoleMember)
	servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings", member, f.BookingBody(f.Normal.ID, "H800", 3, 0, 2)), http.StatusCreated)
	before := f.Counts()
	got := servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/bookings", member, f.BookingBody(f.Normal.ID, "H800", 2, 1, 3)), http.StatusConflict, "conflict")
	if want := web.T(web.LangEN, "booking.no_capacity", 2, 1); got.Error.Message != want {
		t.Errorf("409 message %q, want %q", got.Error.Message, want)
	}
	if after := f.Counts(); after != before {
		t.Errorf("a refused booking changed the database: %+v → %+v", before, after)
	}
	body := strings.TrimSuffix(f.BookingBody(f.Normal.ID, "H800", 2, 1, 3), "}") + `,"queue":true}`
	q := servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings", member, body), http.StatusCreated)
	if q.State != store.BookingPending || q.WaitReason != store.WaitCapacity || len(q.Cards) != 0 {
		t.Errorf("queued booking: %+v", q)
	}
}

// TestBookingAPIBadInputIs422AndWritesNothing walks the bad inputs:
// each is 422 invalid with a message on the right field, and neither a
// booking, a card assignment nor an audit entry appears.
func TestBookingAPIBadInputIs422AndWritesNothing(t *testing.T) {
	t.Parallel()
	f := servertest.NewFleet(t, servertest.Options{}, 4, 1000)
	member := f.Token(store.RoleMember)
	task := f.Normal.ID
	raw := func(start, end string) string {
		return fmt.Sprintf(`{"task_id":%d,"card_type":"H800","count":1,"start":%q,"end":%q}`, task, start, end)
	}
	past := time.Now().UTC().Add(-3 * time.Hour)
	cases := []struct {
		name, body, field, key string
		args                   []any // the limit the message states
	}{
		{"end before start", f.BookingBody(task, "H800", 1, 3, 2), "end", "booking.end_before_start", nil},
		{"end equals start", f.BookingBody(task, "H800", 1, 2, 2), "end", "booking.end_before_start", nil},
		{"window in the past", raw(past.Format(time.RFC3339), past.Add(time.Hour).Format(time.RFC3339)), "start", "booking.start_past", nil},
		{"past the horizon", f.BookingBody(task, "H800", 1, 24*89, 24*92), "end", "booking.past_horizon", nil},
		{"zero count", f.BookingBody(task, "H800", 0, 0, 1), "count", "booking.count_range", []any{64}},
		{"negative count", f.BookingBody(task, "H800", -2, 0, 1), "count", "booking.count_range", []any{64}},
		{"more cards than one booking may take", f.BookingBody(task, "H800", 65, 0, 1), "count", "booking.count_range", []any{64}},
		{"unknown card type name", f.BookingBody(task, "Z9000", 1, 0, 1), "card_type", "cardtype.not_found", nil},
		{"unknown card type id", fmt.Sprintf(`{"task_id":%d,"card_type":987654,"count":1,"start":%q,"end":%q}`, task, f.At(0), f.At(1)), "card_type", "cardtype.not_found", nil},
		{"unknown task", f.BookingBody(987654, "H800", 1, 0, 1), "task_id", "task.not_found", nil},
		{"another team's task", f.BookingBody(f.VisionTask.ID, "H800", 1, 0, 1), "task_id", "booking.not_your_team", nil},
		{"malformed start", raw("next tuesday", f.At(1)), "start", "api.time_invalid", nil},
		{"malformed end", raw(f.At(0), "2026-13-45T25:00:00Z"), "end", "api.time_invalid", nil},
		{"time without zone", raw(f.Base.Format("2006-01-02T15:04:05"), f.At(1)), "start", "api.time_invalid", nil},
		{"missing start", fmt.Sprintf(`{"task_id":%d,"card_type":"H800","count":1,"end":%q}`, task, f.At(1)), "start", "booking.start_required", nil},
	}
	before := f.Counts()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/bookings", member, tc.body), http.StatusUnprocessableEntity, "invalid")
			if want := web.T(web.LangEN, tc.key, tc.args...); got.Error.Fields[tc.field] != want {
				t.Errorf("fields = %v, want %s: %q", got.Error.Fields, tc.field, want)
			}
		})
	}
	// Malformed JSON and unknown fields are 422 too, not 400.
	servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/bookings", member, `{"task_id":1,`), http.StatusUnprocessableEntity, "invalid")
	servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/bookings", member, strings.TrimSuffix(f.BookingBody(task, "H800", 1, 0, 1), "}")+`,"cardz":2}`),
		http.StatusUnprocessableEntity, "invalid")
	if after := f.Counts(); after != before {
		t.Errorf("refused bookings changed the database: %+v → %+v", before, after)
	}

	// The same for a task and a quota with broken fields.
	got := servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/tasks", member,
		`{"team":"nope","name":"x","priority":"urgent","estimate_card_hours":1,"data_readiness":"ready","data_ready_at":"soon"}`),
		http.StatusUnprocessableEntity, "invalid")
	for _, field := range []string{"team", "data_ready_at"} {
		if got.Error.Fields[field] == "" {
			t.Errorf("task: no message for %s in %v", field, got.Error.Fields)
		}
	}
	got = servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/tasks", member,
		`{"team":"llm","name":"","priority":"urgent","estimate_card_hours":0,"data_readiness":"ready"}`), http.StatusUnprocessableEntity, "invalid")
	for _, field := range []string{"name", "priority", "estimate_card_hours"} {
		if got.Error.Fields[field] == "" {
			t.Errorf("task: no message for %s in %v", field, got.Error.Fields)
		}
	}
	got = servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/tasks", member,
		`{"team":"vision","name":"sneaky","priority":"core","estimate_card_hours":5,"data_readiness":"ready"}`), http.StatusUnprocessableEntity, "invalid")
	if got.Error.Fields["team"] != web.T(web.LangEN, "api.task_not_your_team") {
		t.Errorf("task for another team: fields %v", got.Error.Fields)
	}
	got = servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/quotas", f.Token(store.RoleAdmin),
		`{"team":"llm","card_type":"H800","card_hours":10,"valid_from":"yesterday","expires_at":"2030-01-01"}`), http.StatusUnprocessableEntity, "invalid")
	if got.Error.Fields["valid_from"] == "" || got.Error.Fields["expires_at"] == "" {
		t.Errorf("quota with malformed times: fields %v", got.Error.Fields)
	}
	if after := f.Counts(); after != before {
		t.Errorf("refused tasks and quotas changed the database: %+v → %+v", before, after)
	}
}

// TestBookingAPIOverQuotaIsConflict: over the card-hours and past the
// quota's expiry each get 409 saying which limit and by how much, and
// nothing is written; a manager may override, which the audit log records.
func TestBookingAPIOverQuotaIsConflict(t *testing.T) {
	t.Parallel()
	f := servertest.NewFleet(t, servertest.Options{}, 4, 100)
	member := f.Token(store.RoleMember)
	before := f.Counts()

	got := servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/bookings", member, f.BookingBody(f.Normal.ID, "H800", 4, 0, 30)), http.StatusConflict, "conflict")
	if want := web.T(web.LangEN, "quota.over_hours", "20.0"); got.Error.Message != want {
		t.Errorf("over the hours: %q, want %q", got.Error.Message, want)
	}
	expiry := 30 * 24.0
	got = servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/bookings", member, f.BookingBody(f.Normal.ID, "H800", 1, expiry-2, expiry+24)), http.StatusConflict, "conflict")
	if want := web.T(web.LangEN, "quota.past_expiry", "24.0"); got.Error.Message != want {
		t.Errorf("past the expiry: %q, want %q", got.Error.Message, want)
	}
	if after := f.Counts(); after != before {
		t.Errorf("refused bookings changed the database: %+v → %+v", before, after)
	}

	// A member cannot override; the team's manager can, and it is audited.
	withOverride := strings.TrimSuffix(f.BookingBody(f.Normal.ID, "H800", 4, 0, 30), "}") + `,"override_quota":true}`
	servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/bookings", member, withOverride), http.StatusConflict, "conflict")
	b := servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings", f.Token(store.RoleManager), withOverride), http.StatusCreated)
	entries, _, err := f.E.St.FindAuditEntries(context.Background(), store.AuditFilter{Entity: "booking", EntityID: b.ID})
	if err != nil {
		t.Fatal(err)
	}
	overridden := false
	for _, a := range entries {
		overridden = overridden || a.Action == "quota_override"
	}
	if !overridden {
		t.Errorf("the manager's quota override is not in the audit log: %+v", entries)
	}
}

// TestBookingAPIPreemptionIsVisibleToTheVictim: a core booking displaces an
// overlapping backfill one; GET on the victim says preempted and by which.
func TestBookingAPIPreemptionIsVisibleToTheVictim(t *testing.T) {
	t.Parallel()
	f := servertest.NewFleet(t, servertest.Options{}, 4, 1000)
	member, manager := f.Token(store.RoleMember), f.Token(store.RoleManager)
	victim := servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings", member, f.BookingBody(f.Backfill.ID, "H800", 4, 1, 5)), http.StatusCreated)
	if victim.Priority != "backfill" || victim.State != store.BookingConfirmed {
		t.Fatalf("backfill booking: %+v", victim)
	}
	core := servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings", manager, f.BookingBody(f.Core.ID, "H800", 2, 0, 2)), http.StatusCreated)
	if len(core.Preempted) != 1 || core.Preempted[0] != victim.ID {
		t.Fatalf("core booking preempted %v, want [%d]", core.Preempted, victim.ID)
	}
	got := servertest.Decode[servertest.Booking](t, f.Call(http.MethodGet, "/api/v1/bookings/"+strconv.FormatInt(victim.ID, 10), member, ""), http.StatusOK)
	if got.State != store.BookingPreempted || got.NoteKey != store.NotePreemptedBy || !slices.Equal(got.NoteArgs, []int64{core.ID}) ||
		got.Note != web.T(web.LangEN, store.NotePreemptedBy, core.ID) || !strings.Contains(got.Note, fmt.Sprintf("booking #%d", core.ID)) {
		t.Errorf("victim after preemption: state %q note %q (%q %v), want preempted by booking #%d", got.State, got.Note, got.NoteKey, got.NoteArgs, core.ID)
	}
	list := servertest.Decode[struct{ Bookings []servertest.Booking }](t, f.Call(http.MethodGet, "/api/v1/bookings?state=preempted", member, ""), http.StatusOK)
	if len(list.Bookings) != 1 || list.Bookings[0].ID != victim.ID {
		t.Errorf("?state=preempted lists %+v", list.Bookings)
	}
	servertest.MustAPIError(t, f.Call(http.MethodGet, "/api/v1/bookings?state=gone", member, ""), http.StatusUnprocessableEntity, "invalid")
}

// TestBookingAPIAccess: a viewer may read but not book; no token is 401.
func TestBookingAPIAccess(t *testing.T) {
	t.Parallel()
	f := servertest.NewFleet(t, servertest.Options{}, 2, 1000)
	body := f.BookingBody(f.Normal.ID, "H800", 1, 0, 1)
	before := f.Counts()
	servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/bookings", f.Token(store.RoleViewer), body), http.StatusForbidden, "forbidden")
	// No token: 401 for a read and for a write (with no cookie there is no
	// ambient credential for CSRF to protect), and for a token that is not one.
	servertest.MustAPIError(t, f.Call(http.MethodGet, "/api/v1/bookings", "", ""), http.StatusUnauthorized, "unauthorized")
	servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/bookings", "cht_not-a-token", body), http.StatusUnauthorized, "unauthorized")
	servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/bookings", "", body), http.StatusUnauthorized, "unauthorized")
	servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/tasks", f.Token(store.RoleViewer), `{}`), http.StatusForbidden, "forbidden")
	servertest.MustAPIError(t, f.Call(http.MethodGet, "/api/v1/quotas", f.Token(store.RoleMember), ""), http.StatusForbidden, "forbidden")
	if after := f.Counts(); after != before {
		t.Errorf("refused requests changed the database: %+v → %+v", before, after)
	}
	if r := f.Call(http.MethodGet, "/api/v1/availability", f.Token(store.RoleViewer), ""); r.StatusCode != http.StatusOK {
		t.Errorf("viewer GET /api/v1/availability: %d", r.StatusCode)
	}
	// Another team's member does not find this team's booking, to change
	// it no more than to read it.
	b := servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings", f.Token(store.RoleMember), body), http.StatusCreated)
	servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/bookings/"+strconv.FormatInt(b.ID, 10)+"/cancel", f.Outsider.Token, ""), http.StatusNotFound, "not_found")
}

// TestBookingAPIExtendCancelApprove: the other lifecycle actions.
func TestBookingAPIExtendCancelApprove(t *testing.T) {
	t.Parallel()
	f := servertest.NewFleet(t, servertest.Options{}, 2, 1000)
	member := f.Token(store.RoleMember)
	a := servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings", member, f.BookingBody(f.Normal.ID, "H800", 2, 0, 1)), http.StatusCreated)
	ext := servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings/"+strconv.FormatInt(a.ID, 10)+"/extend", member, fmt.Sprintf(`{"end":%q}`, f.At(2))), http.StatusOK)
	if ext.End != f.At(2) {
		t.Errorf("extended end %s, want %s", ext.End, f.At(2))
	}
	got := servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/bookings/"+strconv.FormatInt(a.ID, 10)+"/extend", member, `{"end":"later"}`), http.StatusUnprocessableEntity, "invalid")
	if got.Error.Fields["end"] != web.T(web.LangEN, "api.time_invalid") {
		t.Errorf("extend with a malformed end: %v", got.Error.Fields)
	}
	// The cards are taken 2–3 h by another booking: extending into it conflicts.
	servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings", member, f.BookingBody(f.Normal.ID, "H800", 2, 2, 3)), http.StatusCreated)
	servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/bookings/"+strconv.FormatInt(a.ID, 10)+"/extend", member, fmt.Sprintf(`{"end":%q}`, f.At(3))), http.StatusConflict, "conflict")

	c := servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings/"+strconv.FormatInt(a.ID, 10)+"/cancel", member, ""), http.StatusOK)
	if c.State != store.BookingCancelled {
		t.Errorf("cancelled state %q", c.State)
	}

	// A team that needs approval: the member's booking waits for the manager.
	ctx := f.E.AdminCtx()
	if _, err := f.E.St.UpdateTeam(ctx, f.LLM.ID, store.TeamInput{Name: "llm", RequiresApproval: true}); err != nil {
		t.Fatal(err)
	}
	w := servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings", member, f.BookingBody(f.Normal.ID, "H800", 1, 5, 6)), http.StatusCreated)
	if w.State != store.BookingPending || w.WaitReason != store.WaitApproval {
		t.Fatalf("booking in a team needing approval: %+v", w)
	}
	ok := servertest.Decode[servertest.Booking](t, f.Call(http.MethodPost, "/api/v1/bookings/"+strconv.FormatInt(w.ID, 10)+"/approve", f.Token(store.RoleManager), ""), http.StatusOK)
	if ok.State != store.BookingConfirmed || len(ok.Cards) != 1 {
		t.Errorf("approved booking: %+v", ok)
	}
}

// TestTaskAPIListsTheCallersTeams: tasks of one's teams only; admins all.
func TestTaskAPIListsTheCallersTeams(t *testing.T) {
	t.Parallel()
	f := servertest.NewFleet(t, servertest.Options{}, 1, 1000)
	type list struct {
		Tasks []struct {
			Name   string `json:"name"`
			TeamID int64  `json:"team_id"`
		} `json:"tasks"`
	}
	viewer := servertest.Decode[list](t, f.Call(http.MethodGet, "/api/v1/tasks", f.Token(store.RoleViewer), ""), http.StatusOK)
	if len(viewer.Tasks) != 3 || viewer.Tasks[0].Name != "pretrain" {
		t.Errorf("viewer of llm sees %+v, want llm's 3 tasks, core first", viewer.Tasks)
	}
	admin := servertest.Decode[list](t, f.Call(http.MethodGet, "/api/v1/tasks", f.Token(store.RoleAdmin), ""), http.StatusOK)
	if len(admin.Tasks) != 4 {
		t.Errorf("admin sees %d tasks, want 4", len(admin.Tasks))
	}
	only := servertest.Decode[list](t, f.Call(http.MethodGet, "/api/v1/tasks?team=vision", f.Token(store.RoleAdmin), ""), http.StatusOK)
	if len(only.Tasks) != 1 || only.Tasks[0].TeamID != f.Vision.ID {
		t.Errorf("?team=vision: %+v", only.Tasks)
	}
	upd := servertest.Decode[struct {
		Priority          string  `json:"priority"`
		EstimateCardHours float64 `json:"estimate_card_hours"`
	}](t, f.Call(http.MethodPut, "/api/v1/tasks/"+strconv.FormatInt(f.Normal.ID, 10), f.Token(store.RoleMember),
		`{"name":"eval","priority":"core","estimate_card_hours":80,"data_readiness":"ready","vram_gib":40,"precision":"fp8"}`), http.StatusOK)
	if upd.Priority != "core" || upd.EstimateCardHours != 80 {
		t.Errorf("updated task: %+v", upd)
	}
	got := servertest.MustAPIError(t, f.Call(http.MethodPut, "/api/v1/tasks/"+strconv.FormatInt(f.Normal.ID, 10), f.Token(store.RoleMember),
		`{"team":"vision","name":"eval","priority":"core","estimate_card_hours":80,"data_readiness":"ready"}`), http.StatusUnprocessableEntity, "invalid")
	if got.Error.Fields["team"] == "" {
		t.Errorf("moving a task to another team: fields %v", got.Error.Fields)
	}
}

// TestConcurrentAPIBookingsMatchCapacitySQLite hammers one small pool over
// HTTP on SQLite: exactly the capacity succeeds, every other answer is 409,
// and no card is held twice at once.
func TestConcurrentAPIBookingsMatchCapacitySQLite(t *testing.T) {
	t.Parallel()
	const cards, slots, requests = 4, 10, 160
	f := servertest.NewFleet(t, servertest.Options{}, cards, 1000)
	member := f.Token(store.RoleMember)
	codes := make([]int, requests)
	bodies := make([]string, requests)
	var wg sync.WaitGroup
	for i := 0; i < requests; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			slot := float64(i % slots)
			req, _ := http.NewRequest(http.MethodPost, f.E.TS.URL+"/api/v1/bookings", strings.NewReader(f.BookingBody(f.Normal.ID, "H800", 1, slot, slot+1)))
			req.Header.Set("Authorization", "Bearer "+member)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				bodies[i] = err.Error()
				return
			}
			defer res.Body.Close()
			var e servertest.APIErr
			_ = json.NewDecoder(res.Body).Decode(&e)
			codes[i], bodies[i] = res.StatusCode, e.Error.Code
		}(i)
	}
	wg.Wait()
	ok := 0
	for i, c := range codes {
		switch {
		case c == http.StatusCreated:
			ok++
		case c == http.StatusConflict && bodies[i] == "conflict":
		default:
			t.Errorf("request %d: status %d %s, want 201 or 409 conflict", i, c, bodies[i])
		}
	}
	if ok != cards*slots {
		t.Errorf("%d bookings succeeded, want exactly %d", ok, cards*slots)
	}
	if n := abOverlaps(t, f.E.St); n != 0 {
		t.Errorf("%d overlapping held card assignments", n)
	}
}

// abOverlaps counts pairs of held assignments of one card that overlap.
func abOverlaps(t testing.TB, st *store.Store) int64 {
	t.Helper()
	var n int64
	q := `SELECT COUNT(*) FROM booking_cards a JOIN booking_cards b ON a.card_id = b.card_id AND a.id < b.id
	      AND a.held = 1 AND b.held = 1 AND a.start_at < b.end_at AND b.start_at < a.end_at`
	if err := st.DB().QueryRow(q).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestValidationMessagesStateTheLimit: a refused field says what is
// allowed — "At most 100 characters.", not "This is too long." — in the
// JSON answer's fields, every invalid field at once.
func TestValidationMessagesStateTheLimit(t *testing.T) {
	t.Parallel()
	f := servertest.NewFleet(t, servertest.Options{}, 4, 1000)
	body := fmt.Sprintf(`{"team":%d,"name":%q,"priority":"normal","estimate_card_hours":20000000,"data_readiness":"ready","notes":%q}`,
		f.Normal.TeamID, strings.Repeat("名", 101), strings.Repeat("x", 2001))
	got := servertest.MustAPIError(t, f.Call(http.MethodPost, "/api/v1/tasks", f.Token(store.RoleMember), body), http.StatusUnprocessableEntity, "invalid")
	for field, want := range map[string]string{
		"name":                "At most 100 characters.",
		"notes":               "At most 2000 characters.",
		"estimate_card_hours": "The card-hour estimate must be above 0 and at most 1,000,000 card-hours.",
	} {
		if got.Error.Fields[field] != want {
			t.Errorf("field %s: %q, want %q (all: %v)", field, got.Error.Fields[field], want, got.Error.Fields)
		}
	}
}
