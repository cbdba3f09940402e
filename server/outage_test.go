package server_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"cardhour/server/servertest"
	"cardhour/store"
	"cardhour/web"
)

// TestPortalSurvivesMariaDBOutage is the acceptance: stopping the
// database under a running portal gives 503 pages (and 503 JSON, a failing
// /readyz, a living /healthz); starting it again brings the portal back
// with the same login and no restart.
//
// It stops a MariaDB of its own, created with the same control script in a
// temporary directory: go test runs packages in parallel, and stopping the
// shared instance of scripts/testenv.sh would fail the store and e2e suites
// running beside this one.
func TestPortalSurvivesMariaDBOutage(t *testing.T) {
	t.Parallel()
	ctl := os.Getenv("CARDHOUR_TEST_MARIADB_CTL")
	if os.Getenv("CARDHOUR_TEST_MYSQL") == "" || ctl == "" {
		t.Skip("needs MariaDB: CARDHOUR_TEST_MYSQL and CARDHOUR_TEST_MARIADB_CTL are unset; run under scripts/testenv.sh (make test)")
	}
	db := startPrivateMariaDB(t, ctl)
	dsn := db.createDatabase(t, "cardhour_outage")

	e := newEnv(t, servertest.Options{Vars: map[string]string{"CARDHOUR_DB": "mysql://" + dsn}, Demo: true})
	if e.St.Dialect() != "mysql" {
		t.Fatalf("portal runs on %s, want mysql", e.St.Dialect())
	}
	c := e.Client()
	c.MustLogin("admin", servertest.AdminPassword)
	token := e.Users["admin"].Token
	apiPath := "/api/v1/card-types"
	if e.HasRoute(http.MethodGet, "/api/v1/cards") {
		apiPath = "/api/v1/cards"
	}
	if r := c.Get("/"); r.StatusCode != http.StatusOK {
		t.Fatalf("GET / before the outage: %d", r.StatusCode)
	}
	if r := c.APICall(http.MethodGet, apiPath, token, ""); r.StatusCode != http.StatusOK {
		t.Fatalf("GET %s before the outage: %d", apiPath, r.StatusCode)
	}

	db.ctl(t, "stop")

	for _, lang := range []string{web.LangZH, web.LangEN} {
		r := c.Get("/?lang=" + lang)
		if r.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("GET / (%s) with MariaDB stopped: status %d, want 503:\n%.600s", lang, r.StatusCode, r)
		}
		page := r.Doc(t).Find(`[data-testid=error-page]`)
		if page.AttrOr("data-status", "") != "503" {
			t.Errorf("GET / (%s) with MariaDB stopped: not the 503 error page:\n%.600s", lang, r)
		}
		if msg := page.Find(`[data-testid=error-message]`).Text(); msg != web.T(lang, "error.db_unavailable") {
			t.Errorf("503 page (%s) says %q, want %q", lang, msg, web.T(lang, "error.db_unavailable"))
		}
		if r.Header.Get("Retry-After") == "" {
			t.Errorf("503 without Retry-After")
		}
	}
	servertest.MustAPIError(t, c.APICall(http.MethodGet, apiPath, token, ""), http.StatusServiceUnavailable, "unavailable")
	if r := c.Get("/readyz"); r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/readyz with MariaDB stopped: %d, want 503", r.StatusCode)
	}
	if r := c.Get("/healthz"); r.StatusCode != http.StatusOK {
		t.Errorf("/healthz with MariaDB stopped: %d, want 200 (the process is fine)", r.StatusCode)
	}
	if c.Cookie("cardhour_session") == "" {
		t.Fatalf("the outage logged the user out (session cookie cleared)")
	}

	db.ctl(t, "start")

	// The pool reconnects on its own; give it a bounded number of tries.
	// This waits for recovery, it does not time it.
	var last servertest.Response
	recovered := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		last = c.Get("/")
		if last.StatusCode == http.StatusOK {
			recovered = true
			break
		}
	}
	if !recovered {
		t.Fatalf("GET / after MariaDB came back: still %d after 30 s:\n%.600s", last.StatusCode, last)
	}
	if last.Doc(t).Find(`[data-testid=nav-admin]`).Length() != 1 {
		t.Errorf("after recovery the same session should still be the admin")
	}
	if r := c.APICall(http.MethodGet, apiPath, token, ""); r.StatusCode != http.StatusOK {
		t.Errorf("GET %s after recovery: %d", apiPath, r.StatusCode)
	}
	if r := c.Get("/readyz"); r.StatusCode != http.StatusOK {
		t.Errorf("/readyz after recovery: %d: %s", r.StatusCode, r)
	}
}

// privateMariaDB is a throwaway MariaDB in a temporary directory, run by
// scripts/mariadb-ctl.sh the same way testenv.sh runs the shared one.
type privateMariaDB struct {
	script string
	dir    string // parent of the datadir: port, socket, log
	port   string
}

func startPrivateMariaDB(t *testing.T, script string) *privateMariaDB {
	t.Helper()
	// A short path: the socket lives here and unix socket paths are limited
	// to about 100 bytes.
	dir, err := os.MkdirTemp("", "cardhour-outage-")
	if err != nil {
		t.Fatal(err)
	}
	db := &privateMariaDB{script: script, dir: dir}
	t.Cleanup(func() {
		// Always stopped, even when the test failed halfway through an
		// outage; only then is the directory removed.
		if out, err := db.run("stop"); err != nil {
			t.Logf("mariadb-ctl stop: %v\n%s", err, out)
		}
		_ = os.RemoveAll(dir)
	})
	if out, err := db.run("init"); err != nil {
		t.Fatalf("mariadb-ctl init: %v\n%s", err, out)
	}
	// The script picks a free port; another process can take it before
	// mariadbd binds, so try a few like testenv.sh does.
	for try := 1; ; try++ {
		out, err := db.run("start")
		if err == nil {
			break
		}
		if try == 3 {
			t.Fatalf("mariadb-ctl start: %v\n%s", err, out)
		}
		_ = os.Remove(filepath.Join(dir, "port"))
	}
	port, err := os.ReadFile(filepath.Join(dir, "port"))
	if err != nil {
		t.Fatal(err)
	}
	db.port = strings.TrimSpace(string(port))
	return db
}

func (db *privateMariaDB) run(action string) ([]byte, error) {
	cmd := exec.Command(db.script, action)
	cmd.Env = append(os.Environ(), "CARDHOUR_TEST_MARIADB_DIR="+filepath.Join(db.dir, "data"))
	return cmd.CombinedOutput()
}

func (db *privateMariaDB) ctl(t *testing.T, action string) {
	t.Helper()
	if out, err := db.run(action); err != nil {
		t.Fatalf("mariadb-ctl %s: %v\n%s", action, err, out)
	}
}

// createDatabase makes a database and an account that may use only it, as
// an operator would on Tianyi RDS, and returns the go-sql-driver DSN.
func (db *privateMariaDB) createDatabase(t *testing.T, name string) string {
	t.Helper()
	// The fresh instance's root has no password from 127.0.0.1.
	root, err := sql.Open("mysql", fmt.Sprintf("root@tcp(127.0.0.1:%s)/", db.port))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	ctx := context.Background()
	for _, q := range []string{
		"CREATE DATABASE " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci",
		"CREATE USER 'portal'@'127.0.0.1' IDENTIFIED BY 'portal-pw'",
		"GRANT ALL PRIVILEGES ON " + name + ".* TO 'portal'@'127.0.0.1'",
	} {
		if _, err := root.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return fmt.Sprintf("portal:portal-pw@tcp(127.0.0.1:%s)/%s", db.port, name)
}

// freeze stops mariadbd with SIGSTOP — it keeps its connections and port
// but answers nothing, as a database host that hangs (or a network that
// drops packets without a reset) does — and returns the function that
// thaws it. The test's cleanup thaws it too, before the instance is
// stopped: a stopped process would not act on the stop script's SIGTERM.
func (db *privateMariaDB) freeze(t *testing.T) (thaw func()) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(db.dir, "mariadbd.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	thaw = func() {
		once.Do(func() {
			if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
				t.Errorf("SIGCONT mariadbd %d: %v", pid, err)
			}
		})
	}
	t.Cleanup(thaw)
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP mariadbd %d: %v", pid, err)
	}
	return thaw
}

// TestPortalAnswersWithinItsDeadlineWhenMariaDBFreezes is the frozen
// database of issue #15: with mariadbd stopped dead (SIGSTOP), pages and
// the API answer 503 at their deadline (CARDHOUR_REQUEST_TIMEOUT) with a
// message in the viewer's language, instead of hanging for the driver's
// 30 s read timeout; a booking whose client timed out is written whole or
// not at all; the flood of refusals is one log line and a summary per
// interval; and once mariadbd runs again the portal answers as before.
func TestPortalAnswersWithinItsDeadlineWhenMariaDBFreezes(t *testing.T) {
	t.Parallel()
	ctl := os.Getenv("CARDHOUR_TEST_MARIADB_CTL")
	if os.Getenv("CARDHOUR_TEST_MYSQL") == "" || ctl == "" {
		t.Skip("needs MariaDB: CARDHOUR_TEST_MYSQL and CARDHOUR_TEST_MARIADB_CTL are unset; run under scripts/testenv.sh (make test)")
	}
	db := startPrivateMariaDB(t, ctl)
	dsn := db.createDatabase(t, "cardhour_freeze")
	f := servertest.NewFleet(t, servertest.Options{Vars: map[string]string{"CARDHOUR_DB": "mysql://" + dsn, "CARDHOUR_REQUEST_TIMEOUT": "2s"}}, 4, 1000)
	member := f.Token(store.RoleMember)
	c := f.E.Client()
	c.MustLogin(f.E.Users[store.RoleMember].Username, f.E.Users[store.RoleMember].Password)
	if r := c.Get("/"); r.StatusCode != http.StatusOK {
		t.Fatalf("GET / before the freeze: %d", r.StatusCode)
	}
	before, used := f.Counts(), quotaUsed(t, f)

	thaw := db.freeze(t)
	// Each answer is due at the 2 s deadline; 6 s leaves room for a busy
	// machine and is still far from the 30 s the driver would wait.
	timed := func(what string, do func() servertest.Response) servertest.Response {
		t.Helper()
		start := time.Now()
		r := do()
		if took := time.Since(start); took > 6*time.Second {
			t.Errorf("%s with MariaDB frozen answered after %s, want about the 2 s deadline", what, took.Round(time.Millisecond))
		}
		return r
	}
	for _, lang := range []string{web.LangZH, web.LangEN} {
		r := timed("GET / ("+lang+")", func() servertest.Response { return c.Get("/?lang=" + lang) })
		if r.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("GET / (%s) with MariaDB frozen: %d, want 503:\n%.600s", lang, r.StatusCode, r)
		}
		if msg := r.Doc(t).Find(`[data-testid=error-page] [data-testid=error-message]`).Text(); msg != web.T(lang, "error.timeout", 2) {
			t.Errorf("503 page (%s) says %q, want %q", lang, msg, web.T(lang, "error.timeout", 2))
		}
		if r.Header.Get("Retry-After") == "" {
			t.Error("503 without Retry-After")
		}
	}
	servertest.MustAPIError(t, timed("GET /api/v1/card-types", func() servertest.Response {
		return c.APICall(http.MethodGet, "/api/v1/card-types", member, "")
	}), http.StatusServiceUnavailable, "unavailable")
	e := servertest.MustAPIError(t, timed("POST /api/v1/bookings", func() servertest.Response {
		return c.APICall(http.MethodPost, "/api/v1/bookings?lang=en", member, f.BookingBody(f.Normal.ID, "H800", 2, 0, 2))
	}), http.StatusServiceUnavailable, "unavailable")
	if want := web.T(web.LangEN, "error.timeout_write", 2); e.Error.Message != want {
		t.Errorf("booking refused with %q, want %q", e.Error.Message, want)
	}
	if r := c.Get("/healthz"); r.StatusCode != http.StatusOK {
		t.Errorf("/healthz with MariaDB frozen: %d, want 200 (the process is fine)", r.StatusCode)
	}

	// A flood: every request refused, the log says so once and then sums up.
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s := f.E.Client().APICall(http.MethodGet, "/api/v1/card-types", member, "").StatusCode; s != http.StatusServiceUnavailable {
				t.Errorf("request %d of the flood: %d, want 503", i, s)
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(f.E.Logs.String(), "msg=unavailable"); n != 1 {
		t.Errorf("%d refusal lines in the log, want 1 (the rest summed up every 10 s)", n)
	}
	summary := false
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && !summary; time.Sleep(200 * time.Millisecond) {
		summary = strings.Contains(f.E.Logs.String(), " requests refused in the last 10s: ")
	}
	if !summary {
		t.Errorf("no summary of the refusals within 15 s; log:\n%s", f.E.Logs.Tail(2000))
	}

	thaw()
	var last servertest.Response
	recovered := false
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		if last = c.Get("/"); last.StatusCode == http.StatusOK {
			recovered = true
			break
		}
	}
	if !recovered {
		t.Fatalf("GET / after MariaDB thawed: still %d after 30 s:\n%.600s", last.StatusCode, last)
	}
	// The booking whose client timed out: whole or nothing (in practice
	// nothing: its transaction ended with its client's deadline).
	ok := servertest.Decode[servertest.Booking](t, c.APICall(http.MethodPost, "/api/v1/bookings", member, f.BookingBody(f.Normal.ID, "H800", 2, 3, 5)), http.StatusCreated)
	after := f.Counts()
	n := after.Bookings - before.Bookings - 1 // the timed-out one, 0 or 1
	if n < 0 || n > 1 || after.BookingCards-before.BookingCards != 2*(n+1) || quotaUsed(t, f)-used != (n+1)*4*3600 {
		t.Errorf("half a booking: rows %+v → %+v, quota used %d → %d (booking %d)", before, after, used, quotaUsed(t, f), ok.ID)
	}
}
