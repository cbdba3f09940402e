package server_test

// The route × role test's other half: ids of records another team owns.
// TestRouteRoleMatrix proves who gets past each route's gate; this test
// proves that getting past it does not open other teams' records. Every
// route whose path takes an id is sent, as each of viewer, member and
// manager (all members of one team), an id of a record of another team —
// or, for what belongs to a person, another person's — and must answer 404:
// another team's record is not found, the same answer as an id that does
// not exist, so the status tells nothing either. A route added with an id
// is walked without editing this file as long as its record is one the
// test knows (recordOf); one it does not know fails the test until it is
// listed there or, for a record every viewer may read, in sharedRecords.

import (
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"cardhour/server/route"
	"cardhour/server/servertest"
	"cardhour/store"
)

// recordOf names the record a route's :id (its first parameter) is, by
// the route's path: the keys of otherTeams' answer.
var recordOf = []struct {
	path   *regexp.Regexp
	record string
}{
	{regexp.MustCompile(`^(/api/v1)?/bookings/:id\b`), "booking"},
	{regexp.MustCompile(`^(/api/v1)?/ledger/rounds/:id\b`), "booking"}, // a round is its booking
	{regexp.MustCompile(`^(/api/v1)?/ledger/tasks/:id\b`), "task"},
	{regexp.MustCompile(`^(/api/v1)?/tasks/:id\b`), "task"},
	{regexp.MustCompile(`^/templates/:id\b`), "template"},
	{regexp.MustCompile(`^(/api/v1)?/quotas/:id\b`), "quota"},
	{regexp.MustCompile(`^/channels/:id\b`), "channel"},
	{regexp.MustCompile(`^/api/v1/notify-channels/:id\b`), "channel"},
	{regexp.MustCompile(`^/notifications/:id\b`), "notification"},
	{regexp.MustCompile(`^/account/tokens/:id\b`), "token"},
}

// sharedRecords are routes with a parameter that names no team's or
// person's record: the inventory every signed-in user reads, and the
// calendar feed whose parameter is its own credential.
var sharedRecords = []*regexp.Regexp{
	regexp.MustCompile(`^/api/v1/(card-types|cards|hosts|images)/:id$`),
	regexp.MustCompile(`^/ical/:token$`),
}

// otherTeam is what the test's users may not reach: records of the demo's
// 大模型组, of which none of them is a member, and of its member lihua.
type otherTeam struct {
	ids  map[string]int64
	file string // a file of the task, for routes that take a path too
}

// joinOtherTeam puts the test's viewer, member and manager into the demo's
// 推理平台 with the team role of their site role, so they are members of a
// team (a rule that only held for people of no team would pass otherwise),
// and returns another team's records.
func joinOtherTeam(t *testing.T, e *env) otherTeam {
	t.Helper()
	ctx := e.AdminCtx()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	teams, err := e.St.FindTeams(ctx)
	must(err)
	byName := map[string]int64{}
	for _, tm := range teams {
		byName[tm.Name] = tm.ID
	}
	mine, theirs := byName["推理平台"], byName["大模型组"]
	if mine == 0 || theirs == 0 {
		t.Fatalf("the demo's teams are %v", byName)
	}
	for role, teamRole := range map[string]string{store.RoleViewer: store.TeamRoleViewer, store.RoleMember: store.TeamRoleMember, store.RoleManager: store.TeamRoleManager} {
		_, err := e.St.SetMembership(ctx, mine, e.Users[role].ID, teamRole)
		must(err)
	}

	o := otherTeam{ids: map[string]int64{}, file: "train.yaml"}
	// A finished round: its page would show costs, outputs and notes.
	bookings, err := e.St.FindBookings(ctx, store.BookingFilter{TeamIDs: []int64{theirs}, States: []string{store.BookingCompleted}, Limit: 1})
	must(err)
	if len(bookings) == 0 {
		t.Fatal("the demo's 大模型组 has no finished round")
	}
	o.ids["booking"] = bookings[0].ID
	o.ids["task"] = bookings[0].TaskID
	quotas, err := e.St.FindQuotas(ctx, store.QuotaFilter{TeamIDs: []int64{theirs}})
	must(err)
	templates, err := e.St.FindTemplates(ctx, []int64{theirs})
	must(err)
	if len(quotas) == 0 || len(templates) == 0 {
		t.Fatalf("the demo's 大模型组 has %d quotas and %d templates", len(quotas), len(templates))
	}
	o.ids["quota"], o.ids["template"] = quotas[0].ID, templates[0].ID
	ch, err := e.St.CreateNotifyChannel(ctx, store.NotifyChannelInput{TeamID: &theirs, Kind: "webhook", Name: "大模型组 hook",
		URL: "https://hooks.example.cn/llm", Enabled: true})
	must(err)
	o.ids["channel"] = ch.ID

	lihua, err := e.St.FindUserByUsername(ctx, "lihua")
	must(err)
	// The demo's bookings placed no one's on the bell; one written as the
	// store would is enough for a read mark.
	_, err = e.St.DB().Exec("INSERT INTO notifications (user_id, kind, message_key, args_json, link, created_at) VALUES (?, 'placed', 'notify.placed', '[1]', '/bookings/1', ?)",
		lihua.ID, time.Now().UTC())
	must(err)
	notes, err := e.St.FindNotifications(ctx, lihua.ID, false, 1)
	must(err)
	if len(notes) == 0 {
		t.Fatal("lihua has no notification")
	}
	o.ids["notification"] = notes[0].ID
	tok, _, err := e.St.CreateAPIToken(ctx, lihua.ID, "lihua's", store.TokenUser)
	must(err)
	o.ids["token"] = tok.ID

	// The task gets a file, so routes that take a path find one: a 404 for a
	// missing file would hide a missing team check.
	put := e.Client().Do(http.MethodPut, fmt.Sprintf("/api/v1/tasks/%d/files/%s", o.ids["task"], o.file),
		strings.NewReader("lr: 3e-4\n"), http.Header{"Authorization": {"Bearer " + e.Users[store.RoleAdmin].Token},
			"Content-Type": {"application/octet-stream"}, "Accept": {"application/json"}})
	if put.StatusCode != http.StatusCreated {
		t.Fatalf("put a file on the other team's task: %d\n%s", put.StatusCode, put)
	}
	return o
}

// otherTeamPath fills a route's pattern with another team's record, or says
// why it cannot.
func (o otherTeam) path(r route.Route) (string, error) {
	for _, s := range sharedRecords {
		if s.MatchString(r.Path) {
			return "", nil
		}
	}
	for _, k := range recordOf {
		if !k.path.MatchString(r.Path) {
			continue
		}
		id, ok := o.ids[k.record]
		if !ok {
			return "", fmt.Errorf("no %s of another team was made: add one to joinOtherTeam", k.record)
		}
		p := strings.Replace(r.Path, ":id", fmt.Sprint(id), 1)
		if params := paramPattern.FindAllString(p, -1); len(params) > 0 {
			return "", fmt.Errorf("takes %v besides the id: teach otherTeamPath what to put there", params)
		}
		return strings.Replace(p, "*", o.file, 1), nil
	}
	return "", fmt.Errorf("takes an id this test does not know: name its record in recordOf (server/routes_teams_test.go), or list it in sharedRecords if every viewer may read it")
}

// TestRouteRoleMatrixRefusesOtherTeamsRecords: for every route taking an
// id that viewer, member or manager may use, another team's record is not
// found (404) — with a session (and the CSRF pair for writes) and with an
// API token alike.
func TestRouteRoleMatrixRefusesOtherTeamsRecords(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{Demo: true})
	other := joinOtherTeam(t, e)
	routes := e.Srv.Routes()
	sort.Slice(routes, func(i, j int) bool {
		return routeKey(routes[i].Method, routes[i].Path) < routeKey(routes[j].Method, routes[j].Path)
	})
	walked := 0
	for _, r := range routes {
		if !paramPattern.MatchString(r.Path) {
			continue
		}
		need := needRank(t, r.Access)
		if r.Gate.Set() {
			need = needRank(t, r.Gate)
		}
		if need >= needRank(t, route.Admin) {
			continue // admins see every team's records
		}
		path, err := other.path(r)
		if err != nil {
			t.Errorf("%s %s %v", r.Method, r.Path, err)
			continue
		}
		if path == "" {
			continue
		}
		walked++
		t.Run(routeKey(r.Method, r.Path), func(t *testing.T) {
			for _, c := range callers[1:4] {
				if c.rank < need {
					continue
				}
				creds := []credentials{{label: "session", session: e.Session(c.role)}, {label: "API token", bearer: e.Users[c.role].Token}}
				if !isSafe(r.Method) {
					creds[0] = credentials{label: "session + CSRF token", session: e.Session(c.role), csrf: true}
				}
				for _, cred := range creds {
					rec := e.matrixRequestTo(r, path, cred)
					if rec.Code != http.StatusNotFound {
						t.Errorf("%s %s as %s (%s): status %d, want 404 (another team's record); body:\n%.400s", r.Method, path, c.role, cred.label, rec.Code, rec.Body.String())
					}
				}
			}
		})
	}
	if walked < 40 {
		t.Errorf("only %d routes taking an id were walked: is the table being read?", walked)
	}
}

// TestOtherTeamsMatrixKnowsEveryRecord proves the unknown-route check:
// a route with an id whose record the test was not told of is reported
// instead of being skipped.
func TestOtherTeamsMatrixKnowsEveryRecord(t *testing.T) {
	t.Parallel()
	o := otherTeam{ids: map[string]int64{"task": 7}, file: "a.txt"}
	if _, err := o.path(route.Route{Method: http.MethodGet, Path: "/widgets/:id"}); err == nil || !strings.Contains(err.Error(), "recordOf") {
		t.Errorf("a route on an unknown record: %v", err)
	}
	if p, err := o.path(route.Route{Method: http.MethodGet, Path: "/tasks/:id/files/show/*"}); err != nil || p != "/tasks/7/files/show/a.txt" {
		t.Errorf("a task route: %q, %v", p, err)
	}
	if _, err := o.path(route.Route{Method: http.MethodGet, Path: "/quotas/:id"}); err == nil {
		t.Error("a record the fixture lacks was not reported")
	}
}
