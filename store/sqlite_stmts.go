package store

import (
	"context"
	"database/sql"
	"sync"

	"gorm.io/gorm"
)

// stmtPool keeps one prepared statement per query text for the SQLite
// database, prepared on the *sql.DB so that database/sql keeps it compiled
// on each connection, and runs every query of a transaction through it.
// gorm's own PrepareStmt prepares a statement met first inside a
// transaction on that transaction, and database/sql then prepares it again
// in every later transaction; with the booking's queries all inside
// transactions that was no cache at all.
type stmtPool struct {
	db    *sql.DB
	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// maxStmts bounds the cache: queries with IN lists of varying length are
// many texts; past the bound they run unprepared.
const maxStmts = 512

func newStmtPool(db *sql.DB) *stmtPool { return &stmtPool{db: db, stmts: map[string]*sql.Stmt{}} }

// prepared returns the query's statement, preparing it on first use; nil
// past the bound or when it does not prepare (the plain call then reports
// the error).
func (p *stmtPool) prepared(ctx context.Context, query string) *sql.Stmt {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.stmts[query]; ok {
		return s
	}
	if len(p.stmts) >= maxStmts {
		return nil
	}
	s, err := p.db.PrepareContext(ctx, query)
	if err != nil {
		return nil
	}
	p.stmts[query] = s
	return s
}

// GetDBConn lets gorm's DB() find the *sql.DB.
func (p *stmtPool) GetDBConn() (*sql.DB, error) { return p.db, nil }

func (p *stmtPool) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return p.db.PrepareContext(ctx, query)
}

func (p *stmtPool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := p.prepared(ctx, query); s != nil {
		return s.ExecContext(ctx, args...)
	}
	return p.db.ExecContext(ctx, query, args...)
}

func (p *stmtPool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := p.prepared(ctx, query); s != nil {
		return s.QueryContext(ctx, args...)
	}
	return p.db.QueryContext(ctx, query, args...)
}

func (p *stmtPool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := p.prepared(ctx, query); s != nil {
		return s.QueryRowContext(ctx, args...)
	}
	return p.db.QueryRowContext(ctx, query, args...)
}

// BeginTx starts a transaction whose queries use the pool's statements.
func (p *stmtPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	tx, err := p.db.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return &stmtTx{Tx: tx, pool: p}, nil
}

// stmtTx is a transaction running the pool's prepared statements.
type stmtTx struct {
	*sql.Tx
	pool *stmtPool
}

func (t *stmtTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if s := t.pool.prepared(ctx, query); s != nil {
		return t.Tx.StmtContext(ctx, s).ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

func (t *stmtTx) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if s := t.pool.prepared(ctx, query); s != nil {
		return t.Tx.StmtContext(ctx, s).QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

func (t *stmtTx) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if s := t.pool.prepared(ctx, query); s != nil {
		return t.Tx.StmtContext(ctx, s).QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}
