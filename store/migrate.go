package store

import (
	"context"
	"fmt"
	"time"

	"github.com/pressly/goose/v3"

	"cardhour/errs"
	"cardhour/migrations"
)

// MigrationState is one migration's version and whether it is applied.
type MigrationState struct {
	Version int64
	Name    string
	Applied bool
}

func (s *Store) provider() (*goose.Provider, error) {
	fsys, err := migrations.For(s.dialect)
	if err != nil {
		return nil, errs.Internalf("store.migrations", "migrations for %s: %w", s.dialect, err)
	}
	dialect := goose.DialectSQLite3
	if s.dialect == MySQL {
		dialect = goose.DialectMySQL
	}
	p, err := goose.NewProvider(dialect, s.sqlDB, fsys)
	if err != nil {
		return nil, errs.Internalf("store.migrations", "goose: %w", err)
	}
	return p, nil
}

// createLeasesMySQL is migration 00013's leases table, created before the
// first migration so that Migrate can take its turn through a lease.
const createLeasesMySQL = `CREATE TABLE IF NOT EXISTS leases (
  name VARCHAR(64) NOT NULL,
  holder VARCHAR(191) NOT NULL,
  expires_at DATETIME(6) NOT NULL,
  renewed_at DATETIME(6) NOT NULL,
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`

// Migration turns: the "migrate" lease is held this long from each renewal,
// renewed this often while migrating, and waited for at most so long.
const (
	migrateLeaseTTL   = time.Minute
	migrateLeaseRenew = 15 * time.Second
	migrateWait       = 5 * time.Minute
)

// Migrate applies every pending migration. On MySQL, processes starting
// together (several portals, or `cardhour token` beside a starting server)
// take turns through the "migrate" lease: goose reads the applied versions
// and then applies the rest, and two doing that at once would both try the
// same migration. A lease row rather than GET_LOCK, which is local to one
// node of a Galera cluster.
func (s *Store) Migrate(ctx context.Context) error {
	_, err := s.migrate(ctx, nil)
	return err
}

// migrate is Migrate, reporting how many migrations it applied; turn, when
// set, is told when this process's turn begins (true) and ends (false), for
// the tests that the turns do not overlap.
func (s *Store) migrate(ctx context.Context, turn func(begin bool)) (applied int, err error) {
	const op = "store.Migrate"
	p, err := s.provider()
	if err != nil {
		return 0, err
	}
	if s.dialect == MySQL {
		release, err := s.takeMigrateTurn(ctx)
		if err != nil {
			return 0, err
		}
		defer release()
	}
	if turn != nil {
		turn(true)
		defer turn(false) // before release: deferred calls run last first
	}
	res, err := p.Up(ctx)
	if err != nil {
		return len(res), translate(op, fmt.Errorf("migrate up: %w", err))
	}
	return len(res), nil
}

// takeMigrateTurn waits for the "migrate" lease and keeps it renewed until
// release is called.
func (s *Store) takeMigrateTurn(ctx context.Context) (release func(), err error) {
	const op = "store.Migrate"
	if _, err := s.sqlDB.ExecContext(ctx, createLeasesMySQL); err != nil {
		return nil, translate(op, fmt.Errorf("create leases: %w", err))
	}
	holder := NewHolder()
	deadline := time.Now().Add(migrateWait)
	for {
		held, err := s.TakeLease(ctx, "migrate", holder, migrateLeaseTTL)
		if err != nil {
			return nil, err
		}
		if held {
			break
		}
		if time.Now().After(deadline) {
			return nil, errs.Internalf(op, "another process held the migration lease for %s", migrateWait)
		}
		select {
		case <-ctx.Done():
			return nil, translate(op, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(migrateLeaseRenew)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if _, err := s.TakeLease(ctx, "migrate", holder, migrateLeaseTTL); err != nil {
					s.log.Warn("migration lease not renewed", "err", err)
				}
			}
		}
	}()
	return func() {
		close(stop)
		<-done
		_ = s.ReleaseLease(context.WithoutCancel(ctx), "migrate", holder)
	}, nil
}

// MigrateDownAll rolls every migration back; tests use it to prove Down works.
func (s *Store) MigrateDownAll(ctx context.Context) error {
	p, err := s.provider()
	if err != nil {
		return err
	}
	if _, err := p.DownTo(ctx, 0); err != nil {
		return translate("store.MigrateDownAll", fmt.Errorf("migrate down: %w", err))
	}
	return nil
}

// MigrationStatus lists every known migration.
func (s *Store) MigrationStatus(ctx context.Context) ([]MigrationState, error) {
	p, err := s.provider()
	if err != nil {
		return nil, err
	}
	st, err := p.Status(ctx)
	if err != nil {
		return nil, translate("store.MigrationStatus", fmt.Errorf("migration status: %w", err))
	}
	out := make([]MigrationState, 0, len(st))
	for _, m := range st {
		out = append(out, MigrationState{Version: m.Source.Version, Name: m.Source.Path, Applied: m.State == goose.StateApplied})
	}
	return out, nil
}

// MigrationsCurrent is true when nothing is pending; /readyz asks it.
func (s *Store) MigrationsCurrent(ctx context.Context) (bool, error) {
	p, err := s.provider()
	if err != nil {
		return false, err
	}
	pending, err := p.HasPending(ctx)
	if err != nil {
		return false, translate("store.MigrationsCurrent", err)
	}
	return !pending, nil
}
