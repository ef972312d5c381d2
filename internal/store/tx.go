package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"
)

// querier is what both *sql.DB and *sql.Tx offer.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Q runs queries with a context, either on the database or inside a
// transaction. The read methods of the domain files are defined on Q, so
// they work in both places.
type Q struct {
	ctx context.Context
	q   querier
	s   *Store
	tx  *Tx
}

// Q returns a query runner on the database, outside any transaction.
func (s *Store) Q(ctx context.Context) Q { return Q{ctx: ctx, q: s.db, s: s} }

// exec runs a statement. Inside a transaction, affected rows mark the
// transaction as changed, so it must also write an event.
func (q Q) exec(query string, args ...any) (int64, error) {
	res, err := q.q.ExecContext(q.ctx, query, args...)
	if err != nil {
		return 0, q.s.translate(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, q.s.translate(err)
	}
	if q.tx != nil && n > 0 {
		q.tx.changed = true
	}
	if q.tx == nil {
		q.s.wrote()
	}
	return n, nil
}

// query runs a query; the caller closes the rows.
func (q Q) query(query string, args ...any) (*sql.Rows, error) {
	rows, err := q.q.QueryContext(q.ctx, query, args...)
	return rows, q.s.translate(err)
}

// row runs a single-row query and scans it; sql.ErrNoRows becomes a
// NotFound domain error.
func (q Q) row(dest []any, query string, args ...any) error {
	return q.s.translate(q.q.QueryRowContext(q.ctx, query, args...).Scan(dest...))
}

// now is the store clock in unix milliseconds.
func (q Q) now() int64 { return Millis(q.s.now()) }

// Tx is one transaction. Every change made through it must be accompanied
// by an Event before the transaction function returns.
type Tx struct {
	Q
	sqlTx   *sql.Tx
	changed bool
	events  int
	maxID   int64
	at      int64
	// credentialsChanged is set by events about tokens and users.
	credentialsChanged bool
	// bookkeeping marks a transaction of Record: it changes no
	// configuration, needs no event and moves no Generation.
	bookkeeping bool
	// accessChanged is set by events about roles, groups, projects and
	// users (accessEventPrefixes).
	accessChanged bool
	// pending are a PostgreSQL transaction's events, written when its
	// function has returned (writePending), so that the event lock is held
	// only for those inserts and the commit.
	pending []pendingEvent
}

// pendingEvent is an event waiting for writePending.
type pendingEvent struct {
	ev        NewEvent
	data, pre *string
	tags      string
}

// ErrChangeWithoutEvent is returned (and the transaction rolled back) when a
// transaction changed rows without writing an event.
var ErrChangeWithoutEvent = errors.New("store: a change was made without writing its event")

// txAttempts is how many times Tx runs a transaction that PostgreSQL
// aborted to break a deadlock or a serialization conflict.
const txAttempts = 4

// Tx runs fn in a transaction. It commits when fn returns nil and rolls back
// otherwise. A transaction that changed rows but wrote no event is rolled
// back with ErrChangeWithoutEvent. The events' ids raise Revision once the
// commit succeeds.
//
// When PostgreSQL aborts the transaction to break a deadlock (concurrent
// changes that lock the same rows in different orders, such as deleting a
// strategy while its environment is removed from the project), or its
// connection broke before the commit (the database restarted, or ended
// idle sessions), Tx runs fn again in a new transaction, up to txAttempts
// times in all: fn must have no effect outside tx. A connection that broke
// during the commit is not retried: the change may have been saved.
//
// While the database cannot be reached (Unavailable), Tx fails at once.
func (s *Store) Tx(ctx context.Context, fn func(tx *Tx) error) error {
	if err := s.Unavailable(); err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		committing, err := s.tx(ctx, fn)
		retry := s.dialect.isRetryable(err) || (!committing && s.dialect.lostConnection(err))
		if err == nil || attempt == txAttempts || !retry {
			return err
		}
		s.log.Debug("transaction retried", "attempt", attempt, "err", err)
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt*(1+rand.IntN(10))) * time.Millisecond):
		}
	}
}

// Record runs fn in a transaction for bookkeeping that is not a change of
// configuration (the integrations' outbox and delivery log): it writes no
// event and does not move Generation, so caches and change followers are
// not woken. On SQLite it shares the group commit with changes.
func (s *Store) Record(ctx context.Context, fn func(tx *Tx) error) error {
	return s.Tx(ctx, func(tx *Tx) error {
		tx.bookkeeping = true
		return fn(tx)
	})
}

// tx is one attempt of Tx; committing is set when the error came from
// the commit itself.
func (s *Store) tx(ctx context.Context, fn func(tx *Tx) error) (committing bool, err error) {
	if s.commits != nil {
		return false, s.commits.run(ctx, fn)
	}
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, s.translate(err)
	}
	tx := &Tx{sqlTx: sqlTx, at: Millis(s.now())}
	tx.Q = Q{ctx: ctx, q: sqlTx, s: s, tx: tx}
	if err := s.runTx(tx, fn); err != nil {
		_ = sqlTx.Rollback()
		return false, err
	}
	if err := sqlTx.Commit(); err != nil {
		if s.dialect.lostConnection(err) {
			s.dropIdleConnections()
			return true, unavailable(err, "the connection to the database broke while the change was being committed, so it may or may not have been saved")
		}
		return true, s.translate(err)
	}
	s.committed(tx)
	return false, nil
}

// committed publishes what a committed transaction changed.
func (s *Store) committed(tx *Tx) {
	s.wrote()
	s.observeRevision(tx.maxID)
	if tx.events > 0 || (tx.changed && !tx.bookkeeping) {
		s.bumpGeneration()
	}
	if tx.credentialsChanged {
		s.credentialRevision.Add(1)
	}
	if tx.accessChanged {
		s.accessRevision.Add(1)
	}
}

// credentialEventPrefixes are the event types that change who may log in.
var credentialEventPrefixes = []string{"api-token-", "user-", "pat-", "service-account-"}

// accessEventPrefixes are the event types that change who may do what:
// roles, groups, project access and modes, people's root roles.
var accessEventPrefixes = []string{"role-", "group-", "project-", "user-", "service-account-"}

func (s *Store) runTx(tx *Tx, fn func(tx *Tx) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("store: panic in transaction: %v", p)
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if tx.changed && tx.events == 0 && !tx.bookkeeping {
		return ErrChangeWithoutEvent
	}
	return tx.writePending()
}

// writePending writes a PostgreSQL transaction's events, taking the event
// lock (pgWriteEventSQL), which it then holds until the commit: event ids
// follow commit order, and the lock is held for these inserts and the
// commit only.
func (tx *Tx) writePending() error {
	for _, p := range tx.pending {
		id, err := tx.insertEvent(p.ev, p.data, p.pre, p.tags)
		if err != nil {
			return err
		}
		tx.maxID = max(tx.maxID, id)
	}
	tx.pending = nil
	return nil
}

// Event is one entry of the event log.
type Event struct {
	ID              int64           `json:"id"`
	Type            string          `json:"type"`
	CreatedBy       string          `json:"createdBy"`
	CreatedByUserID *int64          `json:"createdByUserId"`
	CreatedAt       time.Time       `json:"createdAt"`
	Data            json.RawMessage `json:"data"`
	PreData         json.RawMessage `json:"preData"`
	Tags            json.RawMessage `json:"tags"`
	FeatureName     *string         `json:"featureName"`
	Project         *string         `json:"project"`
	Environment     *string         `json:"environment"`
}

// Actor is who makes a change; it fills createdBy and createdByUserId.
type Actor struct {
	Name   string
	UserID *int64
}

// NewEvent describes an event to write. Data and PreData are encoded as
// JSON; nil stays null.
type NewEvent struct {
	Type        string
	Actor       Actor
	FeatureName string
	Project     string
	Environment string
	Data        any
	PreData     any
}

// Event writes ev in this transaction. Like Unleash, an update event whose
// data equals its previous data is dropped (no-op updates log nothing); use
// Changed to tell whether anything was written.
func (tx *Tx) Event(ev NewEvent) error {
	data, err := encodeNullable(ev.Data)
	if err != nil {
		return err
	}
	pre, err := encodeNullable(ev.PreData)
	if err != nil {
		return err
	}
	if data != nil && pre != nil && jsonEqual(data, pre) {
		tx.events++ // accounted for: the change was a no-op
		return nil
	}
	tags := "[]"
	if ev.FeatureName != "" {
		tags, err = tx.featureTagsJSON(ev.FeatureName)
		if err != nil {
			return err
		}
	}
	if tx.s.dialect.Name == "postgres" {
		// Written at the end, under the event lock (writePending).
		tx.pending = append(tx.pending, pendingEvent{ev: ev, data: data, pre: pre, tags: tags})
	} else {
		id, err := tx.insertEvent(ev, data, pre, tags)
		if err != nil {
			return err
		}
		body := ev.Type + " " + actorName(ev.Actor) + " " + deref(data) + " " + deref(pre) + " " + tags
		if _, err := tx.exec(`INSERT INTO events_fts (rowid, body) VALUES ($1, $2)`, id, body); err != nil {
			return err
		}
		tx.maxID = max(tx.maxID, id)
	}
	tx.events++
	for _, p := range credentialEventPrefixes {
		if strings.HasPrefix(ev.Type, p) {
			tx.credentialsChanged = true
		}
	}
	for _, p := range accessEventPrefixes {
		if strings.HasPrefix(ev.Type, p) {
			tx.accessChanged = true
		}
	}
	return nil
}

const (
	insertEventSQL = `INSERT INTO events (type, created_by, created_by_user_id, created_at, data, pre_data, tags, feature_name, project, environment)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`
	countEventSQL = `INSERT INTO event_counts (type, project, feature_name, n) VALUES ($1, $2, $3, 1)
		ON CONFLICT (type, project, feature_name) DO UPDATE SET n = event_counts.n + 1`
)

// insertEvent writes the event row and counts it. PostgreSQL does both, with
// the event lock and the NOTIFY, in one statement (pgWriteEventSQL; $11 and
// $12 are the counter's non-null project and flag); SQLite, in process,
// runs them in turn.
func (tx *Tx) insertEvent(ev NewEvent, data, pre *string, tags string) (int64, error) {
	args := []any{ev.Type, actorName(ev.Actor), ev.Actor.UserID, tx.at, data, pre, tags,
		nullString(ev.FeatureName), nullString(ev.Project), nullString(ev.Environment)}
	var id int64
	if tx.s.dialect.Name == "postgres" {
		err := tx.row([]any{&id}, pgWriteEventSQL, append(args, ev.Project, ev.FeatureName)...)
		return id, err
	}
	if err := tx.row([]any{&id}, insertEventSQL, args...); err != nil {
		return 0, err
	}
	_, err := tx.exec(countEventSQL, ev.Type, ev.Project, ev.FeatureName)
	return id, err
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// featureTagsJSON returns the flag's current tags for an event.
func (tx *Tx) featureTagsJSON(feature string) (string, error) {
	return featureTagsForEvent(tx.Q, feature)
}

func actorName(a Actor) string {
	if a.Name == "" {
		return "unknown"
	}
	return a.Name
}

func encodeNullable(v any) (*string, error) {
	if v == nil {
		return nil, nil
	}
	if rv := reflect.ValueOf(v); (rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Map || rv.Kind() == reflect.Slice) && rv.IsNil() {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode event data: %w", err)
	}
	s := string(b)
	return &s, nil
}

func jsonEqual(a, b *string) bool {
	var x, y any
	if json.Unmarshal([]byte(*a), &x) != nil || json.Unmarshal([]byte(*b), &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// nullString stores "" as NULL.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Now is the transaction's timestamp (all its events share it).
func (tx *Tx) Now() time.Time { return FromMillis(tx.at) }
