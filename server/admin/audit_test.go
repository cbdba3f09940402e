package admin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/PuerkitoBio/goquery"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/web"
)

// auditWorld is a fleet with a booking made and extended by the member (a
// summary with a name, a translated state, a time), an entry written
// before summaries had keys, 25 hosts, and the member's login.
type auditWorld struct {
	f         *servertest.Fleet
	admin     *servertest.Client
	bookingID int64
	newEnd    time.Time
}

func newAuditWorld(t *testing.T) *auditWorld {
	t.Helper()
	f := servertest.NewFleet(t, servertest.Options{}, 4, 1000)
	w := &auditWorld{f: f}
	b := servertest.Decode[struct {
		ID int64 `json:"id"`
	}](t, f.Call(http.MethodPost, "/api/v1/bookings", f.Token(store.RoleMember), f.BookingBody(f.Normal.ID, "H800", 2, 0, 2)), http.StatusCreated)
	w.bookingID = b.ID
	w.newEnd = f.Base.Add(3 * time.Hour)
	servertest.Decode[json.RawMessage](t, f.Call(http.MethodPost, fmt.Sprintf("/api/v1/bookings/%d/extend", b.ID), f.Token(store.RoleMember),
		fmt.Sprintf(`{"end":%q}`, w.newEnd.Format(time.RFC3339))), http.StatusOK)
	// What an older version wrote: English text, no key.
	if _, err := f.E.St.DB().Exec("INSERT INTO audit_log (at, actor_id, actor_name, action, entity, entity_id, summary, remote_ip) VALUES (?, NULL, 'wangfang', 'release', 'booking', 99, 'returned 4.0 card-hours', '')",
		time.Now().UTC().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	ctx := store.WithActor(context.Background(), store.Actor{Username: "admin"})
	for i := 0; i < 25; i++ {
		if _, err := f.E.St.CreateHost(ctx, store.HostInput{Name: fmt.Sprintf("rack-%02d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	f.E.LoggedIn(store.RoleMember)
	w.admin = f.E.LoggedIn(store.RoleAdmin)
	return w
}

func (w *auditWorld) page(t *testing.T, query, lang string) *goquery.Document {
	t.Helper()
	sep := "?"
	if query != "" {
		sep = "&"
	}
	r := w.admin.Get("/admin/audit" + query + sep + "lang=" + lang)
	if r.StatusCode != http.StatusOK {
		t.Fatalf("/admin/audit%s: status %d\n%s", query, r.StatusCode, r)
	}
	return r.Doc(t)
}

func rows(doc *goquery.Document) *goquery.Selection { return doc.Find(`[data-testid=audit-row]`) }

func cell(row *goquery.Selection, id string) string {
	return strings.Join(strings.Fields(row.Find(`[data-testid=`+id+`]`).Text()), " ")
}

func hasLatinWord(s string) bool {
	for _, f := range strings.Fields(s) {
		if strings.IndexFunc(f, unicode.IsLetter) >= 0 && strings.IndexFunc(f, func(r rune) bool { return unicode.Is(unicode.Han, r) }) < 0 &&
			strings.IndexFunc(f, func(r rune) bool { return r > unicode.MaxASCII }) < 0 {
			return true
		}
	}
	return false
}

// TestAuditLogInTheReadersLanguage: actions, record kinds and keyed
// summaries are shown in the reader's language; an entry from before the
// keys is shown as stored.
func TestAuditLogInTheReadersLanguage(t *testing.T) {
	t.Parallel()
	w := newAuditWorld(t)
	id := fmt.Sprint(w.bookingID)
	tz, _ := time.LoadLocation("Asia/Shanghai")
	end := w.newEnd.In(tz).Format("2006-01-02 15:04")
	for _, c := range []struct {
		lang, create, extend, booked, extended, release, object string
	}{
		{web.LangZH, "新建", "延长", "H800 × 2，已确认", "延长到 " + end, "提前释放", "预约 #" + id},
		{web.LangEN, "Create", "Extend", "H800 × 2, Confirmed", "until " + end, "Release early", "Booking #" + id},
	} {
		doc := w.page(t, "?entity=booking", c.lang)
		got := map[string]*goquery.Selection{}
		rows(doc).Each(func(_ int, r *goquery.Selection) { got[r.AttrOr("data-action", "")+" "+cell(r, "audit-entity")] = r })
		create, extend := got["create "+c.object], got["extend "+c.object]
		if create == nil || extend == nil {
			t.Fatalf("%s: no create and extend rows for %s among %v", c.lang, c.object, keys(got))
		}
		if a, s := cell(create, "audit-action"), cell(create, "audit-summary"); a != c.create || s != c.booked {
			t.Errorf("%s: the booking's creation reads %q / %q, want %q / %q", c.lang, a, s, c.create, c.booked)
		}
		if a, s := cell(extend, "audit-action"), cell(extend, "audit-summary"); a != c.extend || s != c.extended {
			t.Errorf("%s: the extension reads %q / %q, want %q / %q", c.lang, a, s, c.extend, c.extended)
		}
		if href := create.Find(`[data-testid=audit-entity] a`).AttrOr("href", ""); href != "/bookings/"+id {
			t.Errorf("%s: the booking links to %q", c.lang, href)
		}
		old := doc.Find(`[data-testid=audit-row][data-action=release]`)
		if a, s := cell(old, "audit-action"), cell(old, "audit-summary"); a != c.release || s != "returned 4.0 card-hours" {
			t.Errorf("%s: the old entry reads %q / %q, want %q and its stored text", c.lang, a, s, c.release)
		}
		if c.lang != web.LangZH {
			continue
		}
		// Nothing a reader of Chinese meets in the log is English, but the
		// stored text of old entries and the records' own names.
		doc.Find(`[data-testid=audit-action], [data-testid=audit-entity], [data-testid=audit-actor]`).Each(func(_ int, s *goquery.Selection) {
			txt := strings.Join(strings.Fields(s.Text()), " ")
			if hasLatinWord(strings.NewReplacer("t-member", "", "t-manager", "", "admin", "", "wangfang", "", "127.0.0.1", "").Replace(txt)) {
				t.Errorf("zh-CN log shows %q", txt)
			}
		})
	}
}

// TestAuditLogFiltersAndPages: by who, what, which record, when; pages of a
// chosen size whose links keep the filters; the sign-ins in a view of their
// own.
func TestAuditLogFiltersAndPages(t *testing.T) {
	t.Parallel()
	w := newAuditWorld(t)
	id := fmt.Sprint(w.bookingID)
	tz, _ := time.LoadLocation("Asia/Shanghai")
	today := time.Now().In(tz).Format(time.DateOnly)
	yesterday := time.Now().In(tz).AddDate(0, 0, -1).Format(time.DateOnly)
	for _, c := range []struct {
		query string
		want  func(*goquery.Selection) bool // every row
		n     int                           // rows; -1: some
	}{
		{"?actor=t-member", func(r *goquery.Selection) bool { return strings.HasPrefix(cell(r, "audit-actor"), "t-member") }, -1},
		{"?action=extend", func(r *goquery.Selection) bool { return r.AttrOr("data-action", "") == "extend" }, 1},
		{"?entity=booking&entity_id=" + id, func(r *goquery.Selection) bool { return r.AttrOr("data-entity", "") == "booking" }, 2},
		{"?from=" + today + "&to=" + today, func(*goquery.Selection) bool { return true }, -1},
		{"?to=" + yesterday, nil, 0},
		// The sign-ins are not among the changes, and only they are in their view.
		{"", func(r *goquery.Selection) bool { return r.AttrOr("data-action", "") != "login" }, -1},
		{"?view=auth", func(r *goquery.Selection) bool { return r.AttrOr("data-action", "") == "login" }, -1},
		{"?view=auth&actor=t-member", func(r *goquery.Selection) bool { return r.AttrOr("data-action", "") == "login" }, 1},
	} {
		doc := w.page(t, c.query, web.LangEN)
		n := rows(doc).Length()
		if (c.n >= 0 && n != c.n) || (c.n < 0 && n == 0) {
			t.Errorf("%s: %d rows, want %d (-1: some)", c.query, n, c.n)
		}
		rows(doc).Each(func(_ int, r *goquery.Selection) {
			if c.want != nil && !c.want(r) {
				t.Errorf("%s: a row that does not belong: %s %s by %s", c.query, r.AttrOr("data-action", ""), cell(r, "audit-entity"), cell(r, "audit-actor"))
			}
		})
	}

	// A date that does not parse is said, and the log listed without it.
	doc := w.page(t, "?from=yesterday", web.LangZH)
	if msg := doc.Find(`[role=alert]`).Text(); !strings.Contains(msg, web.T(web.LangZH, "audit.date_invalid")) || rows(doc).Length() == 0 {
		t.Errorf("a bad date: alert %q, %d rows", msg, rows(doc).Length())
	}

	// 26 hosts (the fleet's and 25 more), 20 a page: the links keep the filter and the size.
	doc = w.page(t, "?entity=host&size=20", web.LangEN)
	if n := rows(doc).Length(); n != 20 {
		t.Errorf("page 1 of the hosts has %d rows, want 20", n)
	}
	if got := doc.Find(`[data-testid=audit-shown]`).Text(); got != web.T(web.LangEN, "audit.shown", 1, 20, 26) {
		t.Errorf("page 1 says %q", got)
	}
	next, _ := doc.Find(`[data-testid=audit-next]`).Attr("href")
	u, err := url.Parse(next)
	if err != nil || u.Query().Get("entity") != "host" || u.Query().Get("size") != "20" || u.Query().Get("page") != "2" {
		t.Fatalf("the next link %q loses the filter", next)
	}
	doc = w.page(t, "?"+u.RawQuery, web.LangEN)
	if n := rows(doc).Length(); n != 6 || doc.Find(`[data-testid=audit-next]`).Length() != 0 {
		t.Errorf("page 2 of the hosts has %d rows (and a next link: %v), want 6 and none", n, doc.Find(`[data-testid=audit-next]`).Length() > 0)
	}
	rows(doc).Each(func(_ int, r *goquery.Selection) {
		if r.AttrOr("data-entity", "") != "host" {
			t.Errorf("page 2 shows a %s", r.AttrOr("data-entity", ""))
		}
	})
	prev, _ := doc.Find(`[data-testid=audit-prev]`).Attr("href")
	if pu, _ := url.Parse(prev); pu == nil || pu.Query().Get("entity") != "host" || pu.Query().Get("size") != "20" {
		t.Errorf("the previous link %q loses the filter", prev)
	}
	// The views' tabs keep who and when.
	doc = w.page(t, "?actor=t-member&from="+today, web.LangEN)
	if auth, _ := doc.Find(`[data-testid=audit-view-auth]`).Attr("href"); !strings.Contains(auth, "actor=t-member") || !strings.Contains(auth, "from="+today) || !strings.Contains(auth, "view=auth") {
		t.Errorf("the sign-ins tab links to %q", auth)
	}
}

// TestAuditAPIFiltersAndLanguage: the API takes the page's filters and says
// a keyed summary in the caller's language.
func TestAuditAPIFiltersAndLanguage(t *testing.T) {
	t.Parallel()
	w := newAuditWorld(t)
	e := w.f.E
	type entry struct {
		Action      string   `json:"action"`
		Actor       string   `json:"actor"`
		Summary     string   `json:"summary"`
		SummaryKey  string   `json:"summary_key"`
		SummaryArgs []string `json:"summary_args"`
	}
	get := func(query, lang string, status int) (out struct {
		Entries []entry `json:"entries"`
		Total   int64   `json:"total"`
	}) {
		t.Helper()
		h := http.Header{"Authorization": {"Bearer " + e.Users[store.RoleAdmin].Token}, "Accept": {"application/json"}}
		if lang != "" {
			h.Set("Accept-Language", lang)
		}
		r := e.Client().Do(http.MethodGet, "/api/v1/audit"+query, nil, h)
		if r.StatusCode != status {
			t.Fatalf("%s: status %d, want %d\n%s", query, r.StatusCode, status, r)
		}
		if status == http.StatusOK {
			if err := json.Unmarshal(r.Body, &out); err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	tz, _ := time.LoadLocation("Asia/Shanghai")
	end := w.newEnd.In(tz).Format("2006-01-02 15:04")
	for lang, want := range map[string]string{"en-US,en;q=0.9": "until " + end, "zh-CN": "延长到 " + end} {
		out := get("?entity=booking&action=extend", lang, http.StatusOK)
		if len(out.Entries) != 1 || out.Entries[0].Summary != want || out.Entries[0].SummaryKey != "audit.sum.extended" ||
			len(out.Entries[0].SummaryArgs) != 1 || out.Entries[0].SummaryArgs[0] != w.newEnd.UTC().Format(time.RFC3339) {
			t.Errorf("Accept-Language %s: %+v, want one entry saying %q", lang, out.Entries, want)
		}
	}
	if out := get("?action=release", "zh-CN", http.StatusOK); len(out.Entries) != 1 || out.Entries[0].Summary != "returned 4.0 card-hours" || out.Entries[0].SummaryKey != "" {
		t.Errorf("an old entry: %+v, want its stored text", out.Entries)
	}
	for query, ok := range map[string]func([]entry) bool{
		"?view=auth": func(es []entry) bool {
			return len(es) >= 2 && !strings.Contains(fmt.Sprint(es), "{create")
		},
		"?view=changes&action=login":                                     func(es []entry) bool { return len(es) == 0 },
		"?view=auth&action=create":                                       func(es []entry) bool { return len(es) == 0 },
		"?actor=t-member&view=changes":                                   func(es []entry) bool { return len(es) == 5 }, // three tasks, the booking, its extension
		"?action=extend,login&actor=t-member":                            func(es []entry) bool { return len(es) == 2 },
		"?to=2020-01-01":                                                 func(es []entry) bool { return len(es) == 0 },
		"?from=" + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339): func(es []entry) bool { return len(es) > 0 },
	} {
		if out := get(query, "", http.StatusOK); !ok(out.Entries) {
			t.Errorf("%s: %d entries: %+v", query, len(out.Entries), out.Entries)
		}
	}
	for _, q := range []string{"?from=yesterday", "?view=everything", "?from=2026-02-01&to=2026-01-01"} {
		get(q, "", http.StatusUnprocessableEntity)
	}
}

func keys(m map[string]*goquery.Selection) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
