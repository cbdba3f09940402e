package dataset

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"cardhour/store"
)

// openBulk takes one connection of st's database for the bulk inserts;
// done gives it back.
func openBulk(ctx context.Context, st *store.Store) (ins *bulkInserter, done func(), err error) {
	conn, err := st.DB().Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	done = func() { _ = conn.Close() }
	if st.Dialect() == store.SQLite {
		// The indexes of 4.4 M hour rows outgrow SQLite's default page cache
		// (2 MB) and every insert would then reread pages: give this
		// connection room for them while it loads, and take it back after.
		if _, err := conn.ExecContext(ctx, "PRAGMA cache_size = -524288"); err != nil {
			done()
			return nil, nil, err
		}
		done = func() {
			_, _ = conn.ExecContext(context.WithoutCancel(ctx), "PRAGMA cache_size = -2000")
			_ = conn.Close()
		}
	}
	return &bulkInserter{ctx: ctx, conn: conn, mysql: st.Dialect() == store.MySQL}, done, nil
}

// bulkInserter writes rows of one table as multi-row INSERTs on one
// connection, committing every few tens of thousands of rows: far faster
// than a statement or a transaction per row, and bounded in memory. MySQL's
// driver interpolates the arguments; for SQLite the rows are written as
// literals (see sqlLiteral).
type bulkInserter struct {
	ctx   context.Context
	conn  *sql.Conn
	mysql bool
	table string
	cols  []string
	args  []any
	text  strings.Builder // SQLite: the rows as literals
	rows  int
	inTx  int
	tx    *sql.Tx
}

// bulkCommit is how many rows one transaction writes.
const bulkCommit = 40_000

// batchRows is how many rows one statement inserts.
const batchRows = 500

// sqlLiteral writes a value the generator made (numbers, times, its own
// strings) as an SQLite literal, formatted as the driver would bind it.
// SQLite's pure-Go driver looks each bound parameter up among all of a
// statement's arguments, so binding costs the square of a statement's
// parameters; literals cost only their parsing.
func sqlLiteral(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "NULL", nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", fmt.Errorf("no literal for %v", x)
		}
		return strconv.FormatFloat(x, 'g', -1, 64), nil
	case bool:
		if x {
			return "1", nil
		}
		return "0", nil
	case string:
		return "'" + strings.ReplaceAll(x, "'", "''") + "'", nil
	case time.Time:
		return "'" + x.UTC().Format("2006-01-02 15:04:05.999999999-07:00") + "'", nil
	}
	return "", fmt.Errorf("no literal for %T", v)
}

func (b *bulkInserter) begin(table string, cols []string) error {
	b.table, b.cols, b.args, b.rows = table, cols, b.args[:0], 0
	b.text.Reset()
	return nil
}

func (b *bulkInserter) add(vals ...any) error {
	if len(vals) != len(b.cols) {
		return fmt.Errorf("bulk insert into %s: %d values for %d columns", b.table, len(vals), len(b.cols))
	}
	if b.mysql {
		for i, v := range vals {
			if t, ok := v.(time.Time); ok {
				vals[i] = t.UTC()
			}
		}
		b.args = append(b.args, vals...)
	} else {
		if b.rows > 0 {
			b.text.WriteByte(',')
		}
		b.text.WriteByte('(')
		for i, v := range vals {
			lit, err := sqlLiteral(v)
			if err != nil {
				return fmt.Errorf("bulk insert into %s: %w", b.table, err)
			}
			if i > 0 {
				b.text.WriteByte(',')
			}
			b.text.WriteString(lit)
		}
		b.text.WriteByte(')')
	}
	b.rows++
	if b.rows >= batchRows {
		return b.flush()
	}
	return nil
}

func (b *bulkInserter) flush() error {
	if b.rows == 0 {
		return nil
	}
	if b.tx == nil {
		tx, err := b.conn.BeginTx(b.ctx, nil)
		if err != nil {
			return err
		}
		b.tx = tx
	}
	head := "INSERT INTO " + b.table + " (" + strings.Join(b.cols, ", ") + ") VALUES "
	var err error
	if b.mysql {
		ph := "(" + strings.TrimSuffix(strings.Repeat("?,", len(b.cols)), ",") + ")"
		_, err = b.tx.ExecContext(b.ctx, head+strings.TrimSuffix(strings.Repeat(ph+",", b.rows), ","), b.args...)
	} else {
		_, err = b.tx.ExecContext(b.ctx, head+b.text.String())
	}
	if err != nil {
		_ = b.tx.Rollback()
		b.tx = nil
		return fmt.Errorf("bulk insert into %s: %w", b.table, err)
	}
	b.inTx += b.rows
	b.args, b.rows = b.args[:0], 0
	b.text.Reset()
	if b.inTx >= bulkCommit {
		return b.commit()
	}
	return nil
}

func (b *bulkInserter) commit() error {
	if b.tx == nil {
		return nil
	}
	err := b.tx.Commit()
	b.tx, b.inTx = nil, 0
	return err
}

// end writes what is left and commits.
func (b *bulkInserter) end() error {
	if err := b.flush(); err != nil {
		return err
	}
	return b.commit()
}
