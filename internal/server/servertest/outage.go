package servertest

import (
	"context"
	"database/sql"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"
)

// CutPostgres takes db away from every server using it, as a real outage
// does: the database refuses new connections (ALLOW_CONNECTIONS false) and
// every session open on it is ended (pg_terminate_backend). It returns once
// no session is left. The returned function gives the database back (it
// also runs at cleanup, and may be called more than once).
func CutPostgres(t testing.TB, db Database) (restore func()) {
	t.Helper()
	return pgChange(t, db, `ALTER DATABASE %s WITH ALLOW_CONNECTIONS false`, `ALTER DATABASE %s WITH ALLOW_CONNECTIONS true`, false)
}

// ReadOnlyPostgres makes db read-only for every server using it, as a
// fail-over to a standby does: new sessions start read-only
// (default_transaction_read_only) and the open ones are ended. The returned
// function makes it writable again (and ends the sessions, which keep the
// setting they started with).
func ReadOnlyPostgres(t testing.TB, db Database) (restore func()) {
	t.Helper()
	return pgChange(t, db, `ALTER DATABASE %s SET default_transaction_read_only = on`, `ALTER DATABASE %s RESET default_transaction_read_only`, true)
}

// pgChange runs change on db's database, ends its sessions, and returns a
// function that runs undo (and ends them again when endAfterUndo).
func pgChange(t testing.TB, db Database, change, undo string, endAfterUndo bool) func() {
	t.Helper()
	if db.Kind != "postgres" {
		t.Fatalf("servertest: %s is not a PostgreSQL database", db.Kind)
	}
	u, err := url.Parse(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	admin, err := sql.Open("pgx", os.Getenv("TEST_POSTGRES_URL"))
	if err != nil {
		t.Fatal(err)
	}
	run := func(stmt string, end bool) error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := admin.ExecContext(ctx, strings.ReplaceAll(stmt, "%s", name)); err != nil || !end {
			return err
		}
		return endSessions(ctx, admin, name)
	}
	if err := run(change, true); err != nil {
		admin.Close()
		t.Fatalf("servertest: %v", err)
	}
	restored := false
	restore := func() {
		if restored {
			return
		}
		restored = true
		defer admin.Close()
		if err := run(undo, endAfterUndo); err != nil {
			t.Errorf("servertest: give the database back: %v", err)
		}
	}
	t.Cleanup(restore)
	return restore
}

// endSessions terminates every session on database name and waits until
// they are gone.
func endSessions(ctx context.Context, admin *sql.DB, name string) error {
	for {
		var left int
		err := admin.QueryRowContext(ctx, `SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE datname = $1 AND pid <> pg_backend_pid()`, name).Scan(&left)
		if err != nil || left == 0 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
