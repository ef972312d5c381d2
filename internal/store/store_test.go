package store_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

func countEvents(t *testing.T, st *store.Store) int {
	t.Helper()
	var n int
	if err := st.DB().QueryRow(`SELECT COUNT(*) FROM events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func projectExists(t *testing.T, st *store.Store, id string) bool {
	_, err := st.Q(context.Background()).Project(id)
	if err != nil && !apierr.IsKind(err, apierr.KindNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

func newProject(tx *store.Tx, id string) error {
	return tx.InsertProject(store.Project{ID: id, Name: id, Mode: "open", DefaultStickiness: "default", Health: 100, CreatedAt: tx.Now()}, nil)
}

func TestChangeAndEventCommitTogether(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		st := servertest.OpenStore(t, db)
		ctx := context.Background()
		before := countEvents(t, st)

		// A change with its event commits both and raises the revision.
		rev := st.Revision()
		err := st.Tx(ctx, func(tx *store.Tx) error {
			if err := newProject(tx, "p1"); err != nil {
				return err
			}
			return tx.Event(store.NewEvent{Type: "project-created", Project: "p1", Actor: store.Actor{Name: "test"}})
		})
		if err != nil || !projectExists(t, st, "p1") || countEvents(t, st) != before+1 || st.Revision() <= rev {
			t.Fatalf("commit: err %v, events %d, revision %d→%d", err, countEvents(t, st), rev, st.Revision())
		}

		// A change without its event is refused and leaves nothing.
		err = st.Tx(ctx, func(tx *store.Tx) error { return newProject(tx, "p2") })
		if !errors.Is(err, store.ErrChangeWithoutEvent) || projectExists(t, st, "p2") {
			t.Fatalf("change without event: err %v, exists %v", err, projectExists(t, st, "p2"))
		}

		// A change that fails after its event leaves neither.
		err = st.Tx(ctx, func(tx *store.Tx) error {
			if err := tx.Event(store.NewEvent{Type: "project-created", Project: "p3", Actor: store.Actor{Name: "test"}}); err != nil {
				return err
			}
			return newProject(tx, "p1") // duplicate id
		})
		if !apierr.IsKind(err, apierr.KindConflict) || countEvents(t, st) != before+1 {
			t.Fatalf("failed change: err %v, events %d", err, countEvents(t, st))
		}

		// An event whose change is rolled back by the caller is gone too.
		err = st.Tx(ctx, func(tx *store.Tx) error {
			if err := newProject(tx, "p4"); err != nil {
				return err
			}
			if err := tx.Event(store.NewEvent{Type: "project-created", Project: "p4", Actor: store.Actor{Name: "test"}}); err != nil {
				return err
			}
			return apierr.Validation("changed my mind")
		})
		if err == nil || projectExists(t, st, "p4") || countEvents(t, st) != before+1 {
			t.Fatalf("rollback: err %v", err)
		}

		// A panic inside the transaction rolls back and is returned as an error.
		err = st.Tx(ctx, func(tx *store.Tx) error {
			_ = newProject(tx, "p5")
			panic("boom")
		})
		if err == nil || projectExists(t, st, "p5") {
			t.Fatalf("panic: err %v", err)
		}
	})
}

func TestNoOpUpdateEventIsDropped(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		st := servertest.OpenStore(t, db)
		before := countEvents(t, st)
		err := st.Tx(context.Background(), func(tx *store.Tx) error {
			return tx.Event(store.NewEvent{Type: "project-updated", Data: map[string]any{"a": 1}, PreData: map[string]any{"a": 1}})
		})
		if err != nil || countEvents(t, st) != before {
			t.Fatalf("err %v, events %d→%d", err, before, countEvents(t, st))
		}
	})
}

func TestFreshDatabaseSeed(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		st := servertest.OpenStore(t, db)
		q := st.Q(context.Background())
		if _, err := q.Project("default"); err != nil {
			t.Fatal(err)
		}
		envs, err := q.Environments()
		if err != nil || len(envs) != 2 || envs[0].Name != "development" || envs[1].Name != "production" {
			t.Fatalf("environments %+v %v", envs, err)
		}
		types, err := q.StrategyTypes()
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, ty := range types {
			names[ty.Name] = !ty.Editable
		}
		for _, n := range []string{"flexibleRollout", "default", "remoteAddress", "applicationHostname"} {
			if !names[n] {
				t.Errorf("built-in strategy %s missing or editable", n)
			}
		}
	})
}

// Several instances starting at once on one PostgreSQL database migrate it
// once, under goose's advisory session lock. (SQLite is single-instance.)
func TestConcurrentOpenMigratesOnce(t *testing.T) {
	func(t *testing.T, db servertest.Database) {
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := store.Open(context.Background(), store.Config{URL: db.URL, Path: db.Path})
				if err == nil {
					st.Close()
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("concurrent open: %v", err)
			}
		}
		st := servertest.OpenStore(t, db)
		projects, err := st.Q(context.Background()).Projects()
		if err != nil || len(projects) != 1 {
			t.Fatalf("projects after concurrent migration: %v %v", projects, err)
		}
	}(t, servertest.NewEmptyPostgres(t))
}

func TestSQLiteFileNameWithURICharacters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "odd #1?x%y.db")
	st, err := store.Open(context.Background(), store.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("the database is not at %q: %v", path, err)
	}
}

// Event ids follow commit order on PostgreSQL (a sequence alone does not):
// a transaction writes its events when its function returns, under the
// event lock it holds until it ends, so a transaction that commits later
// has the higher ids even when it began first. Streams resume from event
// ids, which relies on this (see the server's
// TestStreamingResumesWithoutLossUnderConcurrentWrites).
func TestEventIDsFollowCommitOrder(t *testing.T) {
	db := servertest.NewPostgres(t)
	writer, reader := servertest.OpenStore(t, db), servertest.OpenStore(t, db)
	ctx := context.Background()
	holding, release, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- writer.Tx(ctx, func(tx *store.Tx) error {
			if err := tx.Event(store.NewEvent{Type: "feature-updated", Actor: store.Actor{Name: "slow"}}); err != nil {
				return err
			}
			close(holding)
			<-release
			return nil
		})
	}()
	<-holding
	// A transaction that starts later but commits first takes the lower id:
	// the slow one has not taken its id yet (events are written, under the
	// event lock, when the transaction function returns).
	if err := writer.Tx(ctx, func(tx *store.Tx) error {
		return tx.Event(store.NewEvent{Type: "feature-created", Actor: store.Actor{Name: "fast"}})
	}); err != nil {
		t.Fatal(err)
	}
	first, err := reader.LatestEventID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	last, err := reader.LatestEventID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if last <= first {
		t.Fatalf("the later commit took id %d, the earlier %d", last, first)
	}
}

// The per-(type, project, flag) counters behind event search totals must
// agree with the event rows, however the events were written.
func TestEventCountsFollowEvents(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		st := servertest.OpenStore(t, db)
		ctx := context.Background()
		write := func(evs ...store.NewEvent) {
			t.Helper()
			if err := st.Tx(ctx, func(tx *store.Tx) error {
				for _, ev := range evs {
					if err := tx.Event(ev); err != nil {
						return err
					}
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		on := store.NewEvent{Type: "feature-environment-enabled", Project: "default", FeatureName: "counted", Environment: "development", Actor: store.Actor{Name: "t"}}
		off := on
		off.Type = "feature-environment-disabled"
		write(on, off, on)
		write(off)
		write(store.NewEvent{Type: "project-created", Actor: store.Actor{Name: "t"}})
		q := st.Q(ctx)
		for _, c := range []struct {
			f    store.EventFilter
			want int
		}{
			{store.EventFilter{Feature: "counted"}, 4},
			{store.EventFilter{Feature: "counted", Type: on.Type}, 2},
			{store.EventFilter{Project: "default", Type: off.Type}, 2},
		} {
			events, total, err := q.Events(c.f)
			if err != nil || total != c.want || len(events) != c.want {
				t.Fatalf("%+v: total %d, %d events, err %v; want %d", c.f, total, len(events), err, c.want)
			}
		}
		var rows, counted int
		if err := st.DB().QueryRow(`SELECT (SELECT COUNT(*) FROM events), (SELECT COALESCE(SUM(n), 0) FROM event_counts)`).Scan(&rows, &counted); err != nil {
			t.Fatal(err)
		}
		if rows != counted {
			t.Fatalf("%d events but counters sum to %d", rows, counted)
		}
	})
}

// TestDeadlockedTransactionIsRetried makes two transactions lock two rows
// in opposite orders. PostgreSQL aborts one of them to break the deadlock;
// Tx runs it again, so both commit, each with its event, one after the
// other (both rows carry the name the last one wrote).
func TestDeadlockedTransactionIsRetried(t *testing.T) {
	db := servertest.NewPostgres(t)
	st := servertest.OpenStore(t, db)
	ctx := context.Background()
	for _, id := range []string{"a", "b"} {
		if err := st.Tx(ctx, func(tx *store.Tx) error {
			if err := newProject(tx, id); err != nil {
				return err
			}
			return tx.Event(store.NewEvent{Type: "project-created", Project: id})
		}); err != nil {
			t.Fatal(err)
		}
	}
	before := countEvents(t, st)
	var firstLocks sync.WaitGroup
	firstLocks.Add(2)
	update := func(first, second string) error {
		attempt := 0
		return st.Tx(ctx, func(tx *store.Tx) error {
			attempt++
			for i, id := range []string{first, second} {
				p, err := tx.Project(id)
				if err != nil {
					return err
				}
				p.Name = first + second
				if err := tx.UpdateProject(p); err != nil {
					return err
				}
				if i == 0 && attempt == 1 {
					firstLocks.Done()
					firstLocks.Wait() // both hold their first row now
				}
			}
			return tx.Event(store.NewEvent{Type: "project-updated", Project: first})
		})
	}
	errs := make(chan error, 2)
	go func() { errs <- update("a", "b") }()
	go func() { errs <- update("b", "a") }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("a deadlocked transaction was not retried: %v", err)
		}
	}
	a, errA := st.Q(ctx).Project("a")
	b, errB := st.Q(ctx).Project("b")
	if errA != nil || errB != nil || a.Name != b.Name || (a.Name != "ab" && a.Name != "ba") {
		t.Fatalf("projects %+v %v, %+v %v: want both written by the same last transaction", a, errA, b, errB)
	}
	if got := countEvents(t, st) - before; got != 2 {
		t.Fatalf("%d events, want 2", got)
	}
}

// TestSQLiteSyncsEveryCommit: every pooled SQLite connection runs in WAL
// mode with synchronous=FULL, so a commit is on disk when it returns.
func TestSQLiteSyncsEveryCommit(t *testing.T) {
	st := servertest.OpenStore(t, servertest.NewSQLite(t))
	ctx := context.Background()
	var conns []*sql.Conn
	for range 4 { // held together: four distinct connections of the pool
		c, err := st.DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	for i, c := range conns {
		var sync int
		var mode string
		if err := c.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		if sync != 2 || mode != "wal" {
			t.Fatalf("connection %d: synchronous=%d journal_mode=%s, want 2 (FULL) and wal", i, sync, mode)
		}
	}
}

// TestPostgresSessionsCommitDurably: a database whose default is
// synchronous_commit=off still gets durable commits from the store.
func TestPostgresSessionsCommitDurably(t *testing.T) {
	db := servertest.NewPostgres(t)
	admin, err := sql.Open("pgx", db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var name string
	if err := admin.QueryRow(`SELECT current_database()`).Scan(&name); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(`ALTER DATABASE ` + name + ` SET synchronous_commit = off`); err != nil {
		t.Fatal(err)
	}
	st := servertest.OpenStore(t, db)
	var setting string
	if err := st.DB().QueryRow(`SHOW synchronous_commit`).Scan(&setting); err != nil {
		t.Fatal(err)
	}
	if setting != "on" {
		t.Fatalf("synchronous_commit=%s in the store's sessions, want on", setting)
	}
}

// TestConcurrentTransactionsFailAlone: many writers at once, every other
// one failing after its change (an error, a change without event, a
// panic). On SQLite they are committed in groups (one sync for several);
// each failing one must be rolled back alone and every other one committed
// with its event.
func TestConcurrentTransactionsFailAlone(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		st := servertest.OpenStore(t, db)
		ctx := context.Background()
		before := countEvents(t, st)
		const writers, each = 16, 12
		var wg sync.WaitGroup
		errs := make(chan error, writers*each)
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range each {
					id := fmt.Sprintf("p-%d-%d", w, i)
					err := st.Tx(ctx, func(tx *store.Tx) error {
						if err := newProject(tx, id); err != nil {
							return err
						}
						switch i % 6 {
						case 1:
							return errors.New("refused")
						case 3:
							return nil // a change without its event
						case 5:
							panic("boom")
						}
						return tx.Event(store.NewEvent{Type: "project-created", Project: id})
					})
					if (i%2 == 0) != (err == nil) {
						errs <- fmt.Errorf("%s: %v", id, err)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		for w := range writers {
			for i := range each {
				id := fmt.Sprintf("p-%d-%d", w, i)
				if projectExists(t, st, id) != (i%2 == 0) {
					t.Errorf("project %s exists=%v, want %v", id, !(i%2 == 0), i%2 == 0)
				}
			}
		}
		if got := countEvents(t, st) - before; got != writers*each/2 {
			t.Fatalf("%d events, want %d", got, writers*each/2)
		}
	})
}
