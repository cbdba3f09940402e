package booking_test

// Tests of the searchable, filtered and paged lists of bookings and tasks,
// on their pages and in the API.

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"cardhour/schedule"
	"cardhour/server/servertest"
	"cardhour/store"
)

// bkpListWorld adds 25 one-card bookings of the team's task, an hour each
// from tomorrow on, and one of the other team's task.
func bkpListWorld(t *testing.T) (w *bkpWorld, mine []int64, other int64) {
	t.Helper()
	w = bkpSetup(t)
	member := w.e.ActorCtx(w.e.Users[store.RoleMember])
	start := time.Now().Add(24 * time.Hour).Truncate(time.Hour)
	for i := range 25 {
		at := start.Add(time.Duration(i) * time.Hour)
		res, err := w.e.St.CreateBooking(member, store.BookingRequest{TaskID: w.taskID, CardTypeID: w.typeID, Count: 1, Start: at, End: at.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		mine = append(mine, res.Booking.ID)
	}
	res, err := w.e.St.CreateBooking(w.e.AdminCtx(), store.BookingRequest{TaskID: w.otherTaskID, CardTypeID: w.typeID, Count: 1, Start: start, End: start.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return w, mine, res.Booking.ID
}

func bkpRowIDs(doc *goquery.Document, sel string) []int64 {
	var out []int64
	doc.Find(sel + ` [data-testid=booking-row]`).Each(func(_ int, s *goquery.Selection) {
		id, _ := strconv.ParseInt(s.AttrOr("data-id", ""), 10, 64)
		out = append(out, id)
	})
	return out
}

// TestBookingListPagesKeepTheFilters: the booking page's list of the
// team's bookings shows a page at a time with the total, and its next and
// previous links and page sizes keep the search and filters; it never
// shows another team's booking, whatever is searched.
func TestBookingListPagesKeepTheFilters(t *testing.T) {
	t.Parallel()
	w, mine, other := bkpListWorld(t)
	c := w.e.LoggedIn(store.RoleViewer)

	r := c.Get("/booking?limit=20")
	bkpWant(t, r, http.StatusOK, "GET /booking?limit=20")
	doc := r.Doc(t)
	if got := bkpRowIDs(doc, "[data-testid=team-bookings]"); fmt.Sprint(got) != fmt.Sprint(mine[:20]) {
		t.Errorf("first page %v, want the 20 soonest %v", got, mine[:20])
	}
	if got := bkpText(doc, "[data-testid=pager-count]"); got != bkpZH("pager.showing", 1, 20, 25) {
		t.Errorf("pager count %q, want %q", got, bkpZH("pager.showing", 1, 20, 25))
	}
	if doc.Find("[data-testid=pager-prev]").Length() != 0 {
		t.Errorf("the first page links a previous page")
	}
	next, _ := doc.Find("[data-testid=pager-next]").Attr("href")
	if next != "/booking?limit=20&offset=20" {
		t.Errorf("next page link %q", next)
	}
	if v, _ := doc.Find(`[data-testid=booking-filter] input[name=limit]`).Attr("value"); v != "20" {
		t.Errorf("the filter form keeps page size %q, want 20", v)
	}
	r = c.Get(next)
	bkpWant(t, r, http.StatusOK, "GET "+next)
	doc = r.Doc(t)
	if got := bkpRowIDs(doc, "[data-testid=team-bookings]"); fmt.Sprint(got) != fmt.Sprint(mine[20:]) {
		t.Errorf("second page %v, want %v", got, mine[20:])
	}
	if prev, _ := doc.Find("[data-testid=pager-prev]").Attr("href"); prev != "/booking?limit=20" {
		t.Errorf("previous page link %q", prev)
	}
	if doc.Find("[data-testid=pager-next]").Length() != 0 {
		t.Errorf("the last page links a next page")
	}

	// A search and filters: every link of the pager carries them.
	q := url.Values{"q": {"7B"}, "state": {"all"}, "card_type": {strconv.FormatInt(w.typeID, 10)}, "limit": {"20"}}
	r = c.Get("/booking?" + q.Encode())
	bkpWant(t, r, http.StatusOK, "GET /booking filtered")
	doc = r.Doc(t)
	if got := bkpText(doc, "[data-testid=pager-count]"); got != bkpZH("pager.showing", 1, 20, 25) {
		t.Errorf("filtered pager count %q", got)
	}
	// All states read newest first.
	if got := bkpRowIDs(doc, "[data-testid=team-bookings]"); len(got) != 20 || got[0] != mine[24] {
		t.Errorf("all states: first row %v, want the latest %d first", got, mine[24])
	}
	links := []string{doc.Find("[data-testid=pager-next]").AttrOr("href", "")}
	doc.Find("[data-testid=pager-size]").Each(func(_ int, s *goquery.Selection) { links = append(links, s.AttrOr("href", "")) })
	for _, l := range links {
		u, err := url.Parse(l)
		if err != nil || u.Path != "/booking" {
			t.Errorf("pager link %q", l)
			continue
		}
		for _, k := range []string{"q", "state", "card_type"} {
			if u.Query().Get(k) != q.Get(k) {
				t.Errorf("pager link %q loses %s=%s", l, k, q.Get(k))
			}
		}
	}
	if sel := doc.Find(`#filter-state option[selected]`).AttrOr("value", ""); sel != "all" {
		t.Errorf("the state filter shows %q, want all", sel)
	}
	if v := doc.Find(`#filter-q`).AttrOr("value", ""); v != "7B" {
		t.Errorf("the search box shows %q", v)
	}

	// The other team's booking: not listed, not found by its task, team or number.
	for _, search := range []string{"检测", "vision", fmt.Sprintf("#%d", other)} {
		r = c.Get("/booking?state=all&q=" + url.QueryEscape(search))
		bkpWant(t, r, http.StatusOK, "GET /booking?q="+search)
		if ids := bkpRowIDs(r.Doc(t), "[data-testid=team-bookings]"); len(ids) != 0 {
			t.Errorf("the viewer searching %q sees %v of another team", search, ids)
		}
	}
	// By number, by a card's uuid and by its host.
	all := w.bookings(t)
	var uuid string
	for _, b := range all {
		if b.ID == mine[3] {
			uuid = b.Cards[0]
		}
	}
	onCard := 0
	for _, b := range all {
		if b.TeamID == w.teamID && len(b.Cards) > 0 && b.Cards[0] == uuid {
			onCard++
		}
	}
	for search, want := range map[string]int{fmt.Sprintf("#%d", mine[3]): 1, uuid: onCard, "gpu-01": 25} {
		r = c.Get("/booking?limit=100&q=" + url.QueryEscape(search))
		if ids := bkpRowIDs(r.Doc(t), "[data-testid=team-bookings]"); len(ids) != want {
			t.Errorf("search %q: %d rows, want %d", search, len(ids), want)
		}
	}

	// A cancelled one under its state, a day's bookings under its date, and
	// the member's own.
	if _, err := w.e.St.CancelBooking(w.e.ActorCtx(w.e.Users[store.RoleMember]), mine[0]); err != nil {
		t.Fatal(err)
	}
	r = c.Get("/booking?state=cancelled")
	if got := bkpRowIDs(r.Doc(t), "[data-testid=team-bookings]"); fmt.Sprint(got) != fmt.Sprint(mine[:1]) {
		t.Errorf("cancelled: %v, want %v", got, mine[:1])
	}
	live := bkpRowIDs(c.Get("/booking?limit=100").Doc(t), "[data-testid=team-bookings]")
	if len(live) != 24 {
		t.Errorf("live: %d rows, want 24 (one cancelled)", len(live))
	}
	// The day of the last one, in the portal's zone: the live ones that
	// start that day.
	day := all[len(all)-1].StartAt.In(w.e.Cfg.TZ).Format("2006-01-02")
	var ofDay []int64
	for _, b := range all {
		if b.TeamID == w.teamID && b.ID != mine[0] && b.StartAt.In(w.e.Cfg.TZ).Format("2006-01-02") == day {
			ofDay = append(ofDay, b.ID)
		}
	}
	dayRows := bkpRowIDs(c.Get("/booking?limit=100&from="+day+"&to="+day).Doc(t), "[data-testid=team-bookings]")
	if fmt.Sprint(dayRows) != fmt.Sprint(ofDay) {
		t.Errorf("bookings of %s: %v, want %v", day, dayRows, ofDay)
	}
	if n := len(bkpRowIDs(c.Get("/booking?mine=1").Doc(t), "[data-testid=team-bookings]")); n != 0 {
		t.Errorf("the viewer's own: %d rows, want none", n)
	}
	m := w.e.LoggedIn(store.RoleMember)
	if n := len(bkpRowIDs(m.Get("/booking?mine=1&limit=100").Doc(t), "[data-testid=team-bookings]")); n != 24 {
		t.Errorf("the member's own: %d rows, want 24", n)
	}
	// Values that do not parse filter nothing.
	r = c.Get("/booking?limit=abc&offset=-5&state=nonsense&team=x&from=yesterday")
	bkpWant(t, r, http.StatusOK, "GET /booking with nonsense")
	if n := len(bkpRowIDs(r.Doc(t), "[data-testid=team-bookings]")); n != 24 {
		t.Errorf("nonsense filters: %d rows, want the 24 live ones", n)
	}
}

// TestBookingAPIPagesWithTotal: GET /api/v1/bookings takes limit and
// offset and says how many bookings the filters select; q searches.
func TestBookingAPIPagesWithTotal(t *testing.T) {
	t.Parallel()
	w, mine, other := bkpListWorld(t)
	c := w.e.Client()
	type page struct {
		Bookings []servertest.Booking `json:"bookings"`
		Total    int64                `json:"total"`
		Limit    int                  `json:"limit"`
		Offset   int                  `json:"offset"`
	}
	tok := w.e.Users[store.RoleViewer].Token
	p := servertest.Decode[page](t, c.APICall(http.MethodGet, "/api/v1/bookings?limit=10&offset=20", tok, ""), http.StatusOK)
	if p.Total != 25 || p.Limit != 10 || p.Offset != 20 || len(p.Bookings) != 5 || p.Bookings[0].ID != mine[20] {
		t.Errorf("page: total %d limit %d offset %d, %d rows", p.Total, p.Limit, p.Offset, len(p.Bookings))
	}
	p = servertest.Decode[page](t, c.APICall(http.MethodGet, "/api/v1/bookings", tok, ""), http.StatusOK)
	if p.Total != 25 || p.Limit != 500 || p.Offset != 0 || len(p.Bookings) != 25 {
		t.Errorf("default page: total %d limit %d offset %d, %d rows", p.Total, p.Limit, p.Offset, len(p.Bookings))
	}
	p = servertest.Decode[page](t, c.APICall(http.MethodGet, "/api/v1/bookings?q="+url.QueryEscape(fmt.Sprintf("#%d", mine[7])), tok, ""), http.StatusOK)
	if p.Total != 1 || len(p.Bookings) != 1 || p.Bookings[0].ID != mine[7] {
		t.Errorf("search by number: total %d, %d rows", p.Total, len(p.Bookings))
	}
	p = servertest.Decode[page](t, c.APICall(http.MethodGet, "/api/v1/bookings?q=vision", tok, ""), http.StatusOK)
	if p.Total != 0 || len(p.Bookings) != 0 {
		t.Errorf("the viewer finds another team's: total %d, %d rows", p.Total, len(p.Bookings))
	}
	admin := w.e.Users[store.RoleAdmin].Token
	p = servertest.Decode[page](t, c.APICall(http.MethodGet, "/api/v1/bookings?q=vision", admin, ""), http.StatusOK)
	if p.Total != 1 || p.Bookings[0].ID != other {
		t.Errorf("the admin's search: total %d, %d rows", p.Total, len(p.Bookings))
	}
	p = servertest.Decode[page](t, c.APICall(http.MethodGet, "/api/v1/bookings?team=vision&limit=3", tok, ""), http.StatusOK)
	if p.Total != 0 || p.Limit != 3 || p.Bookings == nil {
		t.Errorf("another team asked by name: total %d, limit %d, %d rows", p.Total, p.Limit, len(p.Bookings))
	}
	for _, bad := range []string{"limit=0", "limit=1001", "offset=-1", "offset=x"} {
		e := servertest.MustAPIError(t, c.APICall(http.MethodGet, "/api/v1/bookings?"+bad, tok, ""), http.StatusUnprocessableEntity, "invalid")
		if name, _, _ := strings.Cut(bad, "="); e.Error.Fields[name] == "" {
			t.Errorf("%s: no message on %s: %v", bad, name, e.Error.Fields)
		}
	}
}

// TestTaskListFiltersAndPages: the task list filters by priority,
// readiness and team, searches by name, and pages with the total, on the
// page and in the API; a reader sees only their teams' tasks.
func TestTaskListFiltersAndPages(t *testing.T) {
	t.Parallel()
	w := bkpSetup(t)
	member := w.e.ActorCtx(w.e.Users[store.RoleMember])
	for i := range 24 {
		prio, ready := schedule.Normal, schedule.DataReady
		if i%3 == 0 {
			prio = schedule.Core
		}
		if i%4 == 0 {
			ready = schedule.DataNotReady
		}
		if _, err := w.e.St.CreateTask(member, store.TaskInput{TeamID: w.teamID, Name: fmt.Sprintf("任务 %02d", i), Priority: prio,
			EstimateCardHours: 10, DataReadiness: ready}); err != nil {
			t.Fatal(err)
		}
	}
	c := w.e.LoggedIn(store.RoleViewer)
	rows := func(path string) (ids []string, doc *goquery.Document) {
		t.Helper()
		r := c.Get(path)
		bkpWant(t, r, http.StatusOK, "GET "+path)
		doc = r.Doc(t)
		doc.Find("[data-testid=task-row]").Each(func(_ int, s *goquery.Selection) { ids = append(ids, s.AttrOr("data-id", "")) })
		return ids, doc
	}
	ids, doc := rows("/tasks?limit=20")
	if len(ids) != 20 || bkpText(doc, "[data-testid=pager-count]") != bkpZH("pager.showing", 1, 20, 25) {
		t.Errorf("first page: %d rows, count %q", len(ids), bkpText(doc, "[data-testid=pager-count]"))
	}
	if next := doc.Find("[data-testid=pager-next]").AttrOr("href", ""); next != "/tasks?limit=20&offset=20" {
		t.Errorf("next link %q", next)
	}
	if ids, _ := rows("/tasks?limit=20&offset=20"); len(ids) != 5 {
		t.Errorf("second page: %d rows, want 5", len(ids))
	}
	if ids, _ := rows("/tasks?priority=core"); len(ids) != 8 {
		t.Errorf("core: %d rows, want 8", len(ids))
	}
	ids, doc = rows("/tasks?priority=core&readiness=not_ready&limit=20")
	if len(ids) != 2 { // 0 and 12
		t.Errorf("core and not ready: %d rows, want 2", len(ids))
	}
	for _, s := range []string{"priority", "readiness"} {
		if doc.Find(`#filter-`+s+` option[selected]`).Length() != 1 {
			t.Errorf("the %s filter does not show the choice", s)
		}
	}
	if ids, _ := rows("/tasks?q=" + url.QueryEscape("任务 1")); len(ids) != 10 {
		t.Errorf("search 任务 1: %d rows, want 10", len(ids))
	}
	if ids, _ := rows("/tasks?q=" + url.QueryEscape("检测")); len(ids) != 0 {
		t.Errorf("the viewer finds another team's task: %v", ids)
	}
	if ids, _ := rows("/tasks?team=" + strconv.FormatInt(w.otherTeamID, 10)); len(ids) != 25 {
		t.Errorf("another team asked for: %d rows, want the viewer's own 25 (the filter is ignored)", len(ids))
	}

	type page struct {
		Tasks  []struct{ ID int64 } `json:"tasks"`
		Total  int64                `json:"total"`
		Limit  int                  `json:"limit"`
		Offset int                  `json:"offset"`
	}
	tok := w.e.Users[store.RoleViewer].Token
	p := servertest.Decode[page](t, w.e.Client().APICall(http.MethodGet, "/api/v1/tasks?priority=core&limit=5&offset=5", tok, ""), http.StatusOK)
	if p.Total != 8 || p.Limit != 5 || p.Offset != 5 || len(p.Tasks) != 3 {
		t.Errorf("API page of core tasks: total %d, limit %d, offset %d, %d rows", p.Total, p.Limit, p.Offset, len(p.Tasks))
	}
	p = servertest.Decode[page](t, w.e.Client().APICall(http.MethodGet, "/api/v1/tasks?q="+url.QueryEscape("7B"), tok, ""), http.StatusOK)
	if p.Total != 1 || len(p.Tasks) != 1 || p.Tasks[0].ID != w.taskID {
		t.Errorf("API search: total %d, %d rows", p.Total, len(p.Tasks))
	}
	e := servertest.MustAPIError(t, w.e.Client().APICall(http.MethodGet, "/api/v1/tasks?priority=urgent", tok, ""), http.StatusUnprocessableEntity, "invalid")
	if e.Error.Fields["priority"] == "" {
		t.Errorf("an unknown priority: %v", e.Error.Fields)
	}
}
