package store

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// NotifyChannel is the PostgreSQL channel on which every committed change
// is announced with its revision (the highest event id it wrote), so that
// the other instances sharing the database pick it up at once
// (Store.Listen) instead of at their next revision poll.
const NotifyChannel = "bunting_changes"

// eventLockKey is the transaction-level advisory lock that PostgreSQL
// transactions take as they write their events (pgWriteEventSQL).
const eventLockKey = 0x62756e74 // "bunt"

// pgWriteEventSQL writes one event on PostgreSQL in one round trip: it
// takes the event lock, inserts the event, counts it (as
// SQLite does in two statements) and queues the NOTIFY of its id.
//
// The lock makes event ids follow commit order: a transaction writes its
// events when its function has returned (writePending) and keeps the lock
// until it commits or rolls back, so no other transaction takes an event id
// in between. A reader that sees revision R therefore sees every change
// with an id up to R, which is what lets streams resume from an event id
// without losing a change (SQLite has one writer at a time already). The
// insert reads its row from the locking subquery, so its id is drawn after
// the lock is held; the lock is re-entrant within the transaction, and a
// retried transaction takes it again. PostgreSQL delivers the NOTIFY when,
// and only if, the transaction commits; listeners keep the highest id.
var pgWriteEventSQL = `WITH locked AS MATERIALIZED (SELECT pg_advisory_xact_lock(` + strconv.Itoa(eventLockKey) + `)),
	inserted AS (INSERT INTO events (type, created_by, created_by_user_id, created_at, data, pre_data, tags, feature_name, project, environment)
		SELECT $1::text, $2::text, $3::bigint, $4::bigint, $5::text, $6::text, $7::text, $8::text, $9::text, $10::text FROM locked RETURNING id),
	counted AS (INSERT INTO event_counts (type, project, feature_name, n) VALUES ($1, $11, $12, 1)
		ON CONFLICT (type, project, feature_name) DO UPDATE SET n = event_counts.n + 1)
	SELECT i.id FROM inserted i CROSS JOIN LATERAL (SELECT pg_notify('` + NotifyChannel + `', i.id::text)) n`

// bumpGeneration moves Generation and wakes whoever waits on Changes.
func (s *Store) bumpGeneration() {
	s.generation.Add(1)
	s.changesMu.Lock()
	close(s.changes)
	s.changes = make(chan struct{})
	s.changesMu.Unlock()
}

// Changes returns a channel that is closed at the next change of
// Generation: a commit here, or a change by another instance found by
// LatestEventID (after a NOTIFY or a revision poll).
func (s *Store) Changes() <-chan struct{} {
	s.changesMu.Lock()
	defer s.changesMu.Unlock()
	return s.changes
}

// Listen follows the changes of the other instances on PostgreSQL until
// ctx ends: it LISTENs on NotifyChannel on a connection of its own and
// reads the latest revision (LatestEventID) on each notification, and once
// after every (re)connection, which catches up with what was missed while
// disconnected. A lost connection is retried with a growing pause; the
// caller's revision poll covers the gap. On SQLite it returns at once.
func (s *Store) Listen(ctx context.Context) {
	if s.dialect.Name != "postgres" {
		return
	}
	pause := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := s.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		level := slog.LevelWarn
		if s.Unavailable() != nil {
			level = slog.LevelDebug // the store said so when it went down
		}
		s.log.Log(ctx, level, "listening for changes failed; retrying", "err", err, "in", pause)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 10*time.Second)
	}
}

func (s *Store) listenOnce(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+NotifyChannel); err != nil {
		return err
	}
	if _, err := s.LatestEventID(ctx); err != nil {
		return err
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		if rev, perr := strconv.ParseInt(n.Payload, 10, 64); perr == nil && rev <= s.Revision() {
			continue // ours, or already seen
		}
		if _, err := s.LatestEventID(ctx); err != nil {
			return err
		}
	}
}
