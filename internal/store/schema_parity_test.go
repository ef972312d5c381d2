package store_test

import (
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// schema is what the parity test compares of a migrated database: each
// table's columns (type family, nullability, primary-key position) and
// each index (table, columns in order, uniqueness), as sorted lines.
type schema struct {
	tables  []string
	columns []string
	indexes []string
}

// TestSchemaParity migrates a SQLite and a PostgreSQL database and checks
// that they have the same tables, the same columns with the same type
// family and nullability, and the same indexes, apart from the few
// differences that are there on purpose (sqliteOnly, postgresOnly).
func TestSchemaParity(t *testing.T) {
	lite := servertest.OpenStore(t, servertest.NewSQLite(t))
	pg := servertest.OpenStore(t, servertest.NewPostgres(t))
	a, err := sqliteSchema(lite.DB())
	if err != nil {
		t.Fatal(err)
	}
	b, err := postgresSchema(pg.DB())
	if err != nil {
		t.Fatal(err)
	}
	if len(a.tables) < 20 || len(a.columns) < 100 || len(a.indexes) < 10 {
		t.Fatalf("the SQLite schema looks empty: %d tables, %d columns, %d indexes", len(a.tables), len(a.columns), len(a.indexes))
	}
	compare(t, "table", a.tables, b.tables)
	compare(t, "column", a.columns, b.columns)
	compare(t, "index", a.indexes, b.indexes)
}

// onPurpose reports the differences that are there by design. Event
// free-text search is an FTS5 table on SQLite (events_fts, with its shadow
// tables and vocabulary view) and a trigram index over an expression of the
// event columns on PostgreSQL.
func onPurpose(what, line string, sqlite bool) bool {
	if sqlite {
		return strings.HasPrefix(line, "events_fts") || strings.Contains(line, " events_fts")
	}
	return what == "index" && line == "events (<expr>)"
}

func compare(t *testing.T, what string, lite, pg []string) {
	t.Helper()
	for _, l := range lite {
		if !slices.Contains(pg, l) && !onPurpose(what, l, true) {
			t.Errorf("%s only on SQLite: %s", what, l)
		}
	}
	for _, p := range pg {
		if !slices.Contains(lite, p) && !onPurpose(what, p, false) {
			t.Errorf("%s only on PostgreSQL: %s", what, p)
		}
	}
}

// family maps a declared column type to what it stores.
func family(typ string) string {
	typ = strings.ToLower(typ)
	switch {
	case strings.Contains(typ, "int") || typ == "bigserial" || typ == "serial":
		return "integer"
	case typ == "text" || strings.HasPrefix(typ, "character") || strings.HasPrefix(typ, "varchar"):
		return "text"
	case typ == "boolean":
		return "boolean"
	case typ == "real" || typ == "double precision" || typ == "numeric":
		return "real"
	case typ == "blob" || typ == "bytea":
		return "bytes"
	}
	return "other:" + typ
}

func rowsOf(db *sql.DB, q string, args ...any) ([][]string, error) {
	rows, err := db.Query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = v.String
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

func sqliteSchema(db *sql.DB) (schema, error) {
	var s schema
	tables, err := rowsOf(db, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'goose_db_version' ORDER BY name`)
	if err != nil {
		return s, err
	}
	for _, tr := range tables {
		table := tr[0]
		s.tables = append(s.tables, table)
		cols, err := rowsOf(db, `SELECT name, type, "notnull", pk FROM pragma_table_info($1)`, table)
		if err != nil {
			return s, err
		}
		for _, c := range cols {
			null := "null"
			if c[2] == "1" || c[3] != "0" {
				null = "not null"
			}
			s.columns = append(s.columns, fmt.Sprintf("%s.%s %s %s pk=%s", table, c[0], family(c[1]), null, c[3]))
		}
		// An INTEGER PRIMARY KEY is SQLite's rowid: unique and indexed as
		// PostgreSQL's primary-key index, though SQLite lists no index.
		if pk := pkColumns(cols); len(pk) == 1 && strings.EqualFold(pk[0][1], "INTEGER") {
			s.indexes = append(s.indexes, indexLine(table, true, []string{pk[0][0]}))
		}
		idx, err := rowsOf(db, `SELECT name, "unique" FROM pragma_index_list($1)`, table)
		if err != nil {
			return s, err
		}
		for _, ix := range idx {
			cols, err := rowsOf(db, `SELECT COALESCE(name, '<expr>') FROM pragma_index_xinfo($1) WHERE key ORDER BY seqno`, ix[0])
			if err != nil {
				return s, err
			}
			var names []string
			for _, c := range cols {
				names = append(names, c[0])
			}
			s.indexes = append(s.indexes, indexLine(table, ix[1] == "1", names))
		}
	}
	slices.Sort(s.columns)
	slices.Sort(s.indexes)
	return s, nil
}

// pkColumns returns the primary-key columns of pragma_table_info rows
// (name, type, notnull, pk).
func pkColumns(cols [][]string) [][]string {
	var pk [][]string
	for _, c := range cols {
		if c[3] != "0" {
			pk = append(pk, c)
		}
	}
	return pk
}

func indexLine(table string, unique bool, cols []string) string {
	u := ""
	if unique {
		u = "unique "
	}
	return fmt.Sprintf("%s%s (%s)", u, table, strings.Join(cols, ", "))
}

func postgresSchema(db *sql.DB) (schema, error) {
	var s schema
	tables, err := rowsOf(db, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name != 'goose_db_version' ORDER BY table_name`)
	if err != nil {
		return s, err
	}
	for _, tr := range tables {
		s.tables = append(s.tables, tr[0])
	}
	cols, err := rowsOf(db, `SELECT c.table_name, c.column_name, c.data_type, c.is_nullable,
			COALESCE((SELECT k.ordinal_position FROM information_schema.table_constraints tc
				JOIN information_schema.key_column_usage k ON k.constraint_name = tc.constraint_name AND k.table_schema = tc.table_schema AND k.table_name = tc.table_name
				WHERE tc.table_schema = c.table_schema AND tc.table_name = c.table_name AND tc.constraint_type = 'PRIMARY KEY' AND k.column_name = c.column_name), 0)
		FROM information_schema.columns c JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE' AND c.table_name != 'goose_db_version'`)
	if err != nil {
		return s, err
	}
	for _, c := range cols {
		null := "null"
		if c[3] == "NO" {
			null = "not null"
		}
		s.columns = append(s.columns, fmt.Sprintf("%s.%s %s %s pk=%s", c[0], c[1], family(c[2]), null, c[4]))
	}
	idx, err := rowsOf(db, `SELECT t.relname, i.indisunique,
			(SELECT string_agg(COALESCE(a.attname, '<expr>'), ', ' ORDER BY k.n)
				FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
				LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum AND k.attnum > 0)
		FROM pg_index i JOIN pg_class t ON t.oid = i.indrelid JOIN pg_namespace ns ON ns.oid = t.relnamespace
		WHERE ns.nspname = current_schema() AND t.relname != 'goose_db_version'`)
	if err != nil {
		return s, err
	}
	for _, ix := range idx {
		s.indexes = append(s.indexes, indexLine(ix[0], ix[1] == "true", strings.Split(ix[2], ", ")))
	}
	slices.Sort(s.columns)
	slices.Sort(s.indexes)
	return s, nil
}
