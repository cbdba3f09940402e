package store

import (
	"context"
	"database/sql"
	"strconv"

	"gorm.io/gorm"
	"gorm.io/gorm/callbacks"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"
	"gorm.io/gorm/migrator"
	"gorm.io/gorm/schema"

	// The pure-Go SQLite driver. Since v1.62 it keeps a prepared statement
	// compiled between executions, so with gorm's statement cache a
	// booking no longer parses and plans its SQL every time (it was a
	// quarter of the server's time).
	_ "modernc.org/sqlite"
)

// sqliteDialector is gorm's SQLite dialect over modernc.org/sqlite, after
// github.com/glebarez/sqlite (MIT), which wraps a fork of the same driver
// that prepares every statement on every execution. The schema comes from
// the migrations, so gorm's migrator is the plain one.
type sqliteDialector struct{ dsn string }

func (sqliteDialector) Name() string { return "sqlite" }

func (d sqliteDialector) Initialize(db *gorm.DB) error {
	conn, err := sql.Open("sqlite", d.dsn)
	if err != nil {
		return err
	}
	// Queries go through prepared statements the driver keeps compiled
	// (sqlite_stmts.go).
	db.ConnPool = newStmtPool(conn)
	var version string
	if err := conn.QueryRowContext(context.Background(), "select sqlite_version()").Scan(&version); err != nil {
		return err
	}
	callbacks.RegisterDefaultCallbacks(db, &callbacks.Config{
		CreateClauses:        []string{"INSERT", "VALUES", "ON CONFLICT", "RETURNING"},
		UpdateClauses:        []string{"UPDATE", "SET", "FROM", "WHERE", "RETURNING"},
		DeleteClauses:        []string{"DELETE", "FROM", "WHERE", "RETURNING"},
		LastInsertIDReversed: true,
	})
	for k, v := range d.clauseBuilders() {
		db.ClauseBuilders[k] = v
	}
	return nil
}

func (sqliteDialector) clauseBuilders() map[string]clause.ClauseBuilder {
	return map[string]clause.ClauseBuilder{
		"INSERT": func(c clause.Clause, builder clause.Builder) {
			if insert, ok := c.Expression.(clause.Insert); ok {
				if stmt, ok := builder.(*gorm.Statement); ok {
					stmt.WriteString("INSERT ")
					if insert.Modifier != "" {
						stmt.WriteString(insert.Modifier)
						stmt.WriteByte(' ')
					}
					stmt.WriteString("INTO ")
					if insert.Table.Name == "" {
						stmt.WriteQuoted(stmt.Table)
					} else {
						stmt.WriteQuoted(insert.Table)
					}
					return
				}
			}
			c.Build(builder)
		},
		"LIMIT": func(c clause.Clause, builder clause.Builder) {
			if limit, ok := c.Expression.(clause.Limit); ok {
				lmt := -1
				if limit.Limit != nil && *limit.Limit >= 0 {
					lmt = *limit.Limit
				}
				if lmt >= 0 || limit.Offset > 0 {
					builder.WriteString("LIMIT ")
					builder.WriteString(strconv.Itoa(lmt))
				}
				if limit.Offset > 0 {
					builder.WriteString(" OFFSET ")
					builder.WriteString(strconv.Itoa(limit.Offset))
				}
			}
		},
		"FOR": func(c clause.Clause, builder clause.Builder) {
			if _, ok := c.Expression.(clause.Locking); ok {
				return // SQLite has no row locks; one writer at a time instead
			}
			c.Build(builder)
		},
	}
}

func (sqliteDialector) DefaultValueOf(field *schema.Field) clause.Expression {
	if field.AutoIncrement {
		return clause.Expr{SQL: "NULL"}
	}
	return clause.Expr{SQL: "DEFAULT"}
}

func (d sqliteDialector) Migrator(db *gorm.DB) gorm.Migrator {
	return migrator.Migrator{Config: migrator.Config{DB: db, Dialector: d, CreateIndexAfterCreateTable: true}}
}

func (sqliteDialector) BindVarTo(writer clause.Writer, _ *gorm.Statement, _ any) {
	writer.WriteByte('?')
}

// QuoteTo quotes identifiers with backticks, table.column part by part.
func (sqliteDialector) QuoteTo(writer clause.Writer, str string) {
	writer.WriteByte('`')
	for i := 0; i < len(str); i++ {
		switch c := str[i]; c {
		case '`':
			writer.WriteString("``")
		case '.':
			writer.WriteString("`.`")
		default:
			writer.WriteByte(c)
		}
	}
	writer.WriteByte('`')
}

func (sqliteDialector) Explain(sql string, vars ...any) string {
	return logger.ExplainSQL(sql, nil, `"`, vars...)
}

func (sqliteDialector) DataTypeOf(field *schema.Field) string {
	switch field.DataType {
	case schema.Bool:
		return "numeric"
	case schema.Int, schema.Uint:
		return "integer"
	case schema.Float:
		return "real"
	case schema.String:
		return "text"
	case schema.Time:
		return "datetime"
	case schema.Bytes:
		return "blob"
	}
	return string(field.DataType)
}

func (sqliteDialector) SavePoint(tx *gorm.DB, name string) error {
	return tx.Exec("SAVEPOINT " + name).Error
}

func (sqliteDialector) RollbackTo(tx *gorm.DB, name string) error {
	return tx.Exec("ROLLBACK TO SAVEPOINT " + name).Error
}
