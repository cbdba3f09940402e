package server_test

// The page-language test: every HTML page of the route table, for every
// site role, in zh-CN and in en, on the demo fleet with the test users in
// its first team (so pages with ids show that team's own records). A page
// fails on
//
//   - a formatting slip (`%!d(string=…)`, `%!(EXTRA …)`),
//   - a raw message key (`audit.some_key`: text T gave back because the
//     catalogue lacks it, or a key printed instead of translated),
//   - the other language: Chinese on an English page, or on a Chinese page
//     a word of the catalogue's English labels (or a stored English code
//     such as an audit action),
//
// in what a reader sees: text, and the title, aria-label, placeholder, alt
// and confirmation attributes. What the fixtures typed — team, task and
// user names, notes, zones, units — is the users' own and is cut out first;
// so are code (<code>, <pre>) and anything marked lang= in the other
// language (the language switch names the other language in its own words)
// or translate="no".

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"

	"github.com/PuerkitoBio/goquery"

	"cardhour/directory"
	"cardhour/server/route"
	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/web"
)

// pageWorld is the demo fleet seen from its first team.
type pageWorld struct {
	e       *env
	ids     map[string][]string // route pattern → values for its :id (several when states differ)
	file    string              // a task file's path, for the files routes' *
	data    []string            // the fixtures' own words, longest first
	labels  map[string]bool     // lower-cased English words the zh-CN pages must not show
	keyPref map[string]bool     // first segments of catalogue keys
}

// userText lists the columns people type into: their contents are user
// data in either language. Codes (states, roles, kinds) are not listed:
// a page that shows one raw should fail.
var userText = map[string][]string{
	"teams":                   {"name", "description"},
	"users":                   {"username", "display_name", "email", "os_accounts"},
	"api_tokens":              {"name"},
	"card_types":              {"name"},
	"hosts":                   {"name", "zone"},
	"cards":                   {"uuid", "fault_reason"},
	"images":                  {"name", "reference", "cuda_version", "frameworks", "description"},
	"tasks":                   {"name", "notes"},
	"quotas":                  {"note"},
	"booking_templates":       {"name", "notes"},
	"bookings":                {"reject_reason"},
	"ledger_outputs":          {"unit", "note"},
	"task_files":              {"path"},
	"task_file_versions":      {"author_name", "message"},
	"notify_channels":         {"name"},
	"quota_requests":          {"reason", "decision_note"},
	"telemetry_pending_cards": {"uuid", "host_name", "gpu_name"},
	"audit_log":               {"actor_name"},
	"group_mappings":          {"group_name"},
	"external_identities":     {"username", "display_name", "email"},
}

func newPageWorld(t *testing.T) *pageWorld {
	t.Helper()
	e := newEnv(t, servertest.Options{Demo: true})
	ctx := e.AdminCtx()
	db := e.St.DB()
	one := func(q string, args ...any) string {
		t.Helper()
		var id int64
		if err := db.QueryRowContext(context.Background(), q, args...).Scan(&id); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return fmt.Sprint(id)
	}
	team := one("SELECT id FROM teams ORDER BY id LIMIT 1")
	var teamID int64
	fmt.Sscan(team, &teamID)
	for role, teamRole := range map[string]string{store.RoleViewer: store.TeamRoleViewer, store.RoleMember: store.TeamRoleMember, store.RoleManager: store.TeamRoleManager} {
		if _, err := e.St.SetMembership(ctx, teamID, e.Users[role].ID, teamRole); err != nil {
			t.Fatal(err)
		}
	}
	task := one("SELECT id FROM tasks WHERE team_id = ? ORDER BY id LIMIT 1", teamID)
	// A file with a second version, so the diff has something to show.
	w := &pageWorld{e: e, file: "scripts/train.sh"}
	member := e.Users[store.RoleMember].Token
	for i, body := range []string{"#!/bin/sh\ntorchrun train.py --lr 3e-4\n", "#!/bin/sh\ntorchrun train.py --lr 1e-4\n"} {
		r := e.Client().Do(http.MethodPut, "/api/v1/tasks/"+task+"/files/"+w.file, strings.NewReader(body),
			http.Header{"Authorization": {"Bearer " + member}, "Accept": {"application/json"}, "X-Message": {fmt.Sprintf("学习率第%d版", i+1)}})
		if r.StatusCode != http.StatusCreated {
			t.Fatalf("PUT a task file: %d %s", r.StatusCode, r)
		}
	}
	ch, err := e.St.CreateNotifyChannel(ctx, store.NotifyChannelInput{TeamID: &teamID, Kind: "webhook", Name: "组内告警 webhook",
		URL: "https://hooks.example.cn/cardhour", Secret: "whsec-test", Lang: web.LangZH, RatePerMinute: 20, Enabled: true})
	if err != nil {
		t.Fatal(err)
	}
	// The directory page with a rule of each kind, an identity waiting for
	// a link and a sync round.
	for _, in := range []store.GroupMappingCreate{{Provider: directory.LDAP, Group: "cn=算法组,ou=groups,dc=example,dc=cn", TeamID: teamID, TeamRole: store.TeamRoleMember},
		{Group: "platform-admins", PortalRole: store.RoleAdmin}} {
		if _, err := e.St.CreateGroupMapping(ctx, in); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.St.SignInExternal(ctx, directory.Identity{Provider: directory.OIDC, Subject: "https://sso.example.cn 42",
		Username: e.Users[store.RoleMember].Username, DisplayName: "目录成员"}, store.RoleMember); err == nil {
		t.Fatal("a directory sign-in took over a local account")
	}
	if err := e.St.RecordDirectorySync(ctx, store.DirectorySyncResult{Provider: directory.LDAP, Checked: 3, Changed: 1}); err != nil {
		t.Fatal(err)
	}
	live := one("SELECT id FROM bookings WHERE team_id = ? AND state = 'confirmed' ORDER BY start_at LIMIT 1", teamID)
	ended := one("SELECT booking_id FROM ledger_rounds r JOIN bookings b ON b.id = r.booking_id WHERE b.team_id = ? ORDER BY r.booking_id LIMIT 1", teamID)
	preempted := one("SELECT id FROM bookings WHERE team_id = ? AND state = 'preempted' ORDER BY id LIMIT 1", teamID)
	w.ids = map[string][]string{
		"/bookings/:id":       {live, ended, preempted},
		"/bookings/:id/files": {live},
		"/ledger/rounds/:id":  {ended, preempted},
		"/ledger/tasks/:id":   {task},
		"/quotas/:id":         {one("SELECT id FROM quotas WHERE team_id = ? ORDER BY id LIMIT 1", teamID)},
		"/quotas/:id/request": {one("SELECT id FROM quotas WHERE team_id = ? ORDER BY id LIMIT 1", teamID)},
		"/templates/:id":      {one("SELECT id FROM booking_templates WHERE team_id = ? ORDER BY id LIMIT 1", teamID)},
		"/channels/:id":       {fmt.Sprint(ch.ID)},
	}

	seen := map[string]bool{}
	for table, cols := range userText {
		for _, col := range cols {
			rows, err := db.QueryContext(context.Background(), fmt.Sprintf("SELECT DISTINCT %s FROM %s", col, table))
			if err != nil {
				t.Fatalf("read %s.%s: %v", table, col, err)
			}
			for rows.Next() {
				var v *string
				if err := rows.Scan(&v); err != nil {
					t.Fatal(err)
				}
				if v == nil {
					continue
				}
				// Lists (OS accounts, frameworks) show item by item too.
				for _, s := range append([]string{*v}, strings.Split(*v, ",")...) {
					if s = strings.TrimSpace(s); len([]rune(s)) >= 2 {
						seen[s] = true
					}
				}
			}
			rows.Close()
		}
	}
	for s := range seen {
		w.data = append(w.data, s)
	}
	// A longer datum holds a shorter one: cut the longer first.
	sort.Slice(w.data, func(i, j int) bool { return len(w.data[i]) > len(w.data[j]) })

	w.labels, w.keyPref = englishLabels(), map[string]bool{}
	for _, k := range web.Keys() {
		w.keyPref[strings.SplitN(k, ".", 2)[0]] = true
	}
	return w
}

// englishLabels are the words of the catalogue's English side that its
// Chinese side never uses (so GPU, VRAM, UUID, CUDA stay allowed), plus
// the codes the store keeps in English — audit actions and the like.
func englishLabels() map[string]bool {
	inZH := map[string]bool{}
	for _, k := range web.Keys() {
		for _, w := range latinWord.FindAllString(web.T(web.LangZH, k), -1) {
			inZH[strings.ToLower(w)] = true
		}
	}
	out := map[string]bool{}
	for _, k := range web.Keys() {
		for _, w := range latinWord.FindAllString(web.T(web.LangEN, k), -1) {
			if lw := strings.ToLower(w); len(lw) >= 3 && !inZH[lw] {
				out[lw] = true
			}
		}
	}
	for _, w := range []string{"login", "logout", "create", "update", "delete", "release", "cancel", "extend", "approve", "reject",
		"place", "preempt", "transition", "returned", "until", "prefix", "booking", "quota", "task", "template", "user", "team"} {
		out[w] = true
	}
	return out
}

// latinWord is a word of letters only: bf16, H800 and 2.4.1 are no labels.
var latinWord = regexp.MustCompile(`\b[A-Za-z]+(?:['’][a-z]+)?\b`)

// keyLike is text shaped like a message key: area.some_key.
var keyLike = regexp.MustCompile(`\b([a-z][a-z0-9]*(?:_[a-z0-9]+)*)\.([a-z][a-z0-9]*(?:_[a-z0-9]+)*(?:\.[a-z0-9_]+)*)\b`)

// shownAttrs are the attributes a reader meets: tooltips, what a screen
// reader says, hints in empty fields, confirmation dialogs.
var shownAttrs = []string{"title", "aria-label", "placeholder", "alt", "data-confirm"}

// pageText is what a reader of the page sees in lang, one piece per line.
func pageText(doc *goquery.Document, lang string) []string {
	var out []string
	var walk func(s *goquery.Selection, inOther bool)
	walk = func(s *goquery.Selection, inOther bool) {
		s.Contents().Each(func(_ int, c *goquery.Selection) {
			name := goquery.NodeName(c)
			switch name {
			case "#text":
				if t := strings.TrimSpace(c.Text()); t != "" && !inOther {
					out = append(out, t)
				}
				return
			case "#comment", "script", "style", "code", "pre", "svg", "template":
				return
			}
			other := inOther
			if l, ok := c.Attr("lang"); ok {
				other = web.NormalizeLang(l, lang) != lang
			}
			if v, ok := c.Attr("translate"); ok && v == "no" {
				other = true
			}
			if other {
				return
			}
			for _, a := range shownAttrs {
				if v, ok := c.Attr(a); ok && strings.TrimSpace(v) != "" {
					out = append(out, v)
				}
			}
			if name == "input" {
				if typ, _ := c.Attr("type"); typ == "submit" || typ == "button" {
					out = append(out, c.AttrOr("value", ""))
				}
			}
			walk(c, other)
		})
	}
	walk(doc.Selection, false)
	return out
}

// problems lists what is wrong with one page.
func (w *pageWorld) problems(body []byte, lang string) []string {
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(string(body)))
	if err != nil {
		return []string{"not HTML: " + err.Error()}
	}
	if got := doc.Find("html").AttrOr("lang", ""); got != lang {
		return []string{fmt.Sprintf("<html lang=%q>, want %q", got, lang)}
	}
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, line := range pageText(doc, lang) {
		if strings.Contains(line, "%!") {
			add(fmt.Sprintf("formatting slip: %q", line))
		}
		// The fixtures' words are cut first: a task called "a.b" is no key.
		text := line
		for _, d := range w.data {
			text = strings.ReplaceAll(text, d, " ")
		}
		for _, m := range keyLike.FindAllStringSubmatch(text, -1) {
			if w.keyPref[m[1]] {
				add(fmt.Sprintf("raw message key %q in %q", m[0], line))
			}
		}
		switch lang {
		case web.LangEN:
			if strings.IndexFunc(text, func(r rune) bool { return unicode.Is(unicode.Han, r) }) >= 0 {
				add(fmt.Sprintf("Chinese on the English page: %q", line))
			}
		case web.LangZH:
			for _, word := range latinWord.FindAllString(text, -1) {
				if w.labels[strings.ToLower(word)] {
					add(fmt.Sprintf("English %q on the Chinese page: %q", word, line))
					break
				}
			}
		}
	}
	return out
}

// pagePaths fills a GET route's pattern with the first team's records.
func (w *pageWorld) pagePaths(r route.Route) []string {
	p := strings.Replace(r.Path, "*", w.file, 1)
	if !strings.Contains(p, ":") {
		return []string{p}
	}
	ids := w.ids[r.Path]
	if len(ids) == 0 {
		switch {
		case strings.HasPrefix(r.Path, "/admin/"):
			ids = []string{"1"} // the demo fleet has record 1 of each kind
		case strings.HasPrefix(r.Path, "/tasks/:id"):
			ids = w.ids["/ledger/tasks/:id"]
		}
	}
	var out []string
	for _, id := range ids {
		out = append(out, strings.Replace(p, ":id", id, 1))
	}
	return out
}

// notPages are GET routes that answer no HTML page of their own.
var notPages = map[string]bool{
	"/assets/*": true, "/favicon.ico": true, "/healthz": true, "/readyz": true, "/metrics": true,
	"/lang": true, "/ws/board": true, "/ical/:token": true, "/tasks/:id/files/raw/*": true,
}

// pageVariants are the states of pages a plain GET does not show: tabs,
// filters, the other kind of a form.
var pageVariants = []string{
	"/ledger?mine=1", "/admin/audit?entity=booking", "/admin/cards?status=maintenance", "/board/heatmap?days=7",
	"/notifications?unread=1", "/quotas?show=expired", "/quotas/new?renew=1", "/templates/new?task=1",
	"/tasks/new?vram_gib=60&precision=bf16", "/admin/users?q=wang",
}

func TestEveryPageSpeaksOneLanguage(t *testing.T) {
	t.Parallel()
	w := newPageWorld(t)
	var paths []string
	for _, r := range w.e.Srv.Routes() {
		if r.Method != http.MethodGet || strings.HasPrefix(r.Path, "/api/") || notPages[r.Path] {
			continue
		}
		paths = append(paths, w.pagePaths(r)...)
	}
	if len(paths) < 50 {
		t.Fatalf("only %d pages in the route table: %q", len(paths), paths)
	}
	paths = append(paths, pageVariants...)
	sort.Strings(paths)
	pages := 0
	for _, role := range servertest.Roles {
		session := w.e.Session(role)
		for _, lang := range []string{web.LangZH, web.LangEN} {
			for _, path := range paths {
				req := httptest.NewRequest(http.MethodGet, path, nil)
				req.AddCookie(&http.Cookie{Name: "cardhour_session", Value: session})
				req.AddCookie(&http.Cookie{Name: "cardhour_lang", Value: lang})
				rec := httptest.NewRecorder()
				w.e.Srv.Handler().ServeHTTP(rec, req)
				if rec.Code >= 500 {
					t.Errorf("%s as %s in %s: status %d", path, role, lang, rec.Code)
					continue
				}
				if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
					continue
				}
				pages++
				for _, p := range w.problems(rec.Body.Bytes(), lang) {
					t.Errorf("%s as %s in %s (%d): %s", path, role, lang, rec.Code, p)
				}
			}
		}
	}
	// The login page and the 401 page, for nobody logged in.
	for _, lang := range []string{web.LangZH, web.LangEN} {
		for _, path := range []string{"/login", "/admin/audit", "/nowhere"} {
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.AddCookie(&http.Cookie{Name: "cardhour_lang", Value: lang})
			rec := httptest.NewRecorder()
			w.e.Srv.Handler().ServeHTTP(rec, req)
			pages++
			for _, p := range w.problems(rec.Body.Bytes(), lang) {
				t.Errorf("%s logged out in %s (%d): %s", path, lang, rec.Code, p)
			}
		}
	}
	t.Logf("checked %d pages (%d paths × %d roles × 2 languages, and the logged-out ones)", pages, len(paths), len(servertest.Roles))
}
