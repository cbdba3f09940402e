package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"cardhour/store"
	"cardhour/store/storetest"
)

// column is what the two dialects must agree on for one column.
type column struct {
	Name     string
	Class    string // integer, text, datetime, float
	Nullable bool
	Default  string // normalised; "" also when there is none
	HasDflt  bool
}

// index is a secondary index: its columns, uniqueness and, for the text
// columns of a unique index, whether they compare case-insensitively.
type index struct {
	Name    string
	Unique  bool
	Columns string // "team_id,user_id"; text columns carry /ci or /cs when unique
}

// foreignKey is one referencing column.
type foreignKey struct {
	Column, RefTable, RefColumn, OnDelete string
}

type tableSchema struct {
	Columns []column
	Indexes []index
	FKs     []foreignKey
}

// The migrations of both dialects must build the same schema: the same tables,
// per table the same columns in the same order with the same nullability,
// type class and default, the same secondary indexes (with the same
// case-sensitivity for unique text columns) and the same foreign keys.
func TestSchemaParity(t *testing.T) {
	t.Parallel()
	storetest.SkipUnlessMySQL(t)
	lite := readSchema(t, storetest.MustOpen(t, store.SQLite))
	my := readSchema(t, storetest.MustOpen(t, store.MySQL))

	liteTables, myTables := slices.Sorted(maps.Keys(lite)), slices.Sorted(maps.Keys(my))
	if !slices.Equal(liteTables, myTables) {
		t.Errorf("tables differ:\n  sqlite: %v\n  mysql:  %v", liteTables, myTables)
	}
	for _, name := range liteTables {
		l := lite[name]
		m, ok := my[name]
		if !ok {
			continue
		}
		t.Run(name, func(t *testing.T) {
			if ln, mn := columnNames(l.Columns), columnNames(m.Columns); !slices.Equal(ln, mn) {
				t.Errorf("columns differ:\n  sqlite: %v\n  mysql:  %v", ln, mn)
			}
			for i := range min(len(l.Columns), len(m.Columns)) {
				if l.Columns[i] != m.Columns[i] {
					t.Errorf("column %d differs:\n  sqlite: %+v\n  mysql:  %+v", i, l.Columns[i], m.Columns[i])
				}
			}
			if !slices.Equal(l.Indexes, m.Indexes) {
				t.Errorf("indexes differ:\n  sqlite: %+v\n  mysql:  %+v", l.Indexes, m.Indexes)
			}
			if !slices.Equal(l.FKs, m.FKs) {
				t.Errorf("foreign keys differ:\n  sqlite: %+v\n  mysql:  %+v", l.FKs, m.FKs)
			}
		})
	}
}

// The reader must see something on SQLite alone too, so a broken reader does
// not pass the parity test by finding nothing on either side.
func TestSchemaReaderSQLite(t *testing.T) {
	t.Parallel()
	s := readSchema(t, storetest.MustOpen(t, store.SQLite))
	users, ok := s["users"]
	if !ok {
		t.Fatalf("no users table in %v", slices.Sorted(maps.Keys(s)))
	}
	if got := columnNames(users.Columns); len(got) < 5 || got[0] != "id" || got[1] != "username" {
		t.Errorf("users columns = %v", got)
	}
	if users.Columns[0].Nullable || users.Columns[0].Class != "integer" {
		t.Errorf("users.id = %+v, want a non-null integer", users.Columns[0])
	}
	if !slices.Contains(users.Indexes, index{Name: "uq_users_username", Unique: true, Columns: "username/ci"}) {
		t.Errorf("users indexes = %+v", users.Indexes)
	}
	if !slices.Contains(s["cards"].FKs, foreignKey{"host_id", "hosts", "id", "RESTRICT"}) {
		t.Errorf("cards foreign keys = %+v", s["cards"].FKs)
	}
}

func columnNames(cs []column) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name)
	}
	return out
}

func readSchema(tb testing.TB, st *store.Store) map[string]tableSchema {
	tb.Helper()
	out := map[string]tableSchema{}
	for _, t := range storetest.MustTables(tb, st) {
		switch st.Dialect() {
		case store.SQLite:
			out[t] = sqliteTable(tb, st.DB(), t)
		case store.MySQL:
			out[t] = mysqlTable(tb, st.DB(), t)
		}
	}
	return out
}

// typeClass maps a declared (SQLite) or data (MySQL) type to a coarse class.
func typeClass(tb testing.TB, typ string) string {
	tb.Helper()
	t := strings.ToLower(typ)
	if i := strings.IndexByte(t, '('); i >= 0 {
		t = t[:i]
	}
	switch strings.TrimSpace(t) {
	case "integer", "int", "bigint", "smallint", "tinyint", "mediumint":
		return "integer"
	case "text", "varchar", "char", "tinytext", "mediumtext", "longtext":
		return "text"
	case "datetime", "timestamp":
		return "datetime"
	case "real", "double", "float":
		return "float"
	}
	tb.Errorf("unknown column type %q: add it to typeClass", typ)
	return "?" + typ
}

var quoted = regexp.MustCompile(`^'(.*)'$`)

func normDefault(v sql.NullString) (string, bool) {
	if !v.Valid || strings.EqualFold(v.String, "NULL") {
		return "", false
	}
	s := v.String
	if m := quoted.FindStringSubmatch(s); m != nil {
		s = m[1]
	}
	return s, true
}

func normOnDelete(rule string) string {
	r := strings.ToUpper(rule)
	// Both refuse the delete while children exist; SQLite checks at the end
	// of the statement, InnoDB at once, which no single delete can tell apart.
	if r == "NO ACTION" {
		return "RESTRICT"
	}
	return r
}

func query(tb testing.TB, db *sql.DB, q string, args []any, scan func(*sql.Rows) error) {
	tb.Helper()
	rows, err := db.QueryContext(context.Background(), q, args...)
	if err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			tb.Fatalf("%s: %v", q, err)
		}
	}
	if err := rows.Err(); err != nil {
		tb.Fatalf("%s: %v", q, err)
	}
}

func sqliteTable(tb testing.TB, db *sql.DB, table string) tableSchema {
	tb.Helper()
	var ts tableSchema
	text := map[string]bool{}
	query(tb, db, fmt.Sprintf("PRAGMA table_info(%q)", table), nil, func(r *sql.Rows) error {
		var (
			cid, notNull, pk int
			name, typ        string
			dflt             sql.NullString
		)
		if err := r.Scan(&cid, &name, &typ, &notNull, &dflt, &pk); err != nil {
			return err
		}
		c := column{Name: name, Class: typeClass(tb, typ), Nullable: notNull == 0 && pk == 0}
		// SQLite reports an INTEGER PRIMARY KEY as nullable; it never is.
		c.Default, c.HasDflt = normDefault(dflt)
		text[name] = c.Class == "text"
		ts.Columns = append(ts.Columns, c)
		return nil
	})

	type idx struct {
		name   string
		unique bool
		origin string
	}
	var idxs []idx
	query(tb, db, fmt.Sprintf("PRAGMA index_list(%q)", table), nil, func(r *sql.Rows) error {
		var (
			seq, unique, partial int
			name, origin         string
		)
		if err := r.Scan(&seq, &name, &unique, &origin, &partial); err != nil {
			return err
		}
		idxs = append(idxs, idx{name, unique == 1, origin})
		return nil
	})
	for _, x := range idxs {
		if x.origin == "pk" {
			continue
		}
		var cols []string
		query(tb, db, fmt.Sprintf("PRAGMA index_xinfo(%q)", x.name), nil, func(r *sql.Rows) error {
			var (
				seqno, cid, desc, key int
				name                  sql.NullString
				coll                  string
			)
			if err := r.Scan(&seqno, &cid, &name, &desc, &coll, &key); err != nil {
				return err
			}
			if key == 0 {
				return nil // the rowid every SQLite index carries
			}
			c := name.String
			if x.unique && text[c] {
				c += caseClass(coll)
			}
			cols = append(cols, c)
			return nil
		})
		ts.Indexes = append(ts.Indexes, index{Name: x.name, Unique: x.unique, Columns: strings.Join(cols, ",")})
	}
	sortIndexes(ts.Indexes)

	query(tb, db, fmt.Sprintf("PRAGMA foreign_key_list(%q)", table), nil, func(r *sql.Rows) error {
		var (
			id, seq                                       int
			refTable, from, onUpdate, onDelete, matchRule string
			to                                            sql.NullString
		)
		if err := r.Scan(&id, &seq, &refTable, &from, &to, &onUpdate, &onDelete, &matchRule); err != nil {
			return err
		}
		ts.FKs = append(ts.FKs, foreignKey{from, refTable, to.String, normOnDelete(onDelete)})
		return nil
	})
	sortFKs(ts.FKs)
	return ts
}

func mysqlTable(tb testing.TB, db *sql.DB, table string) tableSchema {
	tb.Helper()
	var ts tableSchema
	coll := map[string]string{}
	query(tb, db, `SELECT column_name, data_type, is_nullable, column_default, COALESCE(collation_name, '')
		FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position`,
		[]any{table}, func(r *sql.Rows) error {
			var (
				name, typ, nullable, collation string
				dflt                           sql.NullString
			)
			if err := r.Scan(&name, &typ, &nullable, &dflt, &collation); err != nil {
				return err
			}
			c := column{Name: name, Class: typeClass(tb, typ), Nullable: nullable == "YES"}
			c.Default, c.HasDflt = normDefault(dflt)
			if c.Class == "text" {
				coll[name] = collation
			}
			ts.Columns = append(ts.Columns, c)
			return nil
		})

	byName := map[string]*index{}
	var order []string
	query(tb, db, `SELECT index_name, non_unique, column_name FROM information_schema.statistics
		WHERE table_schema = DATABASE() AND table_name = ? AND index_name <> 'PRIMARY' ORDER BY index_name, seq_in_index`,
		[]any{table}, func(r *sql.Rows) error {
			var (
				name, col string
				nonUnique int
			)
			if err := r.Scan(&name, &nonUnique, &col); err != nil {
				return err
			}
			x, ok := byName[name]
			if !ok {
				x = &index{Name: name, Unique: nonUnique == 0}
				byName[name] = x
				order = append(order, name)
			}
			if c, isText := coll[col]; isText && x.Unique {
				col += caseClass(c)
			}
			if x.Columns != "" {
				x.Columns += ","
			}
			x.Columns += col
			return nil
		})
	for _, n := range order {
		ts.Indexes = append(ts.Indexes, *byName[n])
	}
	sortIndexes(ts.Indexes)

	query(tb, db, `SELECT k.column_name, k.referenced_table_name, k.referenced_column_name, rc.delete_rule
		FROM information_schema.key_column_usage k
		JOIN information_schema.referential_constraints rc
		  ON rc.constraint_schema = k.constraint_schema AND rc.constraint_name = k.constraint_name AND rc.table_name = k.table_name
		WHERE k.table_schema = DATABASE() AND k.table_name = ? AND k.referenced_table_name IS NOT NULL`,
		[]any{table}, func(r *sql.Rows) error {
			var fk foreignKey
			if err := r.Scan(&fk.Column, &fk.RefTable, &fk.RefColumn, &fk.OnDelete); err != nil {
				return err
			}
			fk.OnDelete = normOnDelete(fk.OnDelete)
			ts.FKs = append(ts.FKs, fk)
			return nil
		})
	sortFKs(ts.FKs)
	return ts
}

// caseClass says whether a collation folds case: SQLite NOCASE and MySQL
// *_ci do, SQLite BINARY and MySQL *_bin do not.
func caseClass(collation string) string {
	c := strings.ToLower(collation)
	if c == "nocase" || strings.HasSuffix(c, "_ci") {
		return "/ci"
	}
	return "/cs"
}

func sortIndexes(xs []index) {
	slices.SortFunc(xs, func(a, b index) int { return strings.Compare(a.Name, b.Name) })
}

func sortFKs(fks []foreignKey) {
	slices.SortFunc(fks, func(a, b foreignKey) int { return strings.Compare(a.Column+a.RefTable, b.Column+b.RefTable) })
}
