package server_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"cardhour/config"
	"cardhour/server"
	"cardhour/store"
)

const adminPassword = "admin-secret-1"

// roles are the site roles the tests log in as, least powerful first.
var roles = []string{store.RoleViewer, store.RoleMember, store.RoleManager, store.RoleAdmin}

// account is a user of the test portal with a password and an API token.
type account struct {
	ID       int64
	Username string
	Password string
	Role     string
	Token    string
}

// env is a portal on its own database, served by httptest.
type env struct {
	t     testing.TB
	cfg   config.Config
	st    *store.Store
	srv   *server.Server
	ts    *httptest.Server
	users map[string]*account // by role
	logs  *lockedBuffer
}

type envOptions struct {
	vars map[string]string // CARDHOUR_* over the defaults
	demo bool              // load the demo fleet, so id 1 exists for every entity
}

// newEnv builds a portal the way serve does (config.Load, store.Open,
// Migrate, EnsureAdmin, server.New) on a temporary SQLite file, or on the
// database CARDHOUR_DB in o.vars names.
func newEnv(tb testing.TB, o envOptions) *env {
	tb.Helper()
	vars := map[string]string{
		"CARDHOUR_DATA":      tb.TempDir(),
		"CARDHOUR_ADDR":      "127.0.0.1:0",
		"CARDHOUR_DEMO":      "false",
		"CARDHOUR_LOG_LEVEL": "info",
	}
	for k, v := range o.vars {
		vars[k] = v
	}
	cfg, err := config.Load("serve", nil, func(k string) string { return vars[k] }, io.Discard)
	if err != nil {
		tb.Fatalf("config.Load: %v", err)
	}
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	target, err := config.ParseDB(cfg.DB, cfg.DataDir)
	if err != nil {
		tb.Fatalf("config.ParseDB: %v", err)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{Dialect: target.Dialect, DSN: target.DSN, Logger: log})
	if err != nil {
		tb.Fatalf("store.Open: %v", err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(ctx); err != nil {
		tb.Fatalf("Migrate: %v", err)
	}
	if _, err := st.EnsureAdmin(ctx, adminPassword); err != nil {
		tb.Fatalf("EnsureAdmin: %v", err)
	}
	if o.demo {
		if err := st.SeedDemo(ctx, time.UTC); err != nil {
			tb.Fatalf("SeedDemo: %v", err)
		}
	}
	e := &env{t: tb, cfg: cfg, st: st, users: map[string]*account{}, logs: logs}
	admin, err := st.FindUserByUsername(ctx, "admin")
	if err != nil {
		tb.Fatalf("find admin: %v", err)
	}
	e.users[store.RoleAdmin] = &account{ID: admin.ID, Username: "admin", Password: adminPassword, Role: store.RoleAdmin}
	for _, role := range roles[:3] {
		pw := "password-" + role
		u, err := st.CreateUser(ctx, store.UserCreate{Username: "t-" + role, Password: pw, Role: role})
		if err != nil {
			tb.Fatalf("CreateUser %s: %v", role, err)
		}
		e.users[role] = &account{ID: u.ID, Username: u.Username, Password: pw, Role: role}
	}
	for _, a := range e.users {
		_, secret, err := st.CreateAPIToken(ctx, a.ID, "test", store.TokenUser)
		if err != nil {
			tb.Fatalf("CreateAPIToken %s: %v", a.Username, err)
		}
		a.Token = secret
	}
	e.srv = server.New(cfg, st, log, "test")
	e.ts = httptest.NewServer(e.srv.Handler())
	tb.Cleanup(e.ts.Close)
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("server log (last 4 KiB):\n%s", e.logs.tail(4096))
		}
	})
	return e
}

// session logs a user in without the login form: a fresh session each call,
// so a request that ends its session (POST /logout) cannot spoil the next.
func (e *env) session(role string) string {
	e.t.Helper()
	tok, err := e.st.CreateSession(context.Background(), e.users[role].ID)
	if err != nil {
		e.t.Fatalf("CreateSession: %v", err)
	}
	return tok
}

// client is a browser-like HTTP client: a cookie jar, redirects not followed
// so tests see them.
type client struct {
	t    testing.TB
	base *url.URL
	hc   *http.Client
}

func (e *env) client() *client {
	jar, _ := cookiejar.New(nil)
	u, _ := url.Parse(e.ts.URL)
	return &client{t: e.t, base: u, hc: &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// response is a finished request with its body read.
type response struct {
	*http.Response
	Body []byte
}

func (r response) String() string { return string(r.Body) }

// Doc parses the body as HTML.
func (r response) Doc(tb testing.TB) *goquery.Document {
	tb.Helper()
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(r.Body))
	if err != nil {
		tb.Fatalf("parse HTML: %v", err)
	}
	return doc
}

func (c *client) do(method, path string, body io.Reader, header http.Header) response {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base.String()+path, body)
	if err != nil {
		c.t.Fatalf("NewRequest: %v", err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	res, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return response{Response: res, Body: b}
}

func (c *client) get(path string) response { return c.do(http.MethodGet, path, nil, nil) }

// postForm posts form values as a browser would, with the CSRF token when
// withCSRF (taken from the cookie the portal set).
func (c *client) postForm(path string, v url.Values, withCSRF bool) response {
	c.t.Helper()
	if v == nil {
		v = url.Values{}
	}
	if withCSRF {
		v.Set("_csrf", c.csrf())
	}
	return c.do(http.MethodPost, path, strings.NewReader(v.Encode()),
		http.Header{"Content-Type": {"application/x-www-form-urlencoded"}})
}

// csrf returns the CSRF token, fetching /login first when no page has set it.
func (c *client) csrf() string {
	c.t.Helper()
	if v := c.cookie("cardhour_csrf"); v != "" {
		return v
	}
	c.get("/login")
	v := c.cookie("cardhour_csrf")
	if v == "" {
		c.t.Fatal("the portal set no cardhour_csrf cookie")
	}
	return v
}

func (c *client) cookie(name string) string {
	for _, ck := range c.hc.Jar.Cookies(c.base) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}

// login signs in through the form, the way a browser does: the token comes
// from the page's hidden _csrf input.
func (c *client) login(username, password string) response {
	c.t.Helper()
	page := c.get("/login")
	token, ok := page.Doc(c.t).Find(`[data-testid=login-form] input[name=_csrf]`).Attr("value")
	if !ok || token == "" {
		c.t.Fatalf("login form has no _csrf input:\n%s", page)
	}
	return c.do(http.MethodPost, "/login", strings.NewReader(url.Values{
		"_csrf": {token}, "username": {username}, "password": {password}, "next": {"/"},
	}.Encode()), http.Header{"Content-Type": {"application/x-www-form-urlencoded"}})
}

func (c *client) mustLogin(username, password string) {
	c.t.Helper()
	if r := c.login(username, password); r.StatusCode != http.StatusSeeOther {
		c.t.Fatalf("login %s: status %d, want 303:\n%s", username, r.StatusCode, r)
	}
	if c.cookie("cardhour_session") == "" {
		c.t.Fatalf("login %s: no session cookie", username)
	}
}

// lockedBuffer collects the server's log for failure reports.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) tail(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
