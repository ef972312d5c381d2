package store

import (
	"context"
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
// transactions take before writing their events (lockEvents).
const eventLockKey = 0x62756e74 // "bunt"

// lockEvents makes event ids follow commit order on PostgreSQL: a
// transaction takes the event lock before it writes its events (at the
// end of its function, writePending) and keeps it
// until it commits or rolls back, so no other transaction takes an event id
// in between. A reader that sees revision R therefore sees every change
// with an id up to R, which is what lets streams resume from an event id
// without losing a change. (SQLite has one writer at a time already.) The
// lock belongs to this attempt's transaction: a retried transaction takes
// it again.
func (tx *Tx) lockEvents() error {
	if tx.eventsLocked || tx.s.dialect.Name != "postgres" {
		return nil
	}
	if _, err := tx.q.ExecContext(tx.ctx, `SELECT pg_advisory_xact_lock($1)`, int64(eventLockKey)); err != nil {
		return tx.s.translate(err)
	}
	tx.eventsLocked = true
	return nil
}

// notifyChange queues the NOTIFY of a PostgreSQL transaction that wrote
// events; PostgreSQL delivers it when (and only if) the transaction commits.
func (tx *Tx) notifyChange() error {
	if tx.maxID == 0 || tx.s.dialect.Name != "postgres" {
		return nil
	}
	_, err := tx.q.ExecContext(tx.ctx, `SELECT pg_notify($1, $2)`, NotifyChannel, strconv.FormatInt(tx.maxID, 10))
	return tx.s.translate(err)
}

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
		s.log.Warn("listening for changes failed; retrying", "err", err, "in", pause)
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
