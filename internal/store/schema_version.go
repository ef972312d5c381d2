package store

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"strings"

	"github.com/pressly/goose/v3"
)

// NewerSchemaError refuses a database that a newer Bunting has migrated:
// this binary would run against tables it does not know, and downgrading
// a schema is not something it can do. Upgrade Bunting, or restore a
// backup taken before the newer version ran.
type NewerSchemaError struct {
	// Database is the database's highest schema version, Binary this
	// binary's highest.
	Database, Binary int64
	// Unknown lists the versions the database has and this binary lacks.
	Unknown []int64
}

func (e *NewerSchemaError) Error() string {
	unknown := make([]string, len(e.Unknown))
	for i, v := range e.Unknown {
		unknown[i] = fmt.Sprintf("%05d", v)
	}
	return fmt.Sprintf("the database was written by a newer Bunting: its schema version is %05d, and this Bunting knows "+
		"versions up to %05d (the database has %s, which this one lacks). Run the newer Bunting, or restore a backup "+
		"taken before it ran (see docs/operations.md#upgrades)", e.Database, e.Binary, strings.Join(unknown, ", "))
}

// checkSchemaKnown refuses a database holding a migration this binary does
// not embed (see NewerSchemaError). A fresh database passes.
func checkSchemaKnown(ctx context.Context, db *sql.DB, d Dialect) error {
	applied, err := appliedVersions(ctx, db, d)
	if err != nil {
		return fmt.Errorf("read the schema version: %w", err)
	}
	known := map[int64]bool{0: true}
	var highest int64
	for _, v := range embeddedVersions(d) {
		known[v] = true
		highest = max(highest, v)
	}
	e := &NewerSchemaError{Binary: highest}
	for _, v := range applied {
		e.Database = max(e.Database, v)
		if !known[v] {
			e.Unknown = append(e.Unknown, v)
		}
	}
	if len(e.Unknown) > 0 {
		return e
	}
	return nil
}

// gooseTable is the table goose records applied migrations in.
const gooseTable = "goose_db_version"

// appliedVersions lists the migration versions recorded in db, in order;
// none when the database is new.
func appliedVersions(ctx context.Context, db *sql.DB, d Dialect) ([]int64, error) {
	var exists bool
	var q string
	switch d.Name {
	case "postgres":
		q = `SELECT to_regclass('` + gooseTable + `') IS NOT NULL`
	default:
		q = `SELECT COUNT(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = '` + gooseTable + `'`
	}
	if err := db.QueryRowContext(ctx, q).Scan(&exists); err != nil || !exists {
		return nil, err
	}
	rows, err := db.QueryContext(ctx, `SELECT DISTINCT version_id FROM `+gooseTable+` WHERE is_applied ORDER BY version_id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// embeddedVersions lists the migration versions this binary embeds for d.
func embeddedVersions(d Dialect) []int64 {
	var out []int64
	_ = fs.WalkDir(migrationFiles, d.dir, func(path string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() || !strings.HasSuffix(de.Name(), ".sql") {
			return err
		}
		if v, perr := goose.NumericComponent(de.Name()); perr == nil {
			out = append(out, v)
		}
		return nil
	})
	return out
}
