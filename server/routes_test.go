package server_test

// The route × role test. It reads the route table from the server itself
// (srv.Routes(), and echo's own list), so a route added anywhere — any
// area's routes.go, an area not written yet — is walked without editing
// this file. What it catches, with the messages it printed when these
// mistakes were made on purpose:
//
//   - A route registered on echo directly, s.echo.GET("/debug", h), so it
//     has no declared access:
//     GET /debug is served by echo but missing from srv.Routes(): list it
//     in its area's Routes()
//   - A route entry without an access level, route.Route{Method: GET,
//     Path: "/z", Handler: h}: New panics, so every test of the package
//     fails (TestTableRulesRefuseMistakes checks that rule directly):
//     panic: server: route GET /z declares no access
//   - A new public route, route.New(GET, "/export", route.Public, h) —
//     public means no login at all, so it must be chosen on purpose:
//     GET /export is Public but not in publicRoutes: a public route answers
//     anyone on the network; if that is meant, add it to publicRoutes in
//     server/routes_test.go
//   - An admin page opened to a lower role, route.New(GET, "/admin/x",
//     route.Manager, h):
//     GET /admin/x is manager; every /admin route must be admin
//   - A state-changing route that a browser session can use without the CSRF
//     token (here by widening the CSRF Skipper to POST /admin/y):
//     POST /admin/y as admin (session, no CSRF token): status 200, want 403 (CSRF)
//   - A handler or middleware that answers differently from the declared
//     level: 401/403 to a role the table lets in, anything but 401/403 to a
//     role below it, or a 5xx to an allowed role, e.g.
//     GET /admin/x as member (session): status 200, want 403 (route is admin)
//
// TestRouteTableChecksCatchMistakes keeps proving the first, third and
// fourth on a server with such routes added, so the checks cannot rot.
//
// Getting past a route's gate must not open other teams' records: that half
// is TestRouteRoleMatrixRefusesOtherTeamsRecords (routes_teams_test.go),
// which sends every route taking an id another team's record and wants 404.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"cardhour/server"
	"cardhour/server/route"
	"cardhour/server/servertest"
)

// publicRoutes is every route that answers without a login. Adding a Public
// route fails TestPublicRoutesAreAllowListed until it is added here, so that
// opening a route to the internet is a decision a reviewer sees in the diff.
var publicRoutes = map[string]bool{
	"GET /healthz": true,
	"GET /readyz":  true,
	// Gated: scrapers from CARDHOUR_METRICS_ALLOW (loopback by default) or
	// with CARDHOUR_METRICS_TOKEN, else admins (server/auth.go gateMetrics).
	"GET /metrics":     true,
	"GET /assets/*":    true,
	"GET /favicon.ico": true,
	"GET /login":       true,
	"POST /login":      true,
	"GET /lang":        true,
	// Company sign-in: the start sends the browser to the provider; the
	// callback is taken only with the state its browser was given (cookie
	// and a single-use row), and 404s when no provider is configured.
	"GET /login/oidc":          true,
	"GET /login/oidc/callback": true,
	// The OpenAPI document describes the API and holds no data; clients
	// and code generators fetch it before they have a token.
	"GET /api/v1/openapi.json": true,
	// Calendar apps fetch feeds without logging in: the secret in the URL
	// is the credential, and an unknown or replaced one is 404.
	"GET /ical/:token": true,
	// The wall board and its websocket admit a read-only board token
	// (?token=), which is no user, besides any login; the two telemetry push
	// routes admit an agent token besides an admin. They are Public in the
	// table, check the credential themselves, and carry the level they admit
	// users at as their Gate, which the matrix holds them to.
	"GET /board":                        true,
	"GET /ws/board":                     true,
	"POST /api/v1/telemetry/nvidia-smi": true,
	"POST /api/v1/telemetry/samples":    true,
}

// callers are who the matrix sends each request as; rank follows
// store.RoleRank, 0 for nobody logged in.
var callers = []struct {
	role string // "" is anonymous
	rank int
}{
	{"", 0}, {"viewer", 1}, {"member", 2}, {"manager", 3}, {"admin", 4},
}

// needRank is the lowest caller rank an access level admits.
func needRank(t testing.TB, a route.Access) int {
	switch a {
	case route.Public:
		return 0
	case route.Viewer:
		return 1
	case route.Member:
		return 2
	case route.Manager:
		return 3
	case route.Admin:
		return 4
	}
	t.Fatalf("access level %v (%d) unknown to this test: add it to needRank", a, int(a))
	return 0
}

func routeKey(method, path string) string { return method + " " + path }

// coverageProblems compares echo's routes with the declared table: every
// route echo serves must be declared exactly once, with an access level.
func coverageProblems(srv *server.Server) []string {
	var problems []string
	declared := map[string]int{}
	for _, r := range srv.Routes() {
		k := routeKey(r.Method, r.Path)
		declared[k]++
		if r.Access.String() == "unset" {
			problems = append(problems, fmt.Sprintf("%s declares no access level", k))
		}
	}
	for k, n := range declared {
		if n > 1 {
			// echo keeps only the last handler, but the table lists both
			// access levels: one of them is a lie.
			problems = append(problems, fmt.Sprintf("%s is registered %d times; echo serves only the last", k, n))
		}
	}
	e, ok := srv.Handler().(*echo.Echo)
	if !ok {
		return append(problems, fmt.Sprintf("srv.Handler() is %T, not *echo.Echo: this test cannot see the served routes", srv.Handler()))
	}
	served := map[string]bool{}
	for _, r := range e.Routes() {
		k := routeKey(r.Method, r.Path)
		served[k] = true
		if r.Method == http.MethodHead && declared[routeKey(http.MethodGet, r.Path)] > 0 {
			continue // every GET answers HEAD too
		}
		if declared[k] == 0 {
			problems = append(problems, fmt.Sprintf("%s is served by echo but missing from srv.Routes(): list it in its area's Routes()", k))
		}
	}
	for _, r := range srv.Routes() {
		k := routeKey(r.Method, r.Path)
		if !served[k] {
			problems = append(problems, fmt.Sprintf("%s is in srv.Routes() but echo does not serve it", k))
		}
		if r.Method == http.MethodGet && !served[routeKey(http.MethodHead, r.Path)] {
			problems = append(problems, fmt.Sprintf("%s does not answer HEAD", k))
		}
	}
	sort.Strings(problems)
	return problems
}

// policyProblems checks the table against the allow-list of public routes
// and the rule that the admin section is for admins only.
func policyProblems(t testing.TB, routes []route.Route) []string {
	var problems []string
	public := map[string]bool{}
	for _, r := range routes {
		k := routeKey(r.Method, r.Path)
		if r.Access == route.Public {
			public[k] = true
			if !publicRoutes[k] {
				problems = append(problems, fmt.Sprintf("%s is Public but not in publicRoutes: a public route answers anyone on the network; if that is meant, add it to publicRoutes in server/routes_test.go", k))
			}
		}
		if (r.Path == "/admin" || strings.HasPrefix(r.Path, "/admin/") || strings.HasPrefix(r.Path, "/api/v1/admin/")) &&
			needRank(t, r.Access) < needRank(t, route.Admin) {
			problems = append(problems, fmt.Sprintf("%s is %s; every /admin route must be admin", k, r.Access))
		}
	}
	for k := range publicRoutes {
		if !public[k] {
			problems = append(problems, fmt.Sprintf("%s is in publicRoutes but is not a Public route any more: remove it from the list", k))
		}
	}
	sort.Strings(problems)
	return problems
}

func TestRouteTableCoversEveryRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	if len(e.Srv.Routes()) == 0 {
		t.Fatal("srv.Routes() is empty")
	}
	for _, p := range coverageProblems(e.Srv) {
		t.Error(p)
	}
}

func TestPublicRoutesAreAllowListed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	for _, p := range policyProblems(t, e.Srv.Routes()) {
		t.Error(p)
	}
}

// TestRouteTableChecksCatchMistakes feeds the checks the mistakes they exist
// for, so a check that silently stopped working would show here.
func TestRouteTableChecksCatchMistakes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{})
	e.Srv.Handler().(*echo.Echo).GET("/debug/sneaky", func(c echo.Context) error { return c.String(http.StatusOK, "secret") })
	if ps := coverageProblems(e.Srv); !containsProblem(ps, "GET /debug/sneaky is served by echo but missing") {
		t.Errorf("a route added on echo directly was not reported; problems: %q", ps)
	}

	routes := append(e.Srv.Routes(),
		route.Route{Method: http.MethodGet, Path: "/export", Access: route.Public},
		route.Route{Method: http.MethodPost, Path: "/admin/hosts/:id/wipe", Access: route.Manager},
	)
	ps := policyProblems(t, routes)
	if !containsProblem(ps, "GET /export is Public but not in publicRoutes") {
		t.Errorf("a new Public route was not reported; problems: %q", ps)
	}
	if !containsProblem(ps, "POST /admin/hosts/:id/wipe is manager; every /admin route must be admin") {
		t.Errorf("an /admin route below Admin was not reported; problems: %q", ps)
	}

	var withoutLogin []route.Route
	for _, r := range e.Srv.Routes() {
		if !(r.Method == http.MethodGet && r.Path == "/lang") {
			withoutLogin = append(withoutLogin, r)
		}
	}
	if ps := policyProblems(t, withoutLogin); !containsProblem(ps, "GET /lang is in publicRoutes but is not a Public route any more") {
		t.Errorf("a stale allow-list entry was not reported; problems: %q", ps)
	}
}

func containsProblem(problems []string, prefix string) bool {
	for _, p := range problems {
		if strings.HasPrefix(p, prefix) {
			return true
		}
	}
	return false
}

var paramPattern = regexp.MustCompile(`:[A-Za-z_][A-Za-z0-9_]*`)

// concretePath fills a route pattern. Reads use id 1, which the demo fleet
// gives every entity, so pages render real records. Writes use an id that
// does not exist: the matrix checks who gets past the gate, and a DELETE of
// record 1 as admin would otherwise remove what later requests need (the
// admin account itself is user 1).
func concretePath(method, pattern string) string {
	id := "1"
	if !isSafe(method) {
		id = "999999"
	}
	p := paramPattern.ReplaceAllString(pattern, id)
	return strings.Replace(p, "*", "css/app.css", 1)
}

func isSafe(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

// credentials says how a matrix request proves who it is.
type credentials struct {
	label   string
	bearer  string // API token
	session string // session cookie value
	csrf    bool   // send a matching CSRF cookie and header
}

func (e *env) matrixRequest(r route.Route, who string, cred credentials) *httptest.ResponseRecorder {
	e.T.Helper()
	return e.matrixRequestTo(r, concretePath(r.Method, r.Path), cred)
}

// matrixRequestTo sends route r's request to a filled-in path.
func (e *env) matrixRequestTo(r route.Route, path string, cred credentials) *httptest.ResponseRecorder {
	e.T.Helper()
	var body string
	contentType := "application/x-www-form-urlencoded"
	switch {
	case r.Method == http.MethodPost && r.Path == "/login":
		// A real login, so the public form answers as it would to a person
		// rather than with 401 for empty credentials.
		body = "username=" + e.Users["viewer"].Username + "&password=" + e.Users["viewer"].Password
	case strings.HasPrefix(r.Path, "/api/") && !isSafe(r.Method):
		body, contentType = "{}", "application/json"
	}
	req := httptest.NewRequest(r.Method, path, strings.NewReader(body))
	if !isSafe(r.Method) {
		req.Header.Set("Content-Type", contentType)
	}
	if strings.HasPrefix(r.Path, "/api/") {
		req.Header.Set("Accept", "application/json")
	}
	if cred.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+cred.bearer)
	}
	if cred.session != "" {
		req.AddCookie(&http.Cookie{Name: "cardhour_session", Value: cred.session})
	}
	if cred.csrf {
		req.AddCookie(&http.Cookie{Name: "cardhour_csrf", Value: "matrix-csrf-token"})
		req.Header.Set("X-CSRF-Token", "matrix-csrf-token")
	}
	rec := httptest.NewRecorder()
	e.Srv.Handler().ServeHTTP(rec, req)
	return rec
}

// TestRouteRoleMatrix sends every route as every role and checks the answer
// against the route's declared access: below it 401 (nobody logged in) or
// 403 (logged in, role too low); at or above it neither, and no server error.
func TestRouteRoleMatrix(t *testing.T) {
	t.Parallel()
	e := newEnv(t, servertest.Options{Demo: true})
	routes := e.Srv.Routes()
	sort.Slice(routes, func(i, j int) bool {
		return routeKey(routes[i].Method, routes[i].Path) < routeKey(routes[j].Method, routes[j].Path)
	})
	for _, r := range routes {
		t.Run(routeKey(r.Method, r.Path), func(t *testing.T) {
			// A route with a gate of its own is held to the access it grants
			// users (a token of its own kind is tested in the board's tests),
			// so anonymous callers get 401 and lower roles 403.
			need := needRank(t, r.Access)
			if r.Gate.Set() {
				need = needRank(t, r.Gate)
			}
			for _, c := range callers {
				who := c.role
				if who == "" {
					who = "anonymous"
				}
				var creds []credentials
				switch {
				case c.role == "":
					// Without the CSRF pair an unsafe request stops at the CSRF
					// check (403) before the login check; that is tested below.
					creds = []credentials{{label: "no credentials", csrf: !isSafe(r.Method)}}
				case isSafe(r.Method):
					creds = []credentials{
						{label: "session", session: e.Session(c.role)},
						{label: "API token", bearer: e.Token(c.role)},
					}
				default:
					creds = []credentials{
						{label: "API token", bearer: e.Token(c.role)},
						{label: "session + CSRF token", session: e.Session(c.role), csrf: true},
					}
				}
				for _, cred := range creds {
					rec := e.matrixRequest(r, who, cred)
					checkAccess(t, r, who, cred.label, c.rank, need, rec)
				}
				if !isSafe(r.Method) {
					cred := credentials{label: "session, no CSRF token"}
					if c.role != "" {
						cred.session = e.Session(c.role)
					}
					rec := e.matrixRequest(r, who, cred)
					want := http.StatusForbidden
					if c.role == "" && strings.HasPrefix(r.Path, "/api/") {
						// No cookie at all: nothing to forge, so the API answers
						// the missing login (401) instead of the CSRF check.
						want = http.StatusUnauthorized
					}
					if rec.Code != want {
						t.Errorf("%s %s as %s (%s): status %d, want %d", r.Method, r.Path, who, cred.label, rec.Code, want)
					}
				}
			}
		})
	}
}

func checkAccess(t *testing.T, r route.Route, who, how string, rank, need int, rec *httptest.ResponseRecorder) {
	t.Helper()
	where := fmt.Sprintf("%s %s as %s (%s)", r.Method, r.Path, who, how)
	switch {
	case rank < need && rank == 0:
		if rec.Code != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401 (route is %s)", where, rec.Code, r.Access)
			return
		}
		checkDenialBody(t, where, r, rec, "unauthorized")
	case rank < need:
		if rec.Code != http.StatusForbidden {
			t.Errorf("%s: status %d, want 403 (route is %s)", where, rec.Code, r.Access)
			return
		}
		checkDenialBody(t, where, r, rec, "forbidden")
	default:
		if rec.Code == http.StatusUnauthorized || rec.Code == http.StatusForbidden || rec.Code >= 500 {
			t.Errorf("%s: status %d, want the route to let %s in (route is %s); body:\n%.600s", where, rec.Code, who, r.Access, rec.Body.String())
		}
	}
}

// checkDenialBody checks that a refusal is the portal's own: JSON with the
// error code for the API, the error page for browsers.
func checkDenialBody(t *testing.T, where string, r route.Route, rec *httptest.ResponseRecorder, code string) {
	t.Helper()
	body := rec.Body.String()
	if strings.HasPrefix(r.Path, "/api/") {
		if !strings.Contains(body, `"code":"`+code+`"`) {
			t.Errorf("%s: want a JSON error with code %q, got:\n%.400s", where, code, body)
		}
		return
	}
	if !strings.Contains(body, `data-testid="error-page"`) {
		t.Errorf("%s: want the error page, got:\n%.400s", where, body)
	}
}
