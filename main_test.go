package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"cardhour/config"
	"cardhour/migrations"
	"cardhour/server"
	"cardhour/server/servertest"
	"cardhour/store"
)

// envOf is a getenv over a fixed map: run never sees the real environment.
func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

// runCmd calls run with args and vars and returns exit code, stdout, stderr.
func runCmd(t *testing.T, vars map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, envOf(vars), &out, &errb)
	return code, out.String(), errb.String()
}

// tempData is a data directory holding a migrated SQLite database with the
// account admin and the demo fleet, as the first serve leaves it.
func tempData(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	st, err := store.Open(ctx, store.Options{Dialect: store.SQLite, DSN: filepath.Join(dir, "cardhour.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := st.EnsureAdmin(ctx, "admin-pw-1"); err != nil {
		t.Fatal(err)
	}
	if err := st.SeedDemo(ctx, time.UTC); err != nil {
		t.Fatal(err)
	}
	return map[string]string{"CARDHOUR_DATA": dir, "CARDHOUR_LOG_LEVEL": "error"}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	code, out, errOut := runCmd(t, nil, "version")
	if code != 0 || out != "cardhour "+version+"\n" || errOut != "" {
		t.Errorf("version: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestUnknownCommand(t *testing.T) {
	t.Parallel()
	code, _, errOut := runCmd(t, nil, "frobnicate")
	if code != 2 || !strings.Contains(errOut, `unknown command "frobnicate"`) || !strings.Contains(errOut, "usage:") {
		t.Errorf("unknown command: exit %d, stderr %q", code, errOut)
	}
}

// TestTokenAuthenticates is the issue's acceptance: `cardhour token --user
// admin` prints a token, and that token lists the cards through the API.
func TestTokenAuthenticates(t *testing.T) {
	t.Parallel()
	vars := tempData(t)
	code, out, errOut := runCmd(t, vars, "token", "--user", "admin", "--name", "ci")
	if code != 0 {
		t.Fatalf("token: exit %d, stderr %q", code, errOut)
	}
	secret := strings.TrimSpace(out)
	if strings.Count(out, "\n") != 1 || !strings.HasPrefix(secret, "cht_") {
		t.Fatalf("token printed %q, want one line with the secret", out)
	}

	// The portal as serve builds it, on the same data directory.
	cfg, err := config.Load("serve", nil, envOf(vars), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	st, err := openStore(context.Background(), cfg, slog.New(slog.DiscardHandler), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ts := httptest.NewServer(server.New(cfg, st, slog.New(slog.DiscardHandler), version).Handler())
	defer ts.Close()
	get := func(path, token string) (int, []byte) {
		req, _ := http.NewRequest(http.MethodGet, ts.URL+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, b
	}

	status, body := get("/api/v1/me", secret)
	var me struct {
		User struct{ Username, Role string } `json:"user"`
	}
	if err := json.Unmarshal(body, &me); err != nil || status != http.StatusOK || me.User.Username != "admin" {
		t.Fatalf("GET /api/v1/me with the printed token: %d %s", status, body)
	}

	cards, err := st.FindCards(context.Background(), store.CardFilter{})
	if err != nil || len(cards) == 0 {
		t.Fatalf("no cards to list (%v)", err)
	}
	status, body = get("/api/v1/cards", secret)
	if status != http.StatusOK || !strings.Contains(string(body), cards[0].UUID) {
		t.Errorf("GET /api/v1/cards with the token: %d, want 200 listing %s; body %.300s", status, cards[0].UUID, body)
	}
	status, body = get("/api/v1/cards", "")
	if status != http.StatusUnauthorized || !strings.Contains(string(body), `"code":"unauthorized"`) {
		t.Errorf("GET /api/v1/cards without a token: %d %s, want 401 JSON", status, body)
	}

	toks, err := st.FindAPITokens(context.Background(), 0)
	if err != nil || len(toks) != 1 || toks[0].Name != "ci" || strings.Contains(toks[0].TokenHash, secret) {
		t.Errorf("stored tokens: %+v (%v), want one named ci, stored hashed", toks, err)
	}
}

func TestTokenFailures(t *testing.T) {
	t.Parallel()
	vars := tempData(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"token", "--user", "nobody"}, `cardhour: token: no user "nobody"`},
		{[]string{"token"}, "cardhour: token: --user NAME is required"},
		{[]string{"token", "--user"}, "cardhour: token: --user needs a value"},
	} {
		code, out, errOut := runCmd(t, vars, tc.args...)
		if code != 1 || out != "" || strings.TrimSpace(errOut) != tc.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 1 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestInvalidConfigStopsWithOneLine: a bad setting stops every command
// before it touches anything, with one line that names the option.
func TestInvalidConfigStopsWithOneLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, value string }{
		{"CARDHOUR_LANG", "fr"},
		{"CARDHOUR_ADDR", "nope"},
		{"CARDHOUR_TZ", "Mars/Olympus_Mons"},
		{"CARDHOUR_LOG_LEVEL", "loud"},
		{"CARDHOUR_LOG_FORMAT", "xml"},
		{"CARDHOUR_DB", "postgres://db/cardhour"},
		{"CARDHOUR_DB", "mysql://no-at-sign"},
		{"CARDHOUR_DEMO", "maybe"},
		{"CARDHOUR_BASE_URL", "ftp://portal"},
	} {
		for _, args := range [][]string{nil, {"migrate", "status"}, {"token", "--user", "admin"}} {
			dir := t.TempDir()
			vars := map[string]string{"CARDHOUR_DATA": dir, "CARDHOUR_ADDR": "127.0.0.1:0", tc.name: tc.value}
			code, out, errOut := runCmd(t, vars, args...)
			if code == 0 {
				t.Errorf("%s=%s %v: exit 0, want failure", tc.name, tc.value, args)
				continue
			}
			if strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, tc.name) {
				t.Errorf("%s=%s %v: stderr %q, want one line naming %s", tc.name, tc.value, args, errOut, tc.name)
			}
			if out != "" {
				t.Errorf("%s=%s %v: stdout %q, want nothing", tc.name, tc.value, args, out)
			}
			if entries, _ := filepath.Glob(filepath.Join(dir, "*")); len(entries) != 0 {
				t.Errorf("%s=%s %v: wrote %v before failing", tc.name, tc.value, args, entries)
			}
		}
	}
}

func TestMigrateStatusAndUp(t *testing.T) {
	t.Parallel()
	files, err := fs.Glob(mustFS(t, "sqlite"), "*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sqlite migrations (%v)", err)
	}
	vars := map[string]string{"CARDHOUR_DATA": t.TempDir()}
	line := regexp.MustCompile(`^(\d{5})  (applied|pending) +(\S+\.sql)$`)
	check := func(out, state string) {
		t.Helper()
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if state == "applied" {
			if lines[0] != "migrations applied" {
				t.Errorf("migrate up: first line %q", lines[0])
			}
			lines = lines[1:]
		}
		if len(lines) != len(files) {
			t.Fatalf("listed %d migrations, the embedded sqlite folder has %d:\n%s", len(lines), len(files), out)
		}
		for i, l := range lines {
			m := line.FindStringSubmatch(l)
			if m == nil || m[2] != state || m[3] != files[i] {
				t.Errorf("line %q, want %s %s", l, state, files[i])
			}
		}
	}

	code, out, errOut := runCmd(t, vars, "migrate", "status")
	if code != 0 {
		t.Fatalf("migrate status: exit %d: %s", code, errOut)
	}
	check(out, "pending")

	code, out, errOut = runCmd(t, vars, "migrate", "up")
	if code != 0 {
		t.Fatalf("migrate up: exit %d: %s", code, errOut)
	}
	check(out, "applied")

	code, out, _ = runCmd(t, vars, "migrate")
	if code != 0 {
		t.Fatalf("migrate (default up) on a current database: exit %d", code)
	}
	check(out, "applied")

	code, _, errOut = runCmd(t, vars, "migrate", "sideways")
	if code != 1 || !strings.Contains(errOut, `unknown action "sideways"`) {
		t.Errorf("migrate sideways: exit %d, stderr %q", code, errOut)
	}
}

func mustFS(t *testing.T, dialect string) fs.FS {
	t.Helper()
	f, err := migrations.For(dialect)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestServeStartsAndShutsDown runs serve as main does: it prints the admin
// password it generated and where it listens, serves, and returns 0 when
// its context ends.
func TestServeStartsAndShutsDown(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	vars := map[string]string{"CARDHOUR_DATA": dir, "CARDHOUR_ADDR": "127.0.0.1:0", "CARDHOUR_LOG_LEVEL": "warn"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan int, 1)
	var logs servertest.LockedBuffer
	go func() {
		code := run(ctx, nil, envOf(vars), pw, &logs)
		pw.Close()
		done <- code
	}()

	var password, base string
	sc := bufio.NewScanner(pr)
	for base == "" && sc.Scan() {
		l := sc.Text()
		if _, p, ok := strings.Cut(l, "Created the account admin with password: "); ok {
			password = strings.TrimSpace(p)
		}
		if _, u, ok := strings.Cut(l, " listening on "); ok {
			base = strings.TrimSpace(u)
		}
	}
	if base == "" {
		t.Fatalf("serve ended without saying where it listens (exit %d)", <-done)
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if password == "" {
		t.Errorf("serve on an empty database did not print the generated admin password")
	}

	for _, path := range []string{"/healthz", "/readyz"} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", path, res.StatusCode)
		}
	}

	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("serve after its context ended: exit %d, want 0", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return after its context ended")
	}
	// CARDHOUR_LOG_LEVEL=warn silences the one line per request of info.
	if out := logs.Tail(1 << 20); strings.Contains(out, "msg=request") {
		t.Errorf("request lines logged at warn:\n%s", out)
	}

	// The printed password is the admin's, and demo data came with SQLite.
	st, err := store.Open(context.Background(), store.Options{Dialect: store.SQLite, DSN: filepath.Join(dir, "cardhour.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Authenticate(context.Background(), "admin", password); err != nil {
		t.Errorf("the printed password does not log admin in: %v", err)
	}
	if types, _ := st.FindCardTypes(context.Background()); len(types) == 0 {
		t.Errorf("CARDHOUR_DEMO=auto on SQLite loaded no demo card types")
	}
}

// TestAdminResetPassword: `cardhour admin reset-password --user admin`
// prints a new password once; it signs in and the old one no longer does,
// the account's sessions are ended, and the change is in the audit log.
func TestAdminResetPassword(t *testing.T) {
	t.Parallel()
	vars := tempData(t)
	code, out, errOut := runCmd(t, vars, "admin", "reset-password", "--user", "admin")
	if code != 0 {
		t.Fatalf("admin reset-password: exit %d, stderr %q", code, errOut)
	}
	m := regexp.MustCompile(`^new password for admin \(shown once; change it after signing in\): (\S{12,})\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("printed %q, want one line with the new password", out)
	}
	cfg, err := config.Load("serve", nil, envOf(vars), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	st, err := openStore(context.Background(), cfg, slog.New(slog.DiscardHandler), 0)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	if _, err := st.Authenticate(ctx, "admin", m[1]); err != nil {
		t.Errorf("the printed password does not sign in: %v", err)
	}
	if _, err := st.Authenticate(ctx, "admin", "admin-pw-1"); err == nil {
		t.Error("the old password still signs in")
	}
	entries, _, err := st.FindAuditEntries(ctx, store.AuditFilter{Entity: "user"})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		found = found || (e.Action == "update" && e.ActorName == "cli" && e.RemoteIP == "cli" && e.Summary == "admin")
	}
	if !found {
		t.Errorf("no audit entry for the reset by cli among %d user entries", len(entries))
	}
	if strings.Contains(errOut, m[1]) {
		t.Error("the new password was logged")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"admin"}, "cardhour: admin: want a subcommand: reset-password --user NAME"},
		{[]string{"admin", "reset-password"}, "cardhour: admin reset-password: --user NAME is required"},
		{[]string{"admin", "reset-password", "--user", "nobody"}, `cardhour: admin reset-password: no user "nobody"`},
		{[]string{"admin", "wipe"}, `cardhour: admin: unknown subcommand "wipe" (want reset-password)`},
	} {
		code, _, errOut := runCmd(t, vars, c.args...)
		if code != 1 || strings.TrimSpace(errOut) != c.want {
			t.Errorf("%v: exit %d, stderr %q; want 1 and %q", c.args, code, errOut, c.want)
		}
	}
}
