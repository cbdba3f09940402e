// Package servertest builds a whole portal for the tests of the kernel and
// of every area: config.Load, store.Open, Migrate, EnsureAdmin and
// server.New, as serve does, on a temporary SQLite file or the database
// CARDHOUR_DB names; one user per site role with a password and an API
// token; a browser-like client. Every /api/v1 answer the client receives
// is checked against the portal's own OpenAPI document, so a handler whose
// JSON drifts from its description fails the test that called it.
package servertest

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"cardhour/config"
	"cardhour/server"
	"cardhour/store"
)

// AdminPassword is the password of the portal's admin account.
const AdminPassword = "admin-secret-1"

// Roles are the site roles the tests log in as, least powerful first.
var Roles = []string{store.RoleViewer, store.RoleMember, store.RoleManager, store.RoleAdmin}

// Account is a user of the test portal with a password and an API token.
type Account struct {
	ID       int64
	Username string
	Password string
	Role     string
	Token    string
}

// Env is a portal on its own database, served by httptest.
type Env struct {
	T     testing.TB
	Cfg   config.Config
	St    *store.Store
	Srv   *server.Server
	TS    *httptest.Server
	Users map[string]*Account // by role
	Logs  *LockedBuffer

	schemaOnce sync.Once
	schema     *document
	schemaErr  error
}

// Options change the portal a test gets.
type Options struct {
	Vars map[string]string // CARDHOUR_* over the defaults
	Demo bool              // load the demo fleet, so id 1 exists for every entity
	// OwnBaseURL sets CARDHOUR_BASE_URL to the test server's own address,
	// for what must know it before the server starts (the OpenID Connect
	// redirect URI).
	OwnBaseURL bool
}

// New builds a portal the way serve does.
func New(tb testing.TB, o Options) *Env {
	tb.Helper()
	vars := map[string]string{
		"CARDHOUR_DATA":      tb.TempDir(),
		"CARDHOUR_ADDR":      "127.0.0.1:0",
		"CARDHOUR_DEMO":      "false",
		"CARDHOUR_LOG_LEVEL": "info",
	}
	for k, v := range o.Vars {
		vars[k] = v
	}
	// The listener first, so that its address can be the base URL.
	ts := httptest.NewUnstartedServer(nil)
	if o.OwnBaseURL {
		vars["CARDHOUR_BASE_URL"] = "http://" + ts.Listener.Addr().String()
	}
	cfg, err := config.Load("serve", nil, func(k string) string { return vars[k] }, io.Discard)
	if err != nil {
		ts.Close()
		tb.Fatalf("config.Load: %v", err)
	}
	logs := &LockedBuffer{}
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
	if _, err := st.EnsureAdmin(ctx, AdminPassword); err != nil {
		tb.Fatalf("EnsureAdmin: %v", err)
	}
	if o.Demo {
		if err := st.SeedDemo(ctx, time.UTC); err != nil {
			tb.Fatalf("SeedDemo: %v", err)
		}
	}
	e := &Env{T: tb, Cfg: cfg, St: st, Users: map[string]*Account{}, Logs: logs}
	admin, err := st.FindUserByUsername(ctx, "admin")
	if err != nil {
		tb.Fatalf("find admin: %v", err)
	}
	e.Users[store.RoleAdmin] = &Account{ID: admin.ID, Username: "admin", Password: AdminPassword, Role: store.RoleAdmin}
	for _, role := range Roles[:3] {
		pw := "password-" + role
		u, err := st.CreateUser(ctx, store.UserCreate{Username: "t-" + role, Password: pw, Role: role})
		if err != nil {
			tb.Fatalf("CreateUser %s: %v", role, err)
		}
		e.Users[role] = &Account{ID: u.ID, Username: u.Username, Password: pw, Role: role}
	}
	for _, a := range e.Users {
		_, secret, err := st.CreateAPIToken(ctx, a.ID, "test", store.TokenUser)
		if err != nil {
			tb.Fatalf("CreateAPIToken %s: %v", a.Username, err)
		}
		a.Token = secret
	}
	e.Srv = server.New(cfg, st, log, "test")
	ts.Config.Handler = e.Srv.Handler()
	ts.Start()
	e.TS = ts
	tb.Cleanup(e.TS.Close)
	tb.Cleanup(func() {
		if tb.Failed() {
			tb.Logf("server log (last 4 KiB):\n%s", e.Logs.Tail(4096))
		}
	})
	return e
}

// Session logs a user in without the login form: a fresh session each
// call, so a request that ends its session (POST /logout) cannot spoil the
// next.
func (e *Env) Session(role string) string {
	e.T.Helper()
	tok, err := e.St.CreateSession(context.Background(), e.Users[role].ID)
	if err != nil {
		e.T.Fatalf("CreateSession: %v", err)
	}
	return tok
}

// Token issues a fresh API token for the role's user, for the same reason
// Session is fresh: a request that revokes its caller's tokens (POST
// /account/tokens/revoke-all) cannot spoil the next.
func (e *Env) Token(role string) string {
	e.T.Helper()
	a := e.Users[role]
	_, secret, err := e.St.CreateAPIToken(e.ActorCtx(a), a.ID, "fresh", store.TokenUser)
	if err != nil {
		e.T.Fatalf("CreateAPIToken: %v", err)
	}
	return secret
}

// AdminCtx is a context acting as the portal's admin, for setting up
// records through the store.
func (e *Env) AdminCtx() context.Context { return e.ActorCtx(e.Users[store.RoleAdmin]) }

// ActorCtx is a context acting as a.
func (e *Env) ActorCtx(a *Account) context.Context {
	return store.WithActor(context.Background(), store.Actor{UserID: a.ID, Username: a.Username})
}

// HasRoute tells whether the table has a route.
func (e *Env) HasRoute(method, path string) bool {
	for _, r := range e.Srv.Routes() {
		if r.Method == method && r.Path == path {
			return true
		}
	}
	return false
}

// LockedBuffer collects the server's log for failure reports.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// Tail is the last n bytes written.
func (b *LockedBuffer) Tail(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.buf.String()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return s
}

func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// AuditTotal is how many entries the audit log holds.
func (e *Env) AuditTotal() int64 {
	e.T.Helper()
	_, total, err := e.St.FindAuditEntries(context.Background(), store.AuditFilter{})
	if err != nil {
		e.T.Fatalf("FindAuditEntries: %v", err)
	}
	return total
}

// LoggedIn is a browser signed in through the login form as the test user
// of role.
func (e *Env) LoggedIn(role string) *Client {
	e.T.Helper()
	c := e.Client()
	c.MustLogin(e.Users[role].Username, e.Users[role].Password)
	return c
}
