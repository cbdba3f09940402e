package planning_test

// Tests of the planning pages: quotas with their renewal reminders,
// booking templates, the availability calendar and the iCalendar feeds.
// Data is made through the store as admin; pages are driven through the
// forms a browser posts and read through their data-testid attributes.

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/web"
)

// plnWorld is a small fleet: one card type with four cards, a second type
// with none, a team with a core task (the test manager manages it, the test
// member and viewer belong to it) and a team with only a normal task.
type plnWorld struct {
	ctx          context.Context // acts as admin
	h800, a800   *store.CardType
	core, plain  *store.Team
	coreTask     *store.Task
	plainTask    *store.Task
	coreQuota    *store.Quota
	plainQuota   *store.Quota
	quotaExpires time.Time
}

func plnSetup(t *testing.T, e *env) *plnWorld {
	t.Helper()
	w := &plnWorld{ctx: store.WithActor(context.Background(), store.Actor{UserID: e.Users[store.RoleAdmin].ID, Username: "admin"})}
	must := func(err error, what string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	var err error
	w.h800, err = e.St.CreateCardType(w.ctx, store.CardTypeInput{Name: "NVIDIA H800 80GB", VRAMGiB: 80, TFLOPSBF16: 989, PriceFen: 2200})
	must(err, "CreateCardType H800")
	w.a800, err = e.St.CreateCardType(w.ctx, store.CardTypeInput{Name: "NVIDIA A800 80GB", VRAMGiB: 80, TFLOPSBF16: 312, PriceFen: 1200})
	must(err, "CreateCardType A800")
	host, err := e.St.CreateHost(w.ctx, store.HostInput{Name: "gpu-bj-01", Zone: "华北2-可用区A"})
	must(err, "CreateHost")
	for i := 0; i < 4; i++ {
		_, err := e.St.CreateCard(w.ctx, store.CardInput{UUID: fmt.Sprintf("GPU-pln-%04d-aaaa-bbbb", i), GPUIndex: i, HostID: host.ID, CardTypeID: w.h800.ID})
		must(err, "CreateCard")
	}
	w.core, err = e.St.CreateTeam(w.ctx, store.TeamInput{Name: "大模型组"})
	must(err, "CreateTeam core")
	w.plain, err = e.St.CreateTeam(w.ctx, store.TeamInput{Name: "视觉组"})
	must(err, "CreateTeam plain")
	for role, teamRole := range map[string]string{store.RoleManager: store.TeamRoleManager, store.RoleMember: store.TeamRoleMember, store.RoleViewer: store.TeamRoleViewer} {
		_, err := e.St.SetMembership(w.ctx, w.core.ID, e.Users[role].ID, teamRole)
		must(err, "SetMembership "+role)
	}
	w.coreTask, err = e.St.CreateTask(w.ctx, store.TaskInput{TeamID: w.core.ID, Name: "预训练-7B", Priority: "core", EstimateCardHours: 400,
		DataReadiness: "ready", VRAMGiB: 60, Precision: "bf16", CardTypeIDs: []int64{w.h800.ID}})
	must(err, "CreateTask core")
	w.plainTask, err = e.St.CreateTask(w.ctx, store.TaskInput{TeamID: w.plain.ID, Name: "检测微调", Priority: "normal", EstimateCardHours: 40,
		DataReadiness: "ready"})
	must(err, "CreateTask plain")
	// Both quotas expire in ten days: inside the core team's 15-day lead,
	// outside the other team's 7 days.
	now := e.St.Now()
	w.quotaExpires = now.Add(10 * 24 * time.Hour).Truncate(time.Minute)
	w.coreQuota, err = e.St.CreateQuota(w.ctx, store.QuotaInput{TeamID: w.core.ID, CardTypeID: w.h800.ID, CardHours: 500, MaxCards: 4,
		ValidFrom: now.Add(-20 * 24 * time.Hour), ExpiresAt: w.quotaExpires})
	must(err, "CreateQuota core")
	w.plainQuota, err = e.St.CreateQuota(w.ctx, store.QuotaInput{TeamID: w.plain.ID, CardTypeID: w.h800.ID, CardHours: 50,
		ValidFrom: now.Add(-20 * 24 * time.Hour), ExpiresAt: w.quotaExpires})
	must(err, "CreateQuota plain")
	return w
}

// plnLocal formats t as a datetime-local value in the portal's zone.
func (e *env) plnLocal(t time.Time) string { return t.In(e.Cfg.TZ).Format("2006-01-02T15:04") }

// plnTomorrowAt is hour:00 tomorrow in the portal's zone.
func (e *env) plnTomorrowAt(hour int) time.Time {
	n := e.St.Now().In(e.Cfg.TZ)
	return time.Date(n.Year(), n.Month(), n.Day()+1, hour, 0, 0, 0, e.Cfg.TZ)
}

func plnStatus(t *testing.T, r servertest.Response, want int, what string) {
	t.Helper()
	if r.StatusCode != want {
		t.Fatalf("%s: status %d, want %d\n%.2000s", what, r.StatusCode, want, r)
	}
}

func (e *env) plnQuotaCount(t *testing.T) int {
	t.Helper()
	qs, err := e.St.FindQuotas(context.Background(), store.QuotaFilter{})
	if err != nil {
		t.Fatalf("FindQuotas: %v", err)
	}
	return len(qs)
}

func TestQuotaFormManagerGrantsAndSeesIt(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	w := plnSetup(t, e)
	c := e.LoggedIn(store.RoleManager)

	page := c.Get("/quotas")
	plnStatus(t, page, http.StatusOK, "GET /quotas as manager")
	doc := page.Doc(t)
	var teams []string
	doc.Find(`[data-testid=quota-form] select[name=team] option`).Each(func(_ int, s *goquery.Selection) {
		if v, _ := s.Attr("value"); v != "" {
			teams = append(teams, s.Text())
		}
	})
	if len(teams) != 1 || teams[0] != w.core.Name {
		t.Errorf("team choices %q, want only the managed team %q", teams, w.core.Name)
	}

	from := e.St.Now().Add(time.Hour)
	res := c.PostForm("/quotas/new", url.Values{
		"team": {strconv.FormatInt(w.core.ID, 10)}, "card_type": {strconv.FormatInt(w.a800.ID, 10)},
		"card_hours": {"120"}, "max_cards": {"2"}, "valid_from": {e.plnLocal(from)}, "expires_at": {e.plnLocal(from.Add(30 * 24 * time.Hour))},
		"note": {"Q3 预训练"},
	}, true)
	plnStatus(t, res, http.StatusSeeOther, "POST /quotas/new")
	if loc := res.Header.Get("Location"); loc != "/quotas" {
		t.Errorf("redirect to %q, want /quotas", loc)
	}
	list := c.Get("/quotas")
	doc = list.Doc(t)
	if flash := doc.Find(`[data-testid=flash]`).Text(); !strings.Contains(flash, w.a800.Name) {
		t.Errorf("flash %q does not name the quota", flash)
	}
	qs, err := e.St.FindQuotas(context.Background(), store.QuotaFilter{TeamIDs: []int64{w.core.ID}, CardTypeID: w.a800.ID})
	if err != nil || len(qs) != 1 {
		t.Fatalf("stored quotas: %v, %v; want one", qs, err)
	}
	q := qs[0]
	if q.GrantedHours != 120 || q.MaxCards != 2 || !q.ValidFrom.Equal(from.Truncate(time.Minute)) {
		t.Errorf("stored quota %+v: want 120 card-hours, 2 cards, valid from %v", q.Quota, from.Truncate(time.Minute))
	}
	row := doc.Find(fmt.Sprintf(`[data-testid=quota-row][data-id="%d"]`, q.ID))
	if row.Length() != 1 {
		t.Fatalf("the new quota is not listed:\n%s", list)
	}
	if got := row.Find(`[data-testid=quota-granted]`).Text(); got != "120" {
		t.Errorf("granted %q, want 120", got)
	}
	if row.Find(`[data-testid=quota-edit]`).Length() != 1 {
		t.Error("the manager has no edit link on their team's quota")
	}

	// The edit page adjusts it; team and card type stay.
	edit := c.Get(fmt.Sprintf("/quotas/%d", q.ID))
	plnStatus(t, edit, http.StatusOK, "GET /quotas/:id")
	if v, _ := edit.Doc(t).Find(`[data-testid=quota-form] input[name=card_hours]`).Attr("value"); v != "120" {
		t.Errorf("edit form card_hours %q, want 120", v)
	}
	res = c.PostForm(fmt.Sprintf("/quotas/%d", q.ID), url.Values{"card_hours": {"150"}, "max_cards": {"0"},
		"valid_from": {e.plnLocal(q.ValidFrom)}, "expires_at": {e.plnLocal(q.ExpiresAt)}}, true)
	plnStatus(t, res, http.StatusSeeOther, "POST /quotas/:id")
	got, err := e.St.FindQuotaByID(context.Background(), q.ID)
	if err != nil || got.GrantedHours != 150 || got.MaxCards != 0 {
		t.Errorf("after edit: %+v, %v; want 150 card-hours and no cap", got, err)
	}
}

func TestQuotaFormRefusesMembersAndOtherTeams(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	w := plnSetup(t, e)
	before := e.plnQuotaCount(t)
	from := e.St.Now().Add(time.Hour)
	form := url.Values{"team": {strconv.FormatInt(w.plain.ID, 10)}, "card_type": {strconv.FormatInt(w.a800.ID, 10)},
		"card_hours": {"10"}, "valid_from": {e.plnLocal(from)}, "expires_at": {e.plnLocal(from.Add(24 * time.Hour))}}

	// A member sees the quotas read-only and is refused at the route.
	m := e.LoggedIn(store.RoleMember)
	page := m.Get("/quotas")
	plnStatus(t, page, http.StatusOK, "GET /quotas as member")
	doc := page.Doc(t)
	if doc.Find(`[data-testid=quota-form]`).Length() != 0 || doc.Find(`[data-testid=quota-edit]`).Length() != 0 {
		t.Error("a member is offered the quota form or an edit link")
	}
	if n := doc.Find(`[data-testid=quota-row]`).Length(); n != 1 {
		t.Errorf("member sees %d quotas, want 1 (their team's only)", n)
	}
	plnStatus(t, m.Get("/quotas/new"), http.StatusForbidden, "GET /quotas/new as member")
	plnStatus(t, m.PostForm("/quotas/new", form, true), http.StatusForbidden, "POST /quotas/new as member")

	// A manager of another team is refused by the store, with its message.
	mg := e.LoggedIn(store.RoleManager)
	res := mg.PostForm("/quotas/new", form, true)
	plnStatus(t, res, http.StatusForbidden, "POST /quotas/new for a team the manager does not manage")
	want := web.T(web.LangZH, "quota.not_your_team")
	if msg := res.Doc(t).Find(`[data-testid=form-error]`).Text(); msg != want {
		t.Errorf("form error %q, want %q", msg, want)
	}
	// Nor may they open another team's quota.
	plnStatus(t, mg.Get(fmt.Sprintf("/quotas/%d", w.plainQuota.ID)), http.StatusNotFound, "GET another team's quota")
	if after := e.plnQuotaCount(t); after != before {
		t.Errorf("quotas %d → %d: a refused form wrote", before, after)
	}
}

func TestQuotaFormBadInputIsShownInline(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	w := plnSetup(t, e)
	c := e.LoggedIn(store.RoleManager)
	before := e.plnQuotaCount(t)
	from := e.St.Now().Add(time.Hour)
	base := func() url.Values {
		return url.Values{"team": {strconv.FormatInt(w.core.ID, 10)}, "card_type": {strconv.FormatInt(w.a800.ID, 10)},
			"card_hours": {"10"}, "max_cards": {"1"}, "valid_from": {e.plnLocal(from)}, "expires_at": {e.plnLocal(from.Add(24 * time.Hour))}}
	}
	for _, tc := range []struct {
		name   string
		change func(url.Values)
		status int
		field  string
		key    string
		args   []any // the limit the message states
	}{
		{"hours not a number", func(v url.Values) { v.Set("card_hours", "很多") }, http.StatusUnprocessableEntity, "card_hours", "field.number", nil},
		{"hours zero", func(v url.Values) { v.Set("card_hours", "0") }, http.StatusUnprocessableEntity, "card_hours", "quota.hours_range", nil},
		{"note too long", func(v url.Values) { v.Set("note", strings.Repeat("长", 256)) }, http.StatusUnprocessableEntity, "note", "field.too_long", []any{255}},
		{"expiry before start", func(v url.Values) { v.Set("expires_at", e.plnLocal(from.Add(-time.Hour))) }, http.StatusUnprocessableEntity, "expires_at", "quota.expiry_before_start", nil},
		{"time not a time", func(v url.Values) { v.Set("valid_from", "明天") }, http.StatusUnprocessableEntity, "valid_from", "plan.bad_time", nil},
		{"negative cap", func(v url.Values) { v.Set("max_cards", "-1") }, http.StatusUnprocessableEntity, "max_cards", "quota.max_cards_range", nil},
		{"overlaps the team's quota", func(v url.Values) { v.Set("card_type", strconv.FormatInt(w.h800.ID, 10)) }, http.StatusConflict, "valid_from", "quota.overlap", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := base()
			tc.change(v)
			res := c.PostForm("/quotas/new", v, true)
			plnStatus(t, res, tc.status, "POST /quotas/new")
			doc := res.Doc(t)
			if got, want := doc.Find(`[data-testid=error-`+tc.field+`]`).Text(), web.T(web.LangZH, tc.key, tc.args...); got != want {
				t.Errorf("message at %s: %q, want %q", tc.field, got, want)
			}
			if doc.Find(`[data-testid=form-error]`).Length() != 1 {
				t.Error("no headline message above the form")
			}
			// What was typed comes back.
			if got, _ := doc.Find(`[data-testid=quota-form] [name=` + tc.field + `]`).Attr("value"); tc.field != "team" && got != v.Get(tc.field) {
				t.Errorf("field %s came back as %q, want %q", tc.field, got, v.Get(tc.field))
			}
		})
	}
	if after := e.plnQuotaCount(t); after != before {
		t.Errorf("quotas %d → %d: a refused form wrote", before, after)
	}
}

func TestQuotaReminderFollowsTheCoreLead(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	w := plnSetup(t, e)
	c := e.LoggedIn(store.RoleAdmin)
	doc := c.Get("/quotas").Doc(t)
	row := func(id int64) *goquery.Selection {
		return doc.Find(fmt.Sprintf(`[data-testid=quota-row][data-id="%d"]`, id))
	}
	core, plain := row(w.coreQuota.ID), row(w.plainQuota.ID)
	if v, _ := core.Attr("data-remind"); v != "true" || !core.HasClass("pl-due") {
		t.Errorf("quota of the team with a core task, 10 days from expiry: remind=%q class=%q, want highlighted", v, core.AttrOr("class", ""))
	}
	if v, _ := plain.Attr("data-remind"); v != "false" || plain.HasClass("pl-due") {
		t.Errorf("quota of the team without core tasks, 10 days from expiry: remind=%q, want not highlighted", v)
	}
	if got := strings.TrimSpace(core.Find(`[data-testid=quota-days-left]`).Text()); got != "10" {
		t.Errorf("days left %q, want 10", got)
	}
	reminders := doc.Find(`[data-testid=quota-reminder]`)
	if reminders.Length() != 1 || reminders.AttrOr("data-id", "") != strconv.FormatInt(w.coreQuota.ID, 10) {
		t.Fatalf("reminders: %d, want exactly the core team's quota", reminders.Length())
	}
	renew, _ := reminders.Find(`[data-testid=quota-renew]`).Attr("href")
	if renew != fmt.Sprintf("/quotas/new?renew=%d", w.coreQuota.ID) {
		t.Fatalf("renew link %q", renew)
	}

	// The renewal form starts where the old quota ends.
	form := c.Get(renew).Doc(t).Find(`[data-testid=quota-form]`)
	if got := form.Find(`[name=valid_from]`).AttrOr("value", ""); got != e.plnLocal(w.quotaExpires) {
		t.Errorf("renewal starts %q, want the old expiry %q", got, e.plnLocal(w.quotaExpires))
	}
	if got := form.Find(`[name=team] option[selected]`).AttrOr("value", ""); got != strconv.FormatInt(w.core.ID, 10) {
		t.Errorf("renewal team %q, want %d", got, w.core.ID)
	}
	v := url.Values{}
	form.Find(`input, select`).Each(func(_ int, s *goquery.Selection) {
		name := s.AttrOr("name", "")
		if goquery.NodeName(s) == "select" {
			v.Set(name, s.Find(`option[selected]`).AttrOr("value", ""))
		} else if name != "_csrf" {
			v.Set(name, s.AttrOr("value", ""))
		}
	})
	plnStatus(t, c.PostForm("/quotas/new", v, true), http.StatusSeeOther, "POST the renewal")
	// Renewed, the old quota reminds no one any more.
	doc = c.Get("/quotas").Doc(t)
	if n := doc.Find(`[data-testid=quota-reminder]`).Length(); n != 0 {
		t.Errorf("%d reminders after renewal, want 0", n)
	}
	if v, _ := row(w.coreQuota.ID).Attr("data-remind"); v != "false" {
		t.Error("the renewed quota is still highlighted")
	}
}

func TestTemplateFromTaskIsUsedInOneStep(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	w := plnSetup(t, e)
	c := e.LoggedIn(store.RoleMember)

	// "存为模板" on the task opens the form filled from it.
	doc := c.Get(fmt.Sprintf("/templates/new?task=%d", w.coreTask.ID)).Doc(t)
	if got := doc.Find(`[data-testid=template-form] [name=task_id] option[selected]`).AttrOr("value", ""); got != strconv.FormatInt(w.coreTask.ID, 10) {
		t.Errorf("task preselected %q, want %d", got, w.coreTask.ID)
	}
	if got := doc.Find(`[data-testid=template-form] [name=card_type] option[selected]`).AttrOr("value", ""); got != strconv.FormatInt(w.h800.ID, 10) {
		t.Errorf("card type preselected %q, want the task's preferred %d", got, w.h800.ID)
	}
	res := c.PostForm("/templates", url.Values{"task_id": {strconv.FormatInt(w.coreTask.ID, 10)}, "name": {"预训练两卡三小时"},
		"card_type": {strconv.FormatInt(w.h800.ID, 10)}, "count": {"2"}, "duration_hours": {"3"}}, true)
	plnStatus(t, res, http.StatusSeeOther, "POST /templates")
	tpls, err := e.St.FindTemplates(context.Background(), nil)
	if err != nil || len(tpls) != 1 {
		t.Fatalf("templates: %v, %v; want one", tpls, err)
	}
	tpl := tpls[0]
	if res.Header.Get("Location") != fmt.Sprintf("/templates/%d", tpl.ID) {
		t.Errorf("redirect to %q", res.Header.Get("Location"))
	}
	if tpl.Priority != "core" || tpl.CardCount != 2 || tpl.DurationSeconds != 3*3600 || tpl.EstimateCardSeconds != 400*3600 {
		t.Errorf("template %+v: want the core baseline, 2 cards, 3 hours", tpl)
	}
	list := c.Get("/templates").Doc(t)
	if got := list.Find(`[data-testid=template-row] [data-testid=template-shape]`).Text(); got != w.h800.Name+" × 2" {
		t.Errorf("list shape %q", got)
	}

	// A start that cannot be booked is refused before anything is written:
	// no task is left behind without its booking.
	tasksBefore, err := e.St.FindTasks(context.Background(), store.TaskFilter{})
	if err != nil {
		t.Fatal(err)
	}
	res = c.PostForm(fmt.Sprintf("/templates/%d/use", tpl.ID), url.Values{"name": {"预训练-第二轮"},
		"start": {e.plnLocal(e.St.Now().Add(-2 * time.Hour))}}, true)
	plnStatus(t, res, http.StatusUnprocessableEntity, "use with a past start")
	doc = res.Doc(t)
	if got, want := doc.Find(`[data-testid=error-start]`).Text(), web.T(web.LangZH, "booking.start_past"); got != want {
		t.Errorf("start message %q, want %q", got, want)
	}
	if tasksAfter, _ := e.St.FindTasks(context.Background(), store.TaskFilter{}); len(tasksAfter) != len(tasksBefore) {
		t.Errorf("a refused start left %d new tasks", len(tasksAfter)-len(tasksBefore))
	}

	// A good start: a new task and its booking, one step.
	start := e.plnTomorrowAt(10)
	res = c.PostForm(fmt.Sprintf("/templates/%d/use", tpl.ID), url.Values{"name": {"预训练-第三轮"}, "start": {e.plnLocal(start)}}, true)
	plnStatus(t, res, http.StatusSeeOther, "use the template")
	m := regexp.MustCompile(`^/bookings/(\d+)$`).FindStringSubmatch(res.Header.Get("Location"))
	if m == nil {
		t.Fatalf("redirect to %q, want /bookings/:id", res.Header.Get("Location"))
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)
	b, err := e.St.FindBookingByID(context.Background(), id)
	if err != nil {
		t.Fatalf("FindBookingByID: %v", err)
	}
	if b.TaskName != "预训练-第三轮" || b.CardCount != 2 || !b.StartAt.Equal(start) || b.EndAt.Sub(b.StartAt) != 3*time.Hour ||
		b.State != store.BookingConfirmed || len(b.Cards) != 2 {
		t.Errorf("booking %+v: want the new task, 2 cards for 3 hours from %v, confirmed with cards", b, start)
	}
	task, err := e.St.FindTaskByID(context.Background(), b.TaskID)
	if err != nil || task.Priority != "core" || task.TeamID != w.core.ID || task.EstimateCardSeconds != 400*3600 {
		t.Errorf("new task %+v, %v: want the template's baseline in the core team", task, err)
	}
}

func TestAvailabilityShowsFreeCardsOfABookedHour(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	w := plnSetup(t, e)
	start := e.plnTomorrowAt(10)
	if _, err := e.St.CreateBooking(w.ctx, store.BookingRequest{TaskID: w.coreTask.ID, CardTypeID: w.h800.ID, Count: 3,
		Start: start, End: start.Add(2 * time.Hour)}); err != nil {
		t.Fatalf("CreateBooking: %v", err)
	}
	c := e.LoggedIn(store.RoleViewer)
	res := c.Get(fmt.Sprintf("/availability?card_type=%d", w.h800.ID))
	plnStatus(t, res, http.StatusOK, "GET /availability")
	doc := res.Doc(t)
	grids := doc.Find(`[data-testid=avail-grid]`)
	if grids.Length() != 1 || grids.AttrOr("data-card-type", "") != strconv.FormatInt(w.h800.ID, 10) {
		t.Fatalf("grids shown: %d, want only the filtered card type", grids.Length())
	}
	rows := grids.Find(`tbody tr`)
	if rows.Length() != 14 {
		t.Fatalf("%d days, want 14", rows.Length())
	}
	tomorrow := rows.Eq(1)
	cell := func(h int) *goquery.Selection { return tomorrow.Find(`td`).Eq(h) }
	for h, want := range map[int]int{9: 4, 10: 1, 11: 1, 12: 4} {
		got := cell(h)
		if strings.TrimSpace(got.Text()) != strconv.Itoa(want) {
			t.Errorf("tomorrow %02d:00: %q free, want %d", h, got.Text(), want)
		}
		wantTitle := fmt.Sprintf("空闲 %d / 共 4", want)
		if title := got.AttrOr("title", ""); !strings.Contains(title, wantTitle) || !strings.Contains(title, fmt.Sprintf("%02d:00", h)) {
			t.Errorf("tomorrow %02d:00 tooltip %q, want the hour and %q", h, title, wantTitle)
		}
	}
	if !cell(10).HasClass("pl-h1") || !cell(9).HasClass("pl-h5") {
		t.Errorf("shades: booked hour %q, free hour %q; want pl-h1 and pl-h5", cell(10).AttrOr("class", ""), cell(9).AttrOr("class", ""))
	}
	// Unfiltered, both card types show; the one without cards has none free.
	all := c.Get("/availability").Doc(t)
	if n := all.Find(`[data-testid=avail-grid]`).Length(); n != 2 {
		t.Errorf("%d grids unfiltered, want 2", n)
	}
}

func TestCalendarFeedServesBookings(t *testing.T) {
	e := newEnv(t, servertest.Options{})
	w := plnSetup(t, e)
	ctx := store.WithActor(context.Background(), store.Actor{UserID: e.Users[store.RoleMember].ID, Username: e.Users[store.RoleMember].Username})
	// A name with every character TEXT must escape, long enough to fold
	// inside multi-byte characters.
	odd, err := e.St.CreateTask(ctx, store.TaskInput{TeamID: w.core.ID, Name: `评测,基线;回归\对比 ` + strings.Repeat("长任务名", 8), Priority: "normal",
		EstimateCardHours: 10, DataReadiness: "ready"})
	if err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	start := e.plnTomorrowAt(9)
	mine, err := e.St.CreateBooking(ctx, store.BookingRequest{TaskID: odd.ID, CardTypeID: w.h800.ID, Count: 2, Start: start, End: start.Add(90 * time.Minute)})
	if err != nil {
		t.Fatalf("CreateBooking: %v", err)
	}
	theirs, err := e.St.CreateBooking(w.ctx, store.BookingRequest{TaskID: w.coreTask.ID, CardTypeID: w.h800.ID, Count: 1, Start: start, End: start.Add(time.Hour)})
	if err != nil {
		t.Fatalf("CreateBooking (admin): %v", err)
	}

	c := e.LoggedIn(store.RoleMember)
	plnStatus(t, c.Get("/calendar"), http.StatusOK, "GET /calendar")
	issue := func(team int64) string {
		t.Helper()
		res := c.PostForm("/calendar/feeds", url.Values{"team": {strconv.FormatInt(team, 10)}}, true)
		plnStatus(t, res, http.StatusOK, "POST /calendar/feeds")
		u, err := url.Parse(strings.TrimSpace(res.Doc(t).Find(`[data-testid=feed-url]`).Text()))
		if err != nil || !strings.HasPrefix(u.Path, "/ical/chc_") {
			t.Fatalf("feed URL %v (%v)", u, err)
		}
		return u.Path
	}
	feed := issue(0)

	anon := e.Client()
	res := anon.Get(feed)
	plnStatus(t, res, http.StatusOK, "GET the feed without a login")
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/calendar") {
		t.Errorf("Content-Type %q", ct)
	}
	body := res.String()
	if !strings.HasPrefix(body, "BEGIN:VCALENDAR\r\n") || !strings.HasSuffix(body, "END:VCALENDAR\r\n") {
		t.Fatalf("not a calendar:\n%.500s", body)
	}
	if strings.Contains(strings.ReplaceAll(body, "\r\n", ""), "\n") {
		t.Error("a line ends without CR")
	}
	for i, line := range strings.Split(strings.TrimSuffix(body, "\r\n"), "\r\n") {
		if len(line) > 75 {
			t.Errorf("line %d has %d octets, over 75: %q", i+1, len(line), line)
		}
		if !utf8.ValidString(line) {
			t.Errorf("line %d splits a character: %q", i+1, line)
		}
	}
	// Unfold (RFC 5545 3.1) and read the properties.
	lines := strings.Split(strings.ReplaceAll(strings.TrimSuffix(body, "\r\n"), "\r\n ", ""), "\r\n")
	has := func(want string) bool {
		for _, l := range lines {
			if l == want {
				return true
			}
		}
		return false
	}
	for _, want := range []string{
		"VERSION:2.0", "METHOD:PUBLISH", "X-WR-CALNAME:卡时 · 我的预约 · " + e.Users[store.RoleMember].Username,
		fmt.Sprintf("UID:booking-%d@cardhour", mine.Booking.ID),
		"DTSTART:" + start.UTC().Format("20060102T150405Z"),
		"DTEND:" + start.Add(90*time.Minute).UTC().Format("20060102T150405Z"),
		`SUMMARY:评测\,基线\;回归\\对比 ` + strings.Repeat("长任务名", 8) + " · " + w.h800.Name + " ×2",
		"STATUS:CONFIRMED",
	} {
		if !has(want) {
			t.Errorf("feed lacks %q:\n%s", want, strings.Join(lines, "\n"))
		}
	}
	if strings.Count(body, "BEGIN:VEVENT") != 1 || strings.Contains(body, fmt.Sprintf("booking-%d@", theirs.Booking.ID)) {
		t.Error("the personal feed shows another user's booking")
	}
	var desc string
	for _, l := range lines {
		if strings.HasPrefix(l, "DESCRIPTION:") {
			desc = l
		}
	}
	if !strings.Contains(desc, `状态：已确认\n团队：大模型组`) || !strings.Contains(desc, "费用：¥66.00") {
		t.Errorf("description %q: want state, team and cost (2 cards × 1.5 h × ¥22)", desc)
	}

	// The team feed carries every booking of the team.
	teamFeed := anon.Get(issue(w.core.ID)).String()
	for _, id := range []int64{mine.Booking.ID, theirs.Booking.ID} {
		if !strings.Contains(teamFeed, fmt.Sprintf("UID:booking-%d@cardhour", id)) {
			t.Errorf("team feed lacks booking %d", id)
		}
	}

	// A cancelled booking stays, marked cancelled.
	if _, err := e.St.CancelBooking(ctx, mine.Booking.ID); err != nil {
		t.Fatalf("CancelBooking: %v", err)
	}
	if body := anon.Get(feed).String(); !strings.Contains(body, "STATUS:CANCELLED") {
		t.Error("a cancelled booking is not marked CANCELLED")
	}

	// Issuing again replaces the secret; unknown secrets are not found.
	fresh := issue(0)
	plnStatus(t, anon.Get(feed), http.StatusNotFound, "GET the replaced feed")
	plnStatus(t, anon.Get(fresh), http.StatusOK, "GET the new feed")
	plnStatus(t, anon.Get("/ical/chc_not-a-secret"), http.StatusNotFound, "GET an unknown feed")
}

// BenchmarkAvailabilityPage renders /availability for 20 card types × 14
// days with some bookings, through the whole handler stack.
func BenchmarkAvailabilityPage(b *testing.B) {
	e := newEnv(b, servertest.Options{})
	ctx := store.WithActor(context.Background(), store.Actor{UserID: e.Users[store.RoleAdmin].ID, Username: "admin"})
	team, err := e.St.CreateTeam(ctx, store.TeamInput{Name: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	now := e.St.Now()
	for i := 0; i < 20; i++ {
		ct, err := e.St.CreateCardType(ctx, store.CardTypeInput{Name: fmt.Sprintf("Card-%02d", i), VRAMGiB: 80, TFLOPSBF16: 300, PriceFen: 1000})
		if err != nil {
			b.Fatal(err)
		}
		host, err := e.St.CreateHost(ctx, store.HostInput{Name: fmt.Sprintf("bench-%02d", i), Zone: "z"})
		if err != nil {
			b.Fatal(err)
		}
		for j := 0; j < 8; j++ {
			if _, err := e.St.CreateCard(ctx, store.CardInput{UUID: fmt.Sprintf("GPU-bench-%02d-%02d", i, j), GPUIndex: j, HostID: host.ID, CardTypeID: ct.ID}); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := e.St.CreateQuota(ctx, store.QuotaInput{TeamID: team.ID, CardTypeID: ct.ID, CardHours: 1e6, ValidFrom: now.Add(-time.Hour), ExpiresAt: now.Add(20 * 24 * time.Hour)}); err != nil {
			b.Fatal(err)
		}
		task, err := e.St.CreateTask(ctx, store.TaskInput{TeamID: team.ID, Name: fmt.Sprintf("task-%02d", i), Priority: "core", EstimateCardHours: 1000, DataReadiness: "ready"})
		if err != nil {
			b.Fatal(err)
		}
		for k := 0; k < 10; k++ {
			start := now.Add(time.Duration(k*30+i%5) * time.Hour)
			if _, err := e.St.CreateBooking(ctx, store.BookingRequest{TaskID: task.ID, CardTypeID: ct.ID, Count: 1 + k%8, Start: start, End: start.Add(time.Duration(2+k%6) * time.Hour)}); err != nil {
				b.Fatal(err)
			}
		}
	}
	session := e.Session(store.RoleAdmin)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req := httptest.NewRequest(http.MethodGet, "/availability", nil)
		req.AddCookie(&http.Cookie{Name: "cardhour_session", Value: session})
		rec := httptest.NewRecorder()
		e.Srv.Handler().ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d", rec.Code)
		}
	}
}
