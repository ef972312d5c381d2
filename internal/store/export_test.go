package store

import (
	"context"
	"database/sql"
	"io/fs"

	"github.com/pressly/goose/v3"
)

// SetRecentEventsScanned changes how many of the newest events a free-text
// search scans before it asks the text index, until restore is called.
func SetRecentEventsScanned(n int64) (restore func()) {
	old := recentEventsScanned
	recentEventsScanned = n
	return func() { recentEventsScanned = old }
}

// MigrateUpTo applies the embedded migrations of dialect ("sqlite" or
// "postgres") to db up to version and no further, so that a test can
// write rows in the shape a migration finds them in.
func MigrateUpTo(ctx context.Context, db *sql.DB, dialect string, version int64) error {
	d := sqliteDialect
	if dialect == "postgres" {
		d = postgresDialect
	}
	sub, err := fs.Sub(migrationFiles, d.dir)
	if err != nil {
		return err
	}
	p, err := goose.NewProvider(d.goose, db, sub)
	if err != nil {
		return err
	}
	_, err = p.UpTo(ctx, version)
	return err
}
