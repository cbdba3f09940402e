package booking_test

// Tests of the booking pages: tasks, the VRAM estimator, the booking form
// with its preview, the booking page and its actions. They use the shared
// harness in helpers_test.go and read pages through data-testid attributes.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"cardhour/schedule"
	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/store/storetest"
	"cardhour/web"
)

// bkpWorld is one card type of four cards at ¥12.00 per card-hour, a team
// where the test member is a member and the test manager a manager, with a
// quota and a task, and another team with a task of its own.
type bkpWorld struct {
	e                   *servertest.Env
	typeID              int64
	teamID, otherTeamID int64
	taskID, otherTaskID int64
}

const bkpPriceFen = 1200

func bkpSetup(t *testing.T) *bkpWorld { return bkpSetupOn(t, store.SQLite) }

// bkpSetupOn builds the world on SQLite or on a fresh MariaDB database.
func bkpSetupOn(t *testing.T, dialect string) *bkpWorld {
	t.Helper()
	o := servertest.Options{}
	if dialect == store.MySQL {
		dsn, _ := storetest.MySQLDSN(t)
		o.Vars = map[string]string{"CARDHOUR_DB": "mysql://" + dsn}
	}
	e := servertest.New(t, o)
	if e.St.Dialect() != dialect {
		t.Fatalf("portal runs on %s, want %s", e.St.Dialect(), dialect)
	}
	ctx := store.WithActor(context.Background(), store.Actor{UserID: e.Users[store.RoleAdmin].ID, Username: "admin"})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	w := &bkpWorld{e: e}
	ct, err := e.St.CreateCardType(ctx, store.CardTypeInput{Name: "H800", VRAMGiB: 80, TFLOPSBF16: 989, TFLOPSFP16: 989, TFLOPSFP32: 67, PriceFen: bkpPriceFen})
	must(err)
	w.typeID = ct.ID
	host, err := e.St.CreateHost(ctx, store.HostInput{Name: "gpu-01", Zone: "a"})
	must(err)
	for i := 0; i < 4; i++ {
		_, err := e.St.CreateCard(ctx, store.CardInput{UUID: fmt.Sprintf("GPU-%08x-1111-2222-3333-%012x", i, i), GPUIndex: i,
			HostID: host.ID, CardTypeID: ct.ID, Status: store.CardActive})
		must(err)
	}
	team, err := e.St.CreateTeam(ctx, store.TeamInput{Name: "llm"})
	must(err)
	other, err := e.St.CreateTeam(ctx, store.TeamInput{Name: "vision"})
	must(err)
	w.teamID, w.otherTeamID = team.ID, other.ID
	_, err = e.St.SetMembership(ctx, team.ID, e.Users[store.RoleMember].ID, store.TeamRoleMember)
	must(err)
	_, err = e.St.SetMembership(ctx, team.ID, e.Users[store.RoleManager].ID, store.TeamRoleManager)
	must(err)
	_, err = e.St.SetMembership(ctx, team.ID, e.Users[store.RoleViewer].ID, store.TeamRoleViewer)
	must(err)
	now := time.Now()
	for _, teamID := range []int64{team.ID, other.ID} {
		_, err = e.St.CreateQuota(ctx, store.QuotaInput{TeamID: teamID, CardTypeID: ct.ID, CardHours: 1000,
			ValidFrom: now.Add(-24 * time.Hour), ExpiresAt: now.Add(120 * 24 * time.Hour)})
		must(err)
	}
	task, err := e.St.CreateTask(ctx, store.TaskInput{TeamID: team.ID, Name: "7B 续训", Priority: schedule.Normal, EstimateCardHours: 100,
		DataReadiness: schedule.DataReady, VRAMGiB: 60, Precision: "bf16"})
	must(err)
	w.taskID = task.ID
	otherTask, err := e.St.CreateTask(ctx, store.TaskInput{TeamID: other.ID, Name: "检测 v5", Priority: schedule.Normal, EstimateCardHours: 100,
		DataReadiness: schedule.DataReady, VRAMGiB: 30, Precision: "bf16"})
	must(err)
	w.otherTaskID = otherTask.ID
	return w
}

func (w *bkpWorld) bookings(t *testing.T) []store.BookingView {
	t.Helper()
	bs, err := w.e.St.FindBookings(context.Background(), store.BookingFilter{})
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

// local is t as the booking form's datetime-local value in the portal's zone.
func (w *bkpWorld) local(t time.Time) string { return t.In(w.e.Cfg.TZ).Format("2006-01-02T15:04") }

// window is a booking form for the task over [start, end).
func (w *bkpWorld) window(taskID int64, count int, start, end time.Time) url.Values {
	return url.Values{"task_id": {strconv.FormatInt(taskID, 10)}, "card_type": {strconv.FormatInt(w.typeID, 10)},
		"count": {strconv.Itoa(count)}, "mode": {"window"}, "start": {w.local(start)}, "end": {w.local(end)}}
}

func bkpWant(t *testing.T, r servertest.Response, status int, what string) {
	t.Helper()
	if r.StatusCode != status {
		t.Fatalf("%s: status %d, want %d\n%.3000s", what, r.StatusCode, status, r)
	}
}

func bkpText(doc *goquery.Document, sel string) string {
	return strings.TrimSpace(doc.Find(sel).First().Text())
}

func bkpZH(key string, args ...any) string { return web.T(web.LangZH, key, args...) }

// TestTaskCreatedThroughTheFormIsListed: a member creates a task baseline
// with the form; it is listed with its priority, estimate and readiness,
// and its page offers booking. Bad values come back inline with 422, and a
// team the member does not belong to is refused.
func TestTaskCreatedThroughTheFormIsListed(t *testing.T) {
	t.Parallel()
	w := bkpSetup(t)
	c := w.e.LoggedIn(store.RoleMember)

	form := c.Get("/tasks/new")
	bkpWant(t, form, http.StatusOK, "GET /tasks/new")
	doc := form.Doc(t)
	if n := doc.Find(`select[name=team_id] option[value="` + strconv.FormatInt(w.otherTeamID, 10) + `"]`).Length(); n != 0 {
		t.Errorf("the team select offers a team the member does not belong to")
	}
	if n := doc.Find(`input[name=card_type_ids]`).Length(); n != 1 {
		t.Errorf("preferred card types: %d check boxes, want 1", n)
	}

	v := url.Values{"team_id": {strconv.FormatInt(w.teamID, 10)}, "name": {"SFT 指令微调"}, "priority": {"core"},
		"estimate_card_hours": {"160"}, "data_readiness": {"not_ready"}, "data_ready_at": {w.local(time.Now().Add(48 * time.Hour))},
		"vram_gib": {"60"}, "precision": {"bf16"}, "card_type_ids": {strconv.FormatInt(w.typeID, 10)}, "notes": {"ZeRO-3"}}
	r := c.PostForm("/tasks/new", v, true)
	bkpWant(t, r, http.StatusSeeOther, "POST /tasks/new")
	tasks, err := w.e.St.FindTasks(context.Background(), store.TaskFilter{TeamID: w.teamID})
	if err != nil {
		t.Fatal(err)
	}
	var created *store.Task
	for i := range tasks {
		if tasks[i].Name == "SFT 指令微调" {
			created = &tasks[i]
		}
	}
	if created == nil {
		t.Fatal("the task was not stored")
	}
	if created.Priority != "core" || created.EstimateCardHours() != 160 || created.DataReadyAt == nil || len(created.CardTypeIDs) != 1 {
		t.Errorf("stored task %+v does not match the form", created)
	}
	if loc := r.Header.Get("Location"); loc != "/tasks/"+strconv.FormatInt(created.ID, 10) {
		t.Errorf("redirect to %q, want the task page", loc)
	}

	list := c.Get("/tasks")
	bkpWant(t, list, http.StatusOK, "GET /tasks")
	row := list.Doc(t).Find(`[data-testid=task-row][data-id="` + strconv.FormatInt(created.ID, 10) + `"]`)
	if row.Length() != 1 {
		t.Fatalf("the new task is not listed:\n%s", list)
	}
	if p, _ := row.Find("[data-testid=task-priority]").Attr("data-priority"); p != "core" {
		t.Errorf("priority chip %q, want core", p)
	}
	if got := strings.TrimSpace(row.Find("[data-testid=task-priority]").Text()); got != bkpZH("taskprio.core") {
		t.Errorf("priority chip text %q, want %q", got, bkpZH("taskprio.core"))
	}
	if got := strings.TrimSpace(row.Find("[data-testid=task-estimate]").Text()); got != "160.0" {
		t.Errorf("estimate %q, want 160.0", got)
	}
	if rd, _ := row.Find("[data-testid=task-readiness]").Attr("data-readiness"); rd != "not_ready" {
		t.Errorf("readiness %q, want not_ready", rd)
	}
	if d, _ := row.Find("[data-testid=task-deviation]").Attr("data-deviation"); d != store.DeviationOnPlan {
		t.Errorf("deviation %q, want on_plan", d)
	}

	page := c.Get("/tasks/" + strconv.FormatInt(created.ID, 10))
	bkpWant(t, page, http.StatusOK, "GET task page")
	if href, _ := page.Doc(t).Find("[data-testid=task-book]").Attr("href"); href != "/booking/new?task="+strconv.FormatInt(created.ID, 10) {
		t.Errorf("book-for-this-task link %q", href)
	}

	bad := url.Values{"team_id": {strconv.FormatInt(w.teamID, 10)}, "name": {""}, "priority": {"core"},
		"estimate_card_hours": {"lots"}, "data_readiness": {"ready"}}
	r = c.PostForm("/tasks/new", bad, true)
	bkpWant(t, r, http.StatusUnprocessableEntity, "POST /tasks/new with a non-number estimate")
	if got := bkpText(r.Doc(t), "[data-testid=error-estimate_card_hours]"); got != bkpZH("field.number") {
		t.Errorf("estimate message %q, want %q", got, bkpZH("field.number"))
	}
	bad.Set("estimate_card_hours", "10")
	r = c.PostForm("/tasks/new", bad, true)
	bkpWant(t, r, http.StatusUnprocessableEntity, "POST /tasks/new without a name")
	if got := bkpText(r.Doc(t), "[data-testid=error-name]"); got != bkpZH("field.required") {
		t.Errorf("name message %q, want %q", got, bkpZH("field.required"))
	}

	foreign := servertest.CloneValues(v)
	foreign.Set("team_id", strconv.FormatInt(w.otherTeamID, 10))
	foreign.Set("name", "偷偷建的任务")
	r = c.PostForm("/tasks/new", foreign, true)
	bkpWant(t, r, http.StatusUnprocessableEntity, "POST /tasks/new for another team")
	if got := bkpText(r.Doc(t), "[data-testid=error-team_id]"); got == "" {
		t.Errorf("no message next to the team select")
	}
	if others, _ := w.e.St.FindTasks(context.Background(), store.TaskFilter{TeamID: w.otherTeamID}); len(others) != 1 {
		t.Errorf("the other team has %d tasks, want 1", len(others))
	}

	// Editing: the readiness goes to ready; another team's task is refused.
	edit := servertest.CloneValues(v)
	edit.Set("data_readiness", "ready")
	r = c.PostForm("/tasks/"+strconv.FormatInt(created.ID, 10)+"/edit", edit, true)
	bkpWant(t, r, http.StatusSeeOther, "POST task edit")
	if got, _ := w.e.St.FindTaskByID(context.Background(), created.ID); got.DataReadiness != "ready" {
		t.Errorf("readiness after edit %q, want ready", got.DataReadiness)
	}
	// Another team's task is not found, in the pages as in the API.
	r = c.PostForm("/tasks/"+strconv.FormatInt(w.otherTaskID, 10)+"/edit", foreign, true)
	bkpWant(t, r, http.StatusNotFound, "POST edit of another team's task")
	r = c.Get("/tasks/" + strconv.FormatInt(w.otherTaskID, 10))
	bkpWant(t, r, http.StatusNotFound, "GET another team's task")
}

// TestEstimatorSevenBInference: 7B parameters in bf16 for inference at batch
// 1 and 4096 tokens: the page shows the estimate, its parts, and how many
// cards of each type carry it.
func TestEstimatorSevenBInference(t *testing.T) {
	t.Parallel()
	w := bkpSetup(t)
	c := w.e.LoggedIn(store.RoleViewer)
	r := c.Get("/estimator?params_b=7&precision=bf16&workload=inference&batch=1&context=4096")
	bkpWant(t, r, http.StatusOK, "GET /estimator")
	want, err := schedule.EstimateVRAM(schedule.VRAMInput{ParamsB: 7, Precision: "bf16", Workload: schedule.WorkInference, Batch: 1, Context: 4096})
	if err != nil {
		t.Fatal(err)
	}
	doc := r.Doc(t)
	if got, _ := doc.Find("[data-testid=estimator-total]").Attr("data-gib"); got != strconv.FormatFloat(want.TotalGiB, 'f', 1, 64) {
		t.Errorf("total %q GiB, want %.1f", got, want.TotalGiB)
	}
	// 7e9 × 2 bytes is 13.0 GiB of weights.
	if got := bkpText(doc, "[data-testid=part-weights] td.num"); got != "13.0 GiB" {
		t.Errorf("weights %q, want 13.0 GiB", got)
	}
	if doc.Find("[data-testid=part-kv_cache]").Length() != 1 || doc.Find("[data-testid=part-overhead]").Length() != 1 {
		t.Errorf("inference breakdown lacks KV cache or overhead")
	}
	if doc.Find("[data-testid=part-optimizer]").Length() != 0 {
		t.Errorf("inference breakdown shows optimizer state")
	}
	fit := doc.Find("[data-testid=fit-row]")
	if fit.Length() != 1 {
		t.Fatalf("%d fitting card types, want 1", fit.Length())
	}
	if n, _ := fit.Attr("data-cards"); n != "1" {
		t.Errorf("cards needed %q, want 1", n)
	}
	if got := strings.TrimSpace(fit.Find("[data-testid=fit-hourly]").Text()); got != "¥12.00" {
		t.Errorf("hourly cost %q, want ¥12.00", got)
	}
	href, _ := doc.Find("[data-testid=estimator-use]").Attr("href")
	if !strings.HasPrefix(href, "/tasks/new?") || !strings.Contains(href, "precision=bf16") || !strings.Contains(href, "vram_gib=") {
		t.Errorf("use-for-a-new-task link %q", href)
	}

	bad := c.Get("/estimator?params_b=seven&precision=bf16&workload=inference")
	bkpWant(t, bad, http.StatusUnprocessableEntity, "GET /estimator with a bad number")
	if got := bkpText(bad.Doc(t), "[data-testid=error-params_b]"); got != bkpZH("field.number") {
		t.Errorf("params message %q", got)
	}
}

// TestBookingPreviewShowsCostThenConfirmBooks: the preview shows card-hours
// × price = cost and writes nothing; confirming books with cards assigned.
func TestBookingPreviewShowsCostThenConfirmBooks(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := bkpSetupOn(t, dialect)
		c := w.e.LoggedIn(store.RoleMember)

		form := c.Get("/booking/new?task=" + strconv.FormatInt(w.taskID, 10))
		bkpWant(t, form, http.StatusOK, "GET /booking/new")
		fd := form.Doc(t)
		if v, _ := fd.Find("[data-testid=booking-form] input[name=task_id]").Attr("value"); v != strconv.FormatInt(w.taskID, 10) {
			t.Errorf("the form books for task %q, want the ?task= one", v)
		}
		if fd.Find("[data-testid=fit-row]").Length() != 1 {
			t.Errorf("the 60 GiB bf16 task should fit the 80 GiB card type")
		}
		if got := bkpText(fd, "[data-testid=fit-row] [data-testid=fit-quota]"); got != bkpZH("bkfit.quota_left", "1000.0") {
			t.Errorf("the form shows the team's quota left as %q", got)
		}
		if fd.Find("[data-testid=check-override_quota]").Length() != 0 {
			t.Errorf("a member is offered the manager's quota override")
		}

		start := time.Now().Add(2 * time.Hour).Truncate(time.Minute)
		v := w.window(w.taskID, 2, start, start.Add(3*time.Hour))
		r := c.PostForm("/booking/preview", v, true)
		bkpWant(t, r, http.StatusOK, "POST /booking/preview")
		doc := r.Doc(t)
		// 2 cards × 3 h = 6 card-hours × ¥12.00 = ¥72.00.
		if fen, _ := doc.Find("[data-testid=preview-cost]").Attr("data-fen"); fen != "7200" {
			t.Errorf("cost %s fen, want 7200", fen)
		}
		if got := bkpText(doc, "[data-testid=preview-cost]"); got != "¥72.00" {
			t.Errorf("cost %q, want ¥72.00", got)
		}
		if got := bkpText(doc, "[data-testid=preview-formula]"); got != bkpZH("bkpreview.formula", "6.0", "¥12.00") {
			t.Errorf("formula %q", got)
		}
		if got := bkpText(doc, "[data-testid=preview-free]"); got != bkpZH("bkpreview.free_of", 4, 4) {
			t.Errorf("free cards %q", got)
		}
		if got := bkpText(doc, "[data-testid=preview-quota]"); !strings.Contains(got, "1000.0") || !strings.Contains(got, "994.0") {
			t.Errorf("quota line %q should say 1000.0 left and 994.0 after", got)
		}
		if doc.Find("[data-testid=preview-over-estimate]").Length() != 0 {
			t.Errorf("6 of 100 estimated card-hours warned as over the estimate")
		}
		if n := len(w.bookings(t)); n != 0 {
			t.Fatalf("the preview wrote %d bookings", n)
		}

		confirm := url.Values{}
		doc.Find("[data-testid=booking-confirm-form] input[type=hidden]").Each(func(_ int, s *goquery.Selection) {
			name, _ := s.Attr("name")
			val, _ := s.Attr("value")
			if name != "_csrf" {
				confirm.Set(name, val)
			}
		})
		r = c.PostForm("/booking", confirm, true)
		bkpWant(t, r, http.StatusSeeOther, "POST /booking")
		bs := w.bookings(t)
		if len(bs) != 1 {
			t.Fatalf("%d bookings, want 1", len(bs))
		}
		b := bs[0]
		if b.State != store.BookingConfirmed || len(b.Cards) != 2 || b.CardCount != 2 || !b.StartAt.Equal(start) {
			t.Errorf("booking %+v: want confirmed with 2 cards from %v", b.Booking, start)
		}
		if loc := r.Header.Get("Location"); loc != "/bookings/"+strconv.FormatInt(b.ID, 10) {
			t.Errorf("redirect to %q", loc)
		}
		page := c.Get(r.Header.Get("Location"))
		bkpWant(t, page, http.StatusOK, "GET booking page")
		pd := page.Doc(t)
		if got := bkpText(pd, "[data-testid=flash]"); got != bkpZH("bkflash.placed", b.ID, 2) {
			t.Errorf("flash %q", got)
		}
		if n := pd.Find("[data-testid=booking-card]").Length(); n != 2 {
			t.Errorf("%d cards shown, want 2", n)
		}
		if got := bkpText(pd, "[data-testid=booking-detail] [data-testid=booking-state]"); got != bkpZH("bkstate.confirmed") {
			t.Errorf("state %q", got)
		}
		if got := bkpText(pd, "[data-testid=booking-cost]"); got != "¥72.00" {
			t.Errorf("cost on the booking page %q", got)
		}
		if pd.Find("[data-testid=booking-cancel]").Length() != 1 {
			t.Errorf("the owner is not offered to cancel a booking that has not started")
		}
		home := c.Get("/booking")
		bkpWant(t, home, http.StatusOK, "GET /booking")
		if home.Doc(t).Find(`[data-testid=my-bookings] [data-testid=booking-row][data-id="`+strconv.FormatInt(b.ID, 10)+`"]`).Length() != 1 {
			t.Errorf("the booking is not under my bookings")
		}

		// A booking longer than what the estimate has left is flagged.
		v = w.window(w.taskID, 4, start.Add(4*time.Hour), start.Add(30*time.Hour))
		r = c.PostForm("/booking/preview", v, true)
		bkpWant(t, r, http.StatusOK, "POST /booking/preview over the estimate")
		if r.Doc(t).Find("[data-testid=preview-over-estimate]").Length() != 1 {
			t.Errorf("104 card-hours against 94 left is not flagged")
		}
	})
}

// TestBookingFormRejectsBadInput: every bad input comes back on the form
// with 422 and its message next to the field, and nothing is written.
func TestBookingFormRejectsBadInput(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := bkpSetupOn(t, dialect)
		c := w.e.LoggedIn(store.RoleMember)
		now := time.Now().Truncate(time.Minute)
		later := now.Add(2 * time.Hour)
		cases := []struct {
			name  string
			edit  func(v url.Values)
			field string
			msg   string
		}{
			{"end before start", func(v url.Values) { v.Set("end", w.local(later.Add(-time.Hour))) }, "end", bkpZH("booking.end_before_start")},
			{"window in the past", func(v url.Values) {
				v.Set("start", w.local(now.Add(-3*time.Hour)))
				v.Set("end", w.local(now.Add(-time.Hour)))
			}, "start", bkpZH("booking.start_past")},
			{"past the horizon", func(v url.Values) { v.Set("end", w.local(now.Add(100*24*time.Hour))) }, "end", bkpZH("booking.past_horizon")},
			{"zero count", func(v url.Values) { v.Set("count", "0") }, "count", bkpZH("booking.count_range", 64)},
			{"negative count", func(v url.Values) { v.Set("count", "-2") }, "count", bkpZH("booking.count_range", 64)},
			{"count not a number", func(v url.Values) { v.Set("count", "two") }, "count", bkpZH("field.integer")},
			{"unknown task", func(v url.Values) { v.Set("task_id", "999999") }, "task_id", bkpZH("task.not_found")},
			{"unknown card type", func(v url.Values) { v.Set("card_type", "999999") }, "card_type", bkpZH("cardtype.not_found")},
			{"another team's task", func(v url.Values) { v.Set("task_id", strconv.FormatInt(w.otherTaskID, 10)) }, "task_id", bkpZH("booking.not_your_team")},
			{"malformed start", func(v url.Values) { v.Set("start", "tomorrow 9am") }, "start", bkpZH("bkform.time_invalid")},
			{"malformed end", func(v url.Values) { v.Set("end", "2026-13-45T25:61") }, "end", bkpZH("bkform.time_invalid")},
			{"book now for no time", func(v url.Values) {
				v.Set("mode", "now")
				v.Set("duration_hours", "0")
			}, "duration_hours", bkpZH("booking.end_before_start")},
		}
		before := w.e.AuditTotal()
		for _, tc := range cases {
			for _, path := range []string{"/booking/preview", "/booking"} {
				v := w.window(w.taskID, 2, later, later.Add(2*time.Hour))
				tc.edit(v)
				r := c.PostForm(path, v, true)
				if r.StatusCode != http.StatusUnprocessableEntity {
					t.Errorf("%s, POST %s: status %d, want 422", tc.name, path, r.StatusCode)
					continue
				}
				doc := r.Doc(t)
				if got := bkpText(doc, "[data-testid=error-"+tc.field+"]"); got != tc.msg {
					t.Errorf("%s, POST %s: message at %s %q, want %q", tc.name, path, tc.field, got, tc.msg)
				}
				if doc.Find("[data-testid=booking-form]").Length() != 1 {
					t.Errorf("%s, POST %s: the form is not shown again", tc.name, path)
				}
			}
		}
		if n := len(w.bookings(t)); n != 0 {
			t.Errorf("bad input wrote %d bookings", n)
		}
		if after := w.e.AuditTotal(); after != before {
			t.Errorf("bad input wrote %d audit entries", after-before)
		}
	})
}

// TestBookingWithoutCapacityIsConflict: five cards of a four-card pool is a
// 409 with the store's message of how many are free, shown on the form.
func TestBookingWithoutCapacityIsConflict(t *testing.T) {
	t.Parallel()
	w := bkpSetup(t)
	c := w.e.LoggedIn(store.RoleMember)
	start := time.Now().Add(time.Hour)
	for _, path := range []string{"/booking/preview", "/booking"} {
		r := c.PostForm(path, w.window(w.taskID, 5, start, start.Add(time.Hour)), true)
		bkpWant(t, r, http.StatusConflict, "POST "+path+" for 5 of 4 cards")
		if got := bkpText(r.Doc(t), "[data-testid=form-error]"); got != bkpZH("booking.no_capacity", 5, 4) {
			t.Errorf("POST %s: message %q, want %q", path, got, bkpZH("booking.no_capacity", 5, 4))
		}
	}
	if n := len(w.bookings(t)); n != 0 {
		t.Errorf("a refused booking wrote %d rows", n)
	}
	// With "wait in the queue" it is accepted and waits for capacity.
	v := w.window(w.taskID, 5, start, start.Add(time.Hour))
	v.Set("queue", "on")
	r := c.PostForm("/booking/preview", v, true)
	bkpWant(t, r, http.StatusOK, "preview with queue")
	if got := bkpText(r.Doc(t), "[data-testid=preview-outcome]"); got != bkpZH("bkoutcome.capacity") {
		t.Errorf("outcome %q", got)
	}
}

// TestReleaseShowsReturnedHours: a running booking released early tells
// the card-hours and yuan it gave back, and its page shows them.
func TestReleaseShowsReturnedHours(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		w := bkpSetupOn(t, dialect)
		c := w.e.LoggedIn(store.RoleMember)
		v := url.Values{"task_id": {strconv.FormatInt(w.taskID, 10)}, "card_type": {strconv.FormatInt(w.typeID, 10)},
			"count": {"2"}, "mode": {"now"}, "duration_hours": {"2"}}
		r := c.PostForm("/booking", v, true)
		bkpWant(t, r, http.StatusSeeOther, "book now")
		bs := w.bookings(t)
		if len(bs) != 1 || bs[0].State != store.BookingActive || bs[0].Kind != store.KindOnDemand {
			t.Fatalf("bookings %+v: want one active on-demand booking", bs)
		}
		id := strconv.FormatInt(bs[0].ID, 10)
		page := c.Get("/bookings/" + id)
		if page.Doc(t).Find("[data-testid=booking-release]").Length() != 1 {
			t.Fatalf("no release button on an active booking of mine")
		}

		r = c.PostForm("/bookings/"+id+"/release", nil, true)
		bkpWant(t, r, http.StatusSeeOther, "release")
		b, err := w.e.St.FindBookingByID(context.Background(), bs[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		if b.State != store.BookingReleased || b.EndedAt == nil {
			t.Fatalf("after release: state %s, ended %v", b.State, b.EndedAt)
		}
		returned := schedule.CardSeconds(2, *b.EndedAt, b.EndAt)
		hours := strconv.FormatFloat(schedule.CardHours(returned), 'f', 1, 64)
		if hours != "4.0" {
			t.Errorf("returned %s card-hours, want about 4.0", hours)
		}
		page = c.Get("/bookings/" + id)
		bkpWant(t, page, http.StatusOK, "booking page after release")
		doc := page.Doc(t)
		if got := bkpText(doc, "[data-testid=flash]"); !strings.Contains(got, "#"+id) || !strings.Contains(got, hours+" 卡时") || !strings.Contains(got, "¥") {
			t.Errorf("flash %q does not report %s card-hours and their yuan returned", got, hours)
		}
		if got := bkpText(doc, "[data-testid=booking-returned]"); !strings.HasPrefix(got, hours+" ") || !strings.Contains(got, "¥") {
			t.Errorf("returned on the page %q, want %s card-hours and yuan", got, hours)
		}
		if got, _ := doc.Find("[data-testid=booking-detail] [data-testid=booking-state]").Attr("data-state"); got != store.BookingReleased {
			t.Errorf("state %q, want released", got)
		}
		if doc.Find("[data-testid=booking-release]").Length() != 0 {
			t.Errorf("a released booking still offers release")
		}

		// A second release is refused on the page with the store's reason.
		r = c.PostForm("/bookings/"+id+"/release", nil, true)
		bkpWant(t, r, http.StatusConflict, "second release")
		if got := bkpText(r.Doc(t), "[data-testid=list-error]"); got != bkpZH("booking.not_releasable", store.BookingReleased) {
			t.Errorf("second release message %q", got)
		}
	})
}

// TestViewerCannotBook: a viewer reads the booking pages but gets 403 on
// POST /booking, and nothing is written; others see no action buttons.
func TestViewerCannotBook(t *testing.T) {
	t.Parallel()
	w := bkpSetup(t)
	c := w.e.LoggedIn(store.RoleViewer)
	home := c.Get("/booking")
	bkpWant(t, home, http.StatusOK, "viewer GET /booking")
	hd := home.Doc(t)
	if hd.Find("[data-testid=booking-new]").Length() != 0 || hd.Find("[data-testid=booking-readonly]").Length() != 1 {
		t.Errorf("a viewer is offered to book")
	}
	start := time.Now().Add(time.Hour)
	r := c.PostForm("/booking", w.window(w.taskID, 1, start, start.Add(time.Hour)), true)
	bkpWant(t, r, http.StatusForbidden, "viewer POST /booking")
	if n := len(w.bookings(t)); n != 0 {
		t.Errorf("a viewer's POST wrote %d bookings", n)
	}

	// The member books; the viewer may look but is offered no action.
	m := w.e.LoggedIn(store.RoleMember)
	bkpWant(t, m.PostForm("/booking", w.window(w.taskID, 1, start, start.Add(time.Hour)), true), http.StatusSeeOther, "member books")
	id := strconv.FormatInt(w.bookings(t)[0].ID, 10)
	page := c.Get("/bookings/" + id)
	bkpWant(t, page, http.StatusOK, "viewer GET booking page")
	if page.Doc(t).Find("[data-testid=booking-actions]").Length() != 0 {
		t.Errorf("a viewer is offered actions on someone's booking")
	}
	bkpWant(t, c.PostForm("/bookings/"+id+"/cancel", nil, true), http.StatusForbidden, "viewer cancels")
}

// TestNotificationsShowAndMarkRead: a preempted owner sees why on the
// booking page, gets the translated notification on /booking, and can mark
// it read.
func TestNotificationsShowAndMarkRead(t *testing.T) {
	t.Parallel()
	w := bkpSetup(t)
	ctx := store.WithActor(context.Background(), store.Actor{UserID: w.e.Users[store.RoleAdmin].ID, Username: "admin"})
	backfill, err := w.e.St.CreateTask(ctx, store.TaskInput{TeamID: w.teamID, Name: "学习率扫描", Priority: schedule.Backfill,
		EstimateCardHours: 50, DataReadiness: schedule.DataReady, VRAMGiB: 20, Precision: "bf16"})
	if err != nil {
		t.Fatal(err)
	}
	core, err := w.e.St.CreateTask(ctx, store.TaskInput{TeamID: w.teamID, Name: "核心预训练", Priority: schedule.Core,
		EstimateCardHours: 500, DataReadiness: schedule.DataReady, VRAMGiB: 300, Precision: "bf16"})
	if err != nil {
		t.Fatal(err)
	}
	m := w.e.LoggedIn(store.RoleMember)
	start := time.Now().Add(time.Hour).Truncate(time.Minute)
	bkpWant(t, m.PostForm("/booking", w.window(backfill.ID, 2, start, start.Add(2*time.Hour)), true), http.StatusSeeOther, "backfill books")
	victim := w.bookings(t)[0]
	mg := w.e.LoggedIn(store.RoleManager)
	bkpWant(t, mg.PostForm("/booking", w.window(core.ID, 4, start, start.Add(2*time.Hour)), true), http.StatusSeeOther, "core books")

	home := m.Get("/booking")
	bkpWant(t, home, http.StatusOK, "GET /booking")
	note := bkpText(home.Doc(t), "[data-testid=notification]")
	if !strings.Contains(note, bkpZH("notify.preempted", victim.ID, "核心预训练")) {
		t.Errorf("notification %q, want the preemption in Chinese", note)
	}
	page := m.Get("/bookings/" + strconv.FormatInt(victim.ID, 10))
	if page.Doc(t).Find("[data-testid=booking-preempted-note]").Length() != 1 {
		t.Errorf("the preempted owner is not told why")
	}
	// The link names the preempting booking, from the note's argument.
	var coreID int64
	for _, b := range w.bookings(t) {
		if b.TaskID == core.ID {
			coreID = b.ID
		}
	}
	if href, _ := page.Doc(t).Find("[data-testid=booking-preempted-note] a").Attr("href"); coreID == 0 || href != "/bookings/"+strconv.FormatInt(coreID, 10) {
		t.Errorf("the preemption links %q, want the core booking #%d", href, coreID)
	}
	bkpWant(t, m.PostForm("/notifications/read", nil, true), http.StatusSeeOther, "mark read")
	if m.Get("/booking").Doc(t).Find("[data-testid=notification]").Length() != 0 {
		t.Errorf("notifications still shown after marking them read")
	}
}

// TestApproveExtendCancelFromTheBookingPage: in a team that requires
// approval a member's booking waits, a manager approves it from its page;
// the owner extends it (a malformed time comes back inline) and cancels it.
func TestApproveExtendCancelFromTheBookingPage(t *testing.T) {
	t.Parallel()
	w := bkpSetup(t)
	ctx := store.WithActor(context.Background(), store.Actor{UserID: w.e.Users[store.RoleAdmin].ID, Username: "admin"})
	if _, err := w.e.St.UpdateTeam(ctx, w.teamID, store.TeamInput{Name: "llm", RequiresApproval: true}); err != nil {
		t.Fatal(err)
	}
	m := w.e.LoggedIn(store.RoleMember)
	start := time.Now().Add(3 * time.Hour).Truncate(time.Minute)
	bkpWant(t, m.PostForm("/booking", w.window(w.taskID, 2, start, start.Add(2*time.Hour)), true), http.StatusSeeOther, "member books")
	b := w.bookings(t)[0]
	if b.State != store.BookingPending || b.WaitReason != store.WaitApproval {
		t.Fatalf("booking %s/%s, want pending for approval", b.State, b.WaitReason)
	}
	id := strconv.FormatInt(b.ID, 10)
	page := m.Get("/bookings/" + id).Doc(t)
	if got := bkpText(page, "[data-testid=booking-detail] [data-testid=booking-wait]"); got != bkpZH("bkwait.approval") {
		t.Errorf("wait reason %q", got)
	}
	if page.Find("[data-testid=booking-approve]").Length() != 0 {
		t.Errorf("the member is offered to approve")
	}

	mg := w.e.LoggedIn(store.RoleManager)
	if mg.Get("/bookings/"+id).Doc(t).Find("[data-testid=booking-approve]").Length() != 1 {
		t.Fatalf("the team manager is not offered to approve")
	}
	bkpWant(t, mg.PostForm("/bookings/"+id+"/approve", nil, true), http.StatusSeeOther, "approve")
	if got, _ := w.e.St.FindBookingByID(context.Background(), b.ID); got.State != store.BookingConfirmed || len(got.Cards) != 2 {
		t.Fatalf("after approval: %s with %d cards", got.State, len(got.Cards))
	}

	r := m.PostForm("/bookings/"+id+"/extend", url.Values{"end": {"next week"}}, true)
	bkpWant(t, r, http.StatusUnprocessableEntity, "extend with a malformed time")
	if got := bkpText(r.Doc(t), "[data-testid=error-end]"); got != bkpZH("bkform.time_invalid") {
		t.Errorf("extend message %q", got)
	}
	r = m.PostForm("/bookings/"+id+"/extend", url.Values{"end": {w.local(start.Add(time.Hour))}}, true)
	bkpWant(t, r, http.StatusUnprocessableEntity, "extend to an earlier end")
	if got := bkpText(r.Doc(t), "[data-testid=error-end]"); got != bkpZH("booking.extend_not_later") {
		t.Errorf("extend message %q", got)
	}
	newEnd := start.Add(4 * time.Hour)
	bkpWant(t, m.PostForm("/bookings/"+id+"/extend", url.Values{"end": {w.local(newEnd)}}, true), http.StatusSeeOther, "extend")
	if got, _ := w.e.St.FindBookingByID(context.Background(), b.ID); !got.EndAt.Equal(newEnd) {
		t.Errorf("end after extending %v, want %v", got.EndAt, newEnd)
	}
	bkpWant(t, m.PostForm("/bookings/"+id+"/cancel", nil, true), http.StatusSeeOther, "cancel")
	if got, _ := w.e.St.FindBookingByID(context.Background(), b.ID); got.State != store.BookingCancelled {
		t.Errorf("state after cancelling %s", got.State)
	}
	r = m.PostForm("/bookings/"+id+"/cancel", nil, true)
	bkpWant(t, r, http.StatusConflict, "cancel twice")
	if got := bkpText(r.Doc(t), "[data-testid=list-error]"); got != bkpZH("booking.not_cancellable", store.BookingCancelled) {
		t.Errorf("second cancel message %q", got)
	}
}

// TestEveryBookingNoteReadsInBothLanguages: each note the store writes has
// its messages, which take the arguments the store gives.
func TestEveryBookingNoteReadsInBothLanguages(t *testing.T) {
	t.Parallel()
	args := map[string][]any{store.NotePreemptedBy: {int64(12)}, store.NoteNoShow: {30}}
	for _, k := range store.NoteKeys() {
		if !web.HasKey(k) {
			t.Errorf("note %q has no messages", k)
			continue
		}
		for _, lang := range []string{web.LangZH, web.LangEN} {
			if msg := web.T(lang, k, args[k]...); strings.Contains(msg, "%!") || strings.Contains(msg, "note.") {
				t.Errorf("note %q in %s: %q", k, lang, msg)
			}
		}
	}
}

// TestEveryAdminAlertReadsInBothLanguages: each notice of an admin alert
// has its messages, which take the arguments the store gives (see
// store.NotifyAlertFault and the others) and show them.
func TestEveryAdminAlertReadsInBothLanguages(t *testing.T) {
	t.Parallel()
	card := []any{"gpu-bj-01", 3}
	args := map[string][]any{
		store.NotifyAlertFault:     card,
		store.NotifyAlertUnbooked:  card,
		store.NotifyAlertSpoof:     card,
		store.NotifyAlertForeign:   append(slices.Clone(card), int64(12)),
		store.NotifyAlertSpoofHost: {"gpu-bj-01", "agent-7"},
	}
	for _, k := range store.AdminAlertKeys() {
		if !web.HasKey(k) {
			t.Errorf("admin alert %q has no messages", k)
			continue
		}
		if _, ok := args[k]; !ok {
			t.Errorf("admin alert %q: the test does not know its arguments", k)
			continue
		}
		for _, lang := range []string{web.LangZH, web.LangEN} {
			msg := web.T(lang, k, args[k]...)
			if strings.Contains(msg, "%!") || strings.Contains(msg, "notify.") {
				t.Errorf("admin alert %q in %s: %q", k, lang, msg)
			}
			for _, a := range args[k] {
				if !strings.Contains(msg, fmt.Sprint(a)) {
					t.Errorf("admin alert %q in %s does not show %v: %q", k, lang, a, msg)
				}
			}
		}
	}
}

// TestNoShowNoteInTheReadersLanguage: a booking ended as a no-show says
// why on its page, in Chinese, with the grace in minutes.
func TestNoShowNoteInTheReadersLanguage(t *testing.T) {
	t.Parallel()
	w := bkpSetup(t)
	c := w.e.LoggedIn(store.RoleMember)
	v := url.Values{"task_id": {strconv.FormatInt(w.taskID, 10)}, "card_type": {strconv.FormatInt(w.typeID, 10)},
		"count": {"1"}, "mode": {"now"}, "duration_hours": {"2"}}
	bkpWant(t, c.PostForm("/booking", v, true), http.StatusSeeOther, "book now")
	b := w.bookings(t)[0]
	// The state as the ticker leaves it (store/booking_no_show_test.go drives it).
	if _, err := w.e.St.DB().Exec("UPDATE bookings SET state = ?, state_note = ?, state_note_args = ? WHERE id = ?",
		store.BookingNoShow, store.NoteNoShow, "[30]", b.ID); err != nil {
		t.Fatal(err)
	}
	page := c.Get("/bookings/" + strconv.FormatInt(b.ID, 10))
	bkpWant(t, page, http.StatusOK, "GET the booking")
	if got, want := bkpText(page.Doc(t), "[data-testid=booking-note]"), bkpZH(store.NoteNoShow, 30); got != want {
		t.Errorf("note %q, want %q", got, want)
	}
}
