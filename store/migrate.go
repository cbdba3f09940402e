package store

import (
	"context"
	"database/sql"
	"fmt"

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

// Migrate applies every pending migration. On MySQL, processes starting
// together (several portals, or `cardhour token` beside a starting server)
// take turns through a named lock: goose reads the applied versions and
// then applies the rest, and two doing that at once would both try the
// same migration.
func (s *Store) Migrate(ctx context.Context) error {
	const op = "store.Migrate"
	p, err := s.provider()
	if err != nil {
		return err
	}
	if s.dialect == MySQL {
		conn, err := s.sqlDB.Conn(ctx)
		if err != nil {
			return translate(op, err)
		}
		defer conn.Close()
		var got sql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK('cardhour.migrate', 120)").Scan(&got); err != nil {
			return translate(op, err)
		}
		if got.Int64 != 1 {
			return errs.Internalf(op, "another process held the migration lock for two minutes")
		}
		defer func() { _, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT RELEASE_LOCK('cardhour.migrate')") }()
	}
	if _, err := p.Up(ctx); err != nil {
		return translate(op, fmt.Errorf("migrate up: %w", err))
	}
	return nil
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
