package store_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

// wantStorage fails unless err is the storage error of kind k whose
// message holds every fragment and none of the words that must not reach
// a caller.
func wantStorage(t *testing.T, err error, k apierr.Kind, fragments ...string) {
	t.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) || e.Kind != k || !apierr.IsDatabase(err) {
		t.Fatalf("got %v (%T), want storage kind %d", err, err, k)
	}
	for _, f := range fragments {
		if !strings.Contains(e.Message, f) {
			t.Fatalf("message %q lacks %q", e.Message, f)
		}
	}
	for _, secret := range []string{"bunting_test_", "user=", "127.0.0.1", "postgres@"} {
		if strings.Contains(e.Message, secret) {
			t.Fatalf("message %q names %q", e.Message, secret)
		}
	}
}

// oneConnection makes st use a single connection, so that a session
// setting applies to everything it does, and runs the settings on it.
func oneConnection(t *testing.T, st *store.Store, settings ...string) {
	t.Helper()
	st.DB().SetMaxOpenConns(1)
	for _, s := range settings {
		if _, err := st.DB().Exec(s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestSQLiteStorageErrorsAreNamed: SQLite's real refusals reach the caller
// as the named storage errors: a full database (its page limit, as a full
// disk) as DatabaseFull, a read-only one as DatabaseReadOnly, a lock held
// by another process as DatabaseBusy; Ready reports the refused write until
// a write succeeds.
func TestSQLiteStorageErrorsAreNamed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("full", func(t *testing.T) {
		st := servertest.OpenStore(t, servertest.NewSQLite(t))
		// Pages freed by migrations that drop tables would be written
		// first: without them the file cannot take another page.
		if _, err := st.DB().Exec(`VACUUM`); err != nil {
			t.Fatal(err)
		}
		var pages int
		if err := st.DB().QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
			t.Fatal(err)
		}
		oneConnection(t, st, "PRAGMA max_page_count = "+strconv.Itoa(pages))
		err := st.Tx(ctx, func(tx *store.Tx) error {
			if err := newProject(tx, "p-"+strings.Repeat("x", 8000)); err != nil {
				return err
			}
			return tx.Event(store.NewEvent{Type: "project-created", Project: "p"})
		})
		wantStorage(t, err, apierr.KindDatabaseFull, "the database disk is full")
		wantStorage(t, st.Ready(ctx), apierr.KindDatabaseFull)
		if _, err := st.DB().Exec(`PRAGMA max_page_count = 1000000`); err != nil {
			t.Fatal(err)
		}
		if err := st.Tx(ctx, func(tx *store.Tx) error {
			if err := newProject(tx, "p2"); err != nil {
				return err
			}
			return tx.Event(store.NewEvent{Type: "project-created", Project: "p2"})
		}); err != nil {
			t.Fatal(err)
		}
		if err := st.Ready(ctx); err != nil {
			t.Fatalf("ready after a successful write: %v", err)
		}
	})
	t.Run("read-only", func(t *testing.T) {
		st := servertest.OpenStore(t, servertest.NewSQLite(t))
		oneConnection(t, st, "PRAGMA query_only = 1")
		err := st.Tx(ctx, func(tx *store.Tx) error { return newProject(tx, "p") })
		wantStorage(t, err, apierr.KindDatabaseReadOnly, "read-only")
		wantStorage(t, st.Ready(ctx), apierr.KindDatabaseReadOnly)
	})
	t.Run("locked", func(t *testing.T) {
		db := servertest.NewSQLite(t)
		st := servertest.OpenStore(t, db)
		other, err := sql.Open("sqlite", "file:"+db.Path+"?_pragma=busy_timeout(0)")
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		conn, err := other.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.ExecContext(ctx, `BEGIN IMMEDIATE`); err != nil {
			t.Fatal(err)
		}
		err = st.Tx(ctx, func(tx *store.Tx) error { return newProject(tx, "p") })
		wantStorage(t, err, apierr.KindDatabaseBusy, "locked")
		if err := st.Ready(ctx); err != nil {
			t.Fatalf("a lock is not a reason to be unready: %v", err)
		}
	})
}

// TestPostgresStorageErrorsAreNamed: PostgreSQL's real refusals reach the
// caller as the named storage errors, and a store that lost its database
// fails changes at once, finds it again, and retries a transaction whose
// connection was ended before it committed.
func TestPostgresStorageErrorsAreNamed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	create := func(st *store.Store, id string) error {
		return st.Tx(ctx, func(tx *store.Tx) error {
			if err := newProject(tx, id); err != nil {
				return err
			}
			return tx.Event(store.NewEvent{Type: "project-created", Project: id})
		})
	}
	t.Run("unavailable", func(t *testing.T) {
		db := servertest.NewPostgres(t)
		st := servertest.OpenStore(t, db)
		restore := servertest.CutPostgres(t, db)
		wantStorage(t, create(st, "p1"), apierr.KindDatabaseUnavailable, "does not accept connections")
		if st.Unavailable() == nil {
			t.Fatal("the store does not know that its database is away")
		}
		start := time.Now()
		wantStorage(t, create(st, "p2"), apierr.KindDatabaseUnavailable)
		if took := time.Since(start); took > 100*time.Millisecond {
			t.Errorf("a change took %v to fail while the database was known to be away", took)
		}
		wantStorage(t, st.Ready(ctx), apierr.KindDatabaseUnavailable)
		restore()
		deadline := time.Now().Add(5 * time.Second)
		for st.Unavailable() != nil {
			if time.Now().After(deadline) {
				t.Fatal("the store did not find its database again within 5 s")
			}
			time.Sleep(10 * time.Millisecond)
		}
		if err := create(st, "p3"); err != nil {
			t.Fatal(err)
		}
		if err := st.Ready(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("read-only", func(t *testing.T) {
		db := servertest.NewPostgres(t)
		st := servertest.OpenStore(t, db)
		restore := servertest.ReadOnlyPostgres(t, db)
		wantStorage(t, create(st, "p1"), apierr.KindDatabaseReadOnly, "read-only")
		wantStorage(t, st.Ready(ctx), apierr.KindDatabaseReadOnly)
		restore()
		if err := st.Ready(ctx); err != nil {
			t.Fatalf("ready once writable: %v", err)
		}
		if err := create(st, "p2"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("lock timeout", func(t *testing.T) {
		db := servertest.NewPostgres(t)
		st := servertest.OpenStore(t, db)
		if err := create(st, "locked"); err != nil {
			t.Fatal(err)
		}
		other, err := sql.Open("pgx", db.URL)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		holder, err := other.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer holder.Rollback() //nolint:errcheck // the test ends here
		if _, err := holder.Exec(`UPDATE projects SET name = 'held' WHERE id = 'locked'`); err != nil {
			t.Fatal(err)
		}
		oneConnection(t, st, "SET lock_timeout = '50ms'")
		err = st.Tx(ctx, func(tx *store.Tx) error {
			return tx.DeleteProject("locked")
		})
		wantStorage(t, err, apierr.KindDatabaseBusy, "lock_timeout")
	})
	t.Run("connection ended before the commit", func(t *testing.T) {
		db := servertest.NewPostgres(t)
		st := servertest.OpenStore(t, db)
		oneConnection(t, st)
		var pid int
		if err := st.DB().QueryRow(`SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			t.Fatal(err)
		}
		admin, err := sql.Open("pgx", os.Getenv("TEST_POSTGRES_URL"))
		if err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		if _, err := admin.Exec(`SELECT pg_terminate_backend($1)`, pid); err != nil {
			t.Fatal(err)
		}
		for ended := false; !ended; {
			if err := admin.QueryRow(`SELECT NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1)`, pid).Scan(&ended); err != nil {
				t.Fatal(err)
			}
		}
		if err := create(st, "after-restart"); err != nil {
			t.Fatalf("a change on a connection the server had ended: %v", err)
		}
		if st.Unavailable() != nil {
			t.Fatal("one ended connection marked the database unavailable")
		}
	})
}
