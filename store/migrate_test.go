package store_test

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"testing"

	"cardhour/migrations"
	"cardhour/store"
	"cardhour/store/storetest"
)

// migrationFiles counts the migrations shipped for dialect.
func migrationFiles(tb testing.TB, dialect string) int {
	tb.Helper()
	fsys, err := migrations.For(dialect)
	if err != nil {
		tb.Fatal(err)
	}
	files, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		tb.Fatal(err)
	}
	if len(files) == 0 {
		tb.Fatalf("no migrations for %s", dialect)
	}
	return len(files)
}

func assertMigrationState(tb testing.TB, st *store.Store, wantApplied bool) {
	tb.Helper()
	ctx := context.Background()
	status, err := st.MigrationStatus(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if want := migrationFiles(tb, st.Dialect()); len(status) != want {
		tb.Errorf("status lists %d migrations, want %d", len(status), want)
	}
	for i, m := range status {
		if m.Applied != wantApplied {
			tb.Errorf("migration %d (%s) applied = %v, want %v", m.Version, m.Name, m.Applied, wantApplied)
		}
		if i > 0 && m.Version <= status[i-1].Version {
			tb.Errorf("status not in version order: %d after %d", m.Version, status[i-1].Version)
		}
	}
	current, err := st.MigrationsCurrent(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	if current != wantApplied {
		tb.Errorf("MigrationsCurrent = %v, want %v", current, wantApplied)
	}
}

// Up, Down all the way, Up again: every Down undoes its Up completely, with
// rows and foreign keys in place, on both dialects.
func TestMigrationsUpDownUp(t *testing.T) {
	t.Parallel()
	storetest.ForEachDialectName(t, func(t *testing.T, dialect string) {
		ctx := context.Background()
		st := storetest.MustOpenUnmigrated(t, dialect)
		assertMigrationState(t, st, false)
		if tables := storetest.MustTables(t, st); len(tables) != 0 {
			t.Fatalf("fresh database has tables %v", tables)
		}

		if err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		assertMigrationState(t, st, true)
		first := storetest.MustTables(t, st)
		for _, want := range []string{"users", "teams", "memberships", "sessions", "api_tokens", "audit_log", "card_types", "hosts", "cards", "images"} {
			if !slices.Contains(first, want) {
				t.Errorf("after Up there is no table %s (have %v)", want, first)
			}
		}
		// Rows referencing each other, so Down has to drop in the right order.
		fillAccountsAndInventory(t, st)

		if err := st.MigrateDownAll(ctx); err != nil {
			t.Fatal(err)
		}
		assertMigrationState(t, st, false)
		if tables := storetest.MustTables(t, st); len(tables) != 0 {
			t.Errorf("after Down all, tables left: %v", tables)
		}

		if err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		assertMigrationState(t, st, true)
		if again := storetest.MustTables(t, st); !slices.Equal(again, first) {
			t.Errorf("tables after Up/Down/Up = %v, want %v", again, first)
		}
		for table, n := range storetest.MustCounts(t, st) {
			if n != 0 {
				t.Errorf("table %s has %d rows after Down and Up", table, n)
			}
		}
		fillAccountsAndInventory(t, st)

		// Migrate on a current schema changes nothing.
		if err := st.Migrate(ctx); err != nil {
			t.Errorf("second Migrate: %v", err)
		}
		assertMigrationState(t, st, true)
	})
}

func fillAccountsAndInventory(tb testing.TB, st *store.Store) {
	tb.Helper()
	ctx := asActor()
	u := MustUser(tb, st, "alice", store.RoleAdmin)
	team := MustTeam(tb, st, "LLM")
	if _, err := st.SetMembership(ctx, team.ID, u.ID, store.TeamRoleManager); err != nil {
		tb.Fatal(err)
	}
	if _, err := st.CreateSession(ctx, u.ID); err != nil {
		tb.Fatal(err)
	}
	if _, _, err := st.CreateAPIToken(ctx, u.ID, "ci", store.TokenUser); err != nil {
		tb.Fatal(err)
	}
	h := MustHost(tb, st, "gpu-01")
	ct := MustCardType(tb, st, "H800")
	MustCard(tb, st, uuid1, 0, h.ID, ct.ID)
	if _, err := st.CreateImage(ctx, store.ImageInput{Name: "vllm", Reference: "r/vllm:0.6"}); err != nil {
		tb.Fatal(err)
	}
}

// TestConcurrentMigrationsTakeTurns starts several processes' stores on one
// empty database at once, as a deployment of several portals does: every
// one must come up with the schema current, none failing on a migration
// another applied meanwhile.
func TestConcurrentMigrationsTakeTurns(t *testing.T) {
	storetest.SkipUnlessMySQL(t)
	dsn, _ := storetest.MySQLDSN(t)
	const processes = 4
	errsCh := make(chan error, processes)
	for i := 0; i < processes; i++ {
		go func() {
			st, err := store.Open(context.Background(), store.Options{Dialect: store.MySQL, DSN: dsn})
			if err != nil {
				errsCh <- err
				return
			}
			defer st.Close()
			if err := st.Migrate(context.Background()); err != nil {
				errsCh <- err
				return
			}
			current, err := st.MigrationsCurrent(context.Background())
			if err == nil && !current {
				err = fmt.Errorf("migrated, but the schema is not current")
			}
			errsCh <- err
		}()
	}
	for i := 0; i < processes; i++ {
		if err := <-errsCh; err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}
}
