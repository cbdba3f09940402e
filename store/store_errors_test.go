package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cardhour/errs"
	"cardhour/store"
	"cardhour/store/storetest"
)

// cause is the coded error the entity-specific one wraps: what translate
// made of the driver's error.
func cause(tb testing.TB, err error) *errs.Error {
	tb.Helper()
	outer, ok := errs.As(err)
	if !ok {
		tb.Fatalf("uncoded error %v", err)
	}
	inner, ok := errs.As(outer.Err)
	if !ok {
		tb.Fatalf("%v wraps no coded error", err)
	}
	return inner
}

// Both drivers' duplicate-key errors become one conflict.
func TestTranslateDuplicateKey(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		MustHost(t, st, "gpu-01")
		_, err := st.CreateHost(asActor(), store.HostInput{Name: "gpu-01"})
		storetest.AssertCode(t, err, errs.Conflict, "host.name_taken")
		if c := cause(t, err); c.Code != errs.Conflict || c.Key != "error.duplicate" {
			t.Errorf("translated driver error = %v, want conflict error.duplicate", c)
		}
	})
}

// Both drivers' foreign-key refusals on delete become one conflict.
func TestTranslateForeignKeyRestrict(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		h := MustHost(t, st, "gpu-01")
		ct := MustCardType(t, st, "H800")
		MustCard(t, st, uuid1, 0, h.ID, ct.ID)
		err := st.DeleteHost(asActor(), h.ID)
		storetest.AssertCode(t, err, errs.Conflict, "host.in_use")
		if c := cause(t, err); c.Code != errs.Conflict || c.Key != "error.in_use" {
			t.Errorf("translated driver error = %v, want conflict error.in_use", c)
		}
		err = st.DeleteCardType(asActor(), ct.ID)
		storetest.AssertCode(t, err, errs.Conflict, "cardtype.in_use")
	})
}

// A closed store answers with errors, never a panic and never "not found".
func TestClosedStore(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx := asActor()
		u := MustUser(t, st, "alice", store.RoleMember)
		if err := st.Close(); err != nil {
			t.Fatal(err)
		}
		calls := map[string]func() error{
			"Ping":             func() error { return st.Ping(ctx) },
			"FindUserByID":     func() error { _, err := st.FindUserByID(ctx, u.ID); return err },
			"FindUsers":        func() error { _, err := st.FindUsers(ctx, store.UserFilter{}); return err },
			"Authenticate":     func() error { _, err := st.Authenticate(ctx, "alice", testPassword); return err },
			"FindSessionUser":  func() error { _, err := st.FindSessionUser(ctx, "chs_x"); return err },
			"FindTokenUser":    func() error { _, _, err := st.FindTokenUser(ctx, "cht_x"); return err },
			"FindCards":        func() error { _, err := st.FindCards(ctx, store.CardFilter{}); return err },
			"FindCardByID":     func() error { _, err := st.FindCardByID(ctx, 1); return err },
			"FindAuditEntries": func() error { _, _, err := st.FindAuditEntries(ctx, store.AuditFilter{}); return err },
			"CreateTeam":       func() error { _, err := st.CreateTeam(ctx, store.TeamInput{Name: "LLM"}); return err },
			"CreateUser": func() error {
				u, err := st.CreateUser(ctx, store.UserCreate{Username: "bob", Password: testPassword})
				if u != nil {
					t.Errorf("CreateUser returned user %+v with error %v", u, err)
				}
				return err
			},
			"UpdateUser":        func() error { _, err := st.UpdateUser(ctx, u.ID, store.UserUpdate{DisplayName: ptr("x")}); return err },
			"CreateSession":     func() error { _, err := st.CreateSession(ctx, u.ID); return err },
			"EnsureAdmin":       func() error { _, err := st.EnsureAdmin(ctx, "pw"); return err },
			"Migrate":           func() error { return st.Migrate(ctx) },
			"MigrationsCurrent": func() error { _, err := st.MigrationsCurrent(ctx); return err },
		}
		for name, call := range calls {
			t.Run(name, func(t *testing.T) {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("panic on a closed store: %v", p)
					}
				}()
				err := call()
				if err == nil {
					t.Fatal("no error from a closed store")
				}
				code := errs.CodeOf(err)
				if code == errs.NotFound || code == errs.Unauthorized {
					t.Errorf("closed store reported %s: %v", code, err)
				}
				t.Logf("%s: %v", code, err)
			})
		}
	})
}

// A cancelled request is the caller going away, not a fault of ours.
func TestCancelledContext(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialect(t, func(t *testing.T, st *store.Store) {
		ctx, cancel := context.WithCancel(asActor())
		cancel()
		_, err := st.FindHosts(ctx)
		storetest.AssertCode(t, err, errs.Unavailable, "")
		_, err = st.CreateHost(ctx, store.HostInput{Name: "gpu-01"})
		storetest.AssertCode(t, err, errs.Unavailable, "")
		if n := storetest.MustCount(t, st, "hosts"); n != 0 {
			t.Errorf("hosts = %d after a cancelled create", n)
		}
	})
}

// Nothing listens on port 1: Open must say the database is unavailable, at
// once, rather than fail as an internal error. No server is needed for this.
func TestOpenMySQLUnreachable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	st, err := store.Open(ctx, store.Options{Dialect: store.MySQL, DSN: "cardhour:cardhour@tcp(127.0.0.1:1)/cardhour"})
	if st != nil {
		_ = st.Close()
		t.Fatal("Open returned a store for an unreachable server")
	}
	storetest.AssertCode(t, err, errs.Unavailable, "error.db_unavailable")
}

func TestOpenRefusesUnknownDialect(t *testing.T) {
	t.Parallel()
	_, err := store.Open(context.Background(), store.Options{Dialect: "postgres", DSN: "x"})
	storetest.AssertCode(t, err, errs.Internal, "")
}

// The SQLite data directory is created when missing.
func TestOpenSQLiteCreatesDataDir(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "a", "b", "cardhour.db")
	st, err := store.Open(context.Background(), store.Options{Dialect: store.SQLite, DSN: path})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database file: %v", err)
	}
	if st.Dialect() != store.SQLite {
		t.Errorf("Dialect = %q", st.Dialect())
	}
}

// Open with the store's own parameters added to an operator's DSN works on
// the real server; the operator's own parameters are kept.
func TestOpenMySQLWithOperatorParameters(t *testing.T) {
	t.Parallel()
	dsn, _ := storetest.MySQLDSN(t)
	base, _, _ := strings.Cut(dsn, "?")
	st, err := store.Open(context.Background(), store.Options{Dialect: store.MySQL, DSN: base + "?timeout=2s"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	// parseTime and UTC were added: a time comes back as time.Time in UTC.
	h := MustHost(t, st, "gpu-01")
	got, err := st.FindHostByID(context.Background(), h.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.CreatedAt.Location() != time.UTC || !got.CreatedAt.Equal(h.CreatedAt) {
		t.Errorf("created_at read back as %v (%v), want %v in UTC", got.CreatedAt, got.CreatedAt.Location(), h.CreatedAt)
	}
}

// Every MySQL connection opens in read committed, which the booking lock
// needs (txOnce), so that no transaction has to ask for it with a round
// trip of its own; an isolation the operator's DSN sets is left to it.
func TestOpenMySQLSessionReadCommitted(t *testing.T) {
	t.Parallel()
	isolation := func(t *testing.T, st *store.Store) string {
		t.Helper()
		// MariaDB before 11.1 knows only tx_isolation, MySQL 8 only
		// transaction_isolation.
		var v string
		if err := st.DB().QueryRow("SELECT @@SESSION.tx_isolation").Scan(&v); err != nil {
			if err := st.DB().QueryRow("SELECT @@SESSION.transaction_isolation").Scan(&v); err != nil {
				t.Fatal(err)
			}
		}
		return v
	}
	st := storetest.MustOpen(t, store.MySQL)
	if got := isolation(t, st); got != "READ-COMMITTED" {
		t.Errorf("a connection's isolation is %s, want READ-COMMITTED", got)
	}
	if !store.SessionReadCommitted(st) {
		t.Error("the store still asks for read committed in every transaction")
	}
	// The ids of a multi-row insert are judged on the pool the store keeps.
	var mode, step int
	if err := st.DB().QueryRow("SELECT @@innodb_autoinc_lock_mode, @@auto_increment_increment").Scan(&mode, &step); err != nil {
		t.Fatal(err)
	}
	if want := mode < 2 && step == 1; st.ConsecutiveIDs() != want {
		t.Errorf("autoinc lock mode %d, step %d: consecutive ids trusted %v, want %v", mode, step, st.ConsecutiveIDs(), want)
	}

	dsn, _ := storetest.MySQLDSN(t)
	name := "tx_isolation"
	var probe string
	if st.DB().QueryRow("SELECT @@transaction_isolation").Scan(&probe) == nil {
		name = "transaction_isolation"
	}
	own, err := store.Open(context.Background(), store.Options{Dialect: store.MySQL, DSN: dsn + "&" + name + "=%27REPEATABLE-READ%27"})
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	if got := isolation(t, own); got != "REPEATABLE-READ" {
		t.Errorf("the DSN's %s=REPEATABLE-READ: a connection has %s", name, got)
	}
	if store.SessionReadCommitted(own) {
		t.Error("with the operator's isolation the store must ask for read committed in every transaction")
	}
}
