// Package storetest opens fresh, migrated stores for tests on every dialect
// cardhour speaks. SQLite always runs; MariaDB runs when CARDHOUR_TEST_MYSQL
// points at a server (make test starts a throwaway one through
// scripts/testenv.sh), and is skipped with a message saying so otherwise.
//
// Every store is private to the test that opened it: a file in the test's
// temp dir, or a database of its own on the server, dropped at cleanup. Tests
// may therefore run in parallel.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // the admin connection that creates and drops test databases

	"cardhour/errs"
	"cardhour/store"
)

// EnvMySQL names the variable holding the MariaDB server for tests, in the
// form cardhour:cardhour@tcp(127.0.0.1:PORT)/ — no database name.
const EnvMySQL = "CARDHOUR_TEST_MYSQL"

// SkipMySQL is the message a MariaDB test skips with when no server is set.
const SkipMySQL = "MariaDB suite skipped: " + EnvMySQL + " is not set (make test starts MariaDB and sets it)"

// EnvGalera names the variable holding a three-node Galera cluster for
// tests: three DSN bases in EnvMySQL's form, comma-separated.
const EnvGalera = "CARDHOUR_TEST_GALERA"

// SkipGalera is the message a Galera test skips with when no cluster is set.
const SkipGalera = "Galera suite skipped: " + EnvGalera + " is not set (make test starts a three-node cluster and sets it)"

// GaleraDSNs creates an empty database on the test cluster and returns a
// DSN for it on each node, once every node has it; the database is dropped
// when tb ends. It skips tb when no cluster is set.
func GaleraDSNs(tb testing.TB) []string {
	tb.Helper()
	env := os.Getenv(EnvGalera)
	if env == "" {
		tb.Skip(SkipGalera)
	}
	bases := strings.Split(env, ",")
	if len(bases) < 2 {
		tb.Fatalf("storetest: %s=%q: want a DSN base per node, comma-separated", EnvGalera, env)
	}
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		tb.Fatalf("storetest: random: %v", err)
	}
	dbName := "ch_galera_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := mustAdmin(tb, bases[0])
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+dbName+"` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
		tb.Fatalf("storetest: create database %s: %v", dbName, err)
	}
	tb.Cleanup(func() {
		admin := mustAdmin(tb, bases[0])
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+dbName+"`"); err != nil {
			tb.Errorf("storetest: drop database %s: %v", dbName, err)
		}
	})
	dsns := make([]string, len(bases))
	for i, base := range bases {
		// The other nodes apply the CREATE DATABASE a moment later.
		db := mustAdmin(tb, base)
		var n int
		for {
			err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = ?", dbName).Scan(&n)
			if err == nil && n == 1 {
				break
			}
			if ctx.Err() != nil {
				tb.Fatalf("storetest: database %s not on node %d: %v", dbName, i+1, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
		_ = db.Close()
		dsns[i] = base + dbName + "?charset=utf8mb4&parseTime=true&loc=UTC"
	}
	return dsns
}

// AllDialects are the dialects ForEachDialect runs, available or not.
var AllDialects = []string{store.SQLite, store.MySQL}

// Dialects returns the dialects this run can test: always SQLite, MySQL when
// CARDHOUR_TEST_MYSQL is set.
func Dialects(tb testing.TB) []string {
	tb.Helper()
	out := []string{store.SQLite}
	if os.Getenv(EnvMySQL) != "" {
		out = append(out, store.MySQL)
	}
	return out
}

// SkipUnlessMySQL skips tb with SkipMySQL when no MariaDB server is set.
func SkipUnlessMySQL(tb testing.TB) {
	tb.Helper()
	if os.Getenv(EnvMySQL) == "" {
		tb.Skip(SkipMySQL)
	}
}

// ForEachDialect runs fn as the subtests "sqlite" and "mysql", each with a
// fresh migrated store; the mysql one is skipped when no server is set.
func ForEachDialect(t *testing.T, fn func(t *testing.T, st *store.Store)) {
	t.Helper()
	ForEachDialectName(t, func(t *testing.T, dialect string) {
		fn(t, MustOpen(t, dialect))
	})
}

// ForEachDialectName runs fn as one subtest per dialect, for tests that open
// their stores themselves (a clock of their own, an unmigrated schema). The
// mysql subtest is skipped when no server is set.
func ForEachDialectName(t *testing.T, fn func(t *testing.T, dialect string)) {
	t.Helper()
	for _, d := range AllDialects {
		t.Run(d, func(t *testing.T) {
			if d == store.MySQL {
				SkipUnlessMySQL(t)
			}
			fn(t, d)
		})
	}
}

// MustOpen returns a fresh migrated store of dialect, closed (and for MySQL
// dropped) when tb ends.
func MustOpen(tb testing.TB, dialect string) *store.Store {
	tb.Helper()
	return MustOpenWith(tb, dialect, store.Options{})
}

// MustOpenWith is MustOpen with options (a clock, a logger); o.Dialect and
// o.DSN are filled in.
func MustOpenWith(tb testing.TB, dialect string, o store.Options) *store.Store {
	tb.Helper()
	st := MustOpenUnmigratedWith(tb, dialect, o)
	if err := st.Migrate(context.Background()); err != nil {
		tb.Fatalf("storetest: migrate %s: %v", dialect, err)
	}
	return st
}

// MustOpenUnmigrated returns a fresh store of dialect with an empty schema.
func MustOpenUnmigrated(tb testing.TB, dialect string) *store.Store {
	tb.Helper()
	return MustOpenUnmigratedWith(tb, dialect, store.Options{})
}

// MustOpenUnmigratedWith is MustOpenUnmigrated with options.
func MustOpenUnmigratedWith(tb testing.TB, dialect string, o store.Options) *store.Store {
	tb.Helper()
	o.Dialect = dialect
	switch dialect {
	case store.SQLite:
		o.DSN = filepath.Join(tb.TempDir(), "cardhour.db")
	case store.MySQL:
		o.DSN, _ = MySQLDSN(tb)
	default:
		tb.Fatalf("storetest: unknown dialect %q", dialect)
	}
	st, err := store.Open(context.Background(), o)
	if err != nil {
		tb.Fatalf("storetest: open %s: %v", dialect, err)
	}
	tb.Cleanup(func() { _ = st.Close() })
	return st
}

// MySQLDSN creates an empty database ch_test_<random> (utf8mb4,
// utf8mb4_unicode_ci) on the test server and returns a DSN for it and its
// name; the database is dropped when tb ends. It skips tb when no server is
// set.
func MySQLDSN(tb testing.TB) (dsn string, dbName string) {
	tb.Helper()
	SkipUnlessMySQL(tb)
	base := os.Getenv(EnvMySQL)
	if !strings.HasSuffix(base, "/") {
		tb.Fatalf("storetest: %s=%q must end in / (no database name)", EnvMySQL, base)
	}
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		tb.Fatalf("storetest: random: %v", err)
	}
	dbName = "ch_test_" + hex.EncodeToString(b)

	admin := mustAdmin(tb, base)
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+dbName+"` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci"); err != nil {
		tb.Fatalf("storetest: create database %s: %v", dbName, err)
	}
	// Registered before the caller's cleanups, so it runs after they have
	// closed their stores.
	tb.Cleanup(func() {
		admin := mustAdmin(tb, base)
		defer admin.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS `"+dbName+"`"); err != nil {
			tb.Errorf("storetest: drop database %s: %v", dbName, err)
		}
	})
	return base + dbName + "?charset=utf8mb4&parseTime=true&loc=UTC", dbName
}

func mustAdmin(tb testing.TB, base string) *sql.DB {
	tb.Helper()
	db, err := sql.Open("mysql", base+"?charset=utf8mb4&timeout=5s")
	if err != nil {
		tb.Fatalf("storetest: %s: %v", EnvMySQL, err)
	}
	db.SetMaxOpenConns(1)
	return db
}

// Clock is a settable clock for store.Options.Now. Its times are whole
// microseconds, the precision MySQL DATETIME(6) keeps, so a time read back
// equals the time written on both dialects.
// It is safe for concurrent use.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts a clock at t, truncated to the microsecond and in UTC.
func NewClock(t time.Time) *Clock { return &Clock{t: t.UTC().Truncate(time.Microsecond)} }

// Now is the clock's time; pass the method value as store.Options.Now.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d).Truncate(time.Microsecond)
}

// AssertCode fails tb unless err carries code and, when key is not empty,
// the message key key.
func AssertCode(tb testing.TB, err error, code errs.Code, key string) *errs.Error {
	tb.Helper()
	if err == nil {
		tb.Fatalf("err = nil, want %s %s", code, key)
	}
	if got := errs.CodeOf(err); got != code {
		tb.Fatalf("code = %q, want %q (err: %v)", got, code, err)
	}
	e, _ := errs.As(err)
	if key != "" && e.Key != key {
		tb.Fatalf("key = %q, want %q (err: %v)", e.Key, key, err)
	}
	return e
}

// AssertNoDoubleBooking fails when any card is held by two bookings whose
// windows overlap: the rule the booking code exists to keep.
func AssertNoDoubleBooking(tb testing.TB, st *store.Store) {
	tb.Helper()
	var overlaps int64
	q := `SELECT COUNT(*) FROM booking_cards a JOIN booking_cards b ON a.card_id = b.card_id AND a.id < b.id
	      AND a.held = 1 AND b.held = 1 AND a.start_at < b.end_at AND b.start_at < a.end_at`
	if err := st.DB().QueryRow(q).Scan(&overlaps); err != nil {
		tb.Fatal(err)
	}
	if overlaps != 0 {
		tb.Errorf("%d overlapping card assignments in the database", overlaps)
	}
}

var tableName = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// MustCount returns the number of rows in table.
func MustCount(tb testing.TB, st *store.Store, table string) int64 {
	tb.Helper()
	if !tableName.MatchString(table) {
		tb.Fatalf("storetest: bad table name %q", table)
	}
	var n int64
	if err := st.DB().QueryRowContext(context.Background(), "SELECT COUNT(*) FROM "+table).Scan(&n); err != nil {
		tb.Fatalf("storetest: count %s: %v", table, err)
	}
	return n
}

// MustTables lists the application's tables, sorted, without goose's
// version table and SQLite's internal ones.
func MustTables(tb testing.TB, st *store.Store) []string {
	tb.Helper()
	var q string
	switch st.Dialect() {
	case store.SQLite:
		q = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'goose_db_version' ORDER BY name"
	case store.MySQL:
		q = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE' AND table_name <> 'goose_db_version' ORDER BY table_name"
	default:
		tb.Fatalf("storetest: unknown dialect %q", st.Dialect())
	}
	rows, err := st.DB().QueryContext(context.Background(), q)
	if err != nil {
		tb.Fatalf("storetest: list tables: %v", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			tb.Fatalf("storetest: list tables: %v", err)
		}
		out = append(out, name)
	}
	if err := rows.Err(); err != nil {
		tb.Fatalf("storetest: list tables: %v", err)
	}
	return out
}

// MustCounts returns the row count of every application table, so a test
// can show that a refused change wrote nothing anywhere.
func MustCounts(tb testing.TB, st *store.Store) map[string]int64 {
	tb.Helper()
	out := map[string]int64{}
	for _, t := range MustTables(tb, st) {
		out[t] = MustCount(tb, st, t)
	}
	return out
}

// AssertUnchanged fails tb when any table's row count differs from before.
func AssertUnchanged(tb testing.TB, st *store.Store, before map[string]int64) {
	tb.Helper()
	after := MustCounts(tb, st)
	for t, n := range after {
		if before[t] != n {
			tb.Errorf("table %s: %d rows, want %d (a refused change wrote something)", t, n, before[t])
		}
	}
	if len(after) != len(before) {
		tb.Errorf("tables changed: %v -> %v", keys(before), keys(after))
	}
}

func keys(m map[string]int64) []string { return slices.Sorted(maps.Keys(m)) }
