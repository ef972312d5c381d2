// Package store is Bunting's one database/sql implementation for SQLite
// (modernc.org/sqlite, the default) and PostgreSQL (pgx). Every SQL text uses
// $N placeholders, which both drivers accept; the few differences live in
// Dialect. Schema migrations (goose, embedded) run when the store opens.
//
// Every change goes through Store.Tx, and every change writes its event in
// the same transaction (Tx.Event): a change and its event commit together or
// not at all. A transaction that changed rows without writing an event is
// rolled back with an error.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/secretbox"
)

//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrationFiles embed.FS

// Config says which database to open.
type Config struct {
	// URL is a postgres:// (or postgresql://) URL; when empty, SQLite is used.
	URL string
	// Path is the SQLite file; its directory is created when missing.
	Path string
	// Logger receives migration and maintenance messages; nil discards them.
	Logger *slog.Logger
}

// Dialect holds what differs between the two databases.
type Dialect struct {
	// Name is "sqlite" or "postgres".
	Name  string
	goose goose.Dialect
	dir   string
	// isUnique reports a unique or primary-key violation.
	isUnique func(error) bool
	// isForeignKey reports a foreign-key violation.
	isForeignKey func(error) bool
	// isRetryable reports a transaction aborted by a deadlock or a
	// serialization conflict, which succeeds when run again.
	isRetryable func(error) bool
	// storage names storage trouble (storage.go); lostConnection reports
	// an established connection that broke.
	storage        func(error) *apierr.Error
	lostConnection func(error) bool
}

var (
	sqliteDialect = Dialect{
		Name: "sqlite", goose: goose.DialectSQLite3, dir: "migrations/sqlite",
		isUnique: func(err error) bool {
			var e *sqlite.Error
			return errors.As(err, &e) && (e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
		},
		isForeignKey: func(err error) bool {
			var e *sqlite.Error
			return errors.As(err, &e) && e.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
		},
		isRetryable:    func(error) bool { return false }, // one writer at a time (groupCommit)
		storage:        sqliteStorageError,
		lostConnection: func(error) bool { return false },
	}
	postgresDialect = Dialect{
		Name: "postgres", goose: goose.DialectPostgres, dir: "migrations/postgres",
		isUnique: func(err error) bool {
			var e *pgconn.PgError
			return errors.As(err, &e) && e.Code == "23505"
		},
		isForeignKey: func(err error) bool {
			var e *pgconn.PgError
			return errors.As(err, &e) && e.Code == "23503"
		},
		isRetryable: func(err error) bool {
			var e *pgconn.PgError
			return errors.As(err, &e) && (e.Code == "40P01" || e.Code == "40001")
		},
		storage:        postgresStorageError,
		lostConnection: postgresLostConnection,
	}
)

// Store is an open database with its schema migrated.
type Store struct {
	// secrets seals the secrets of client and frontend tokens (tokens.go);
	// nil: stored hashed only.
	secrets *secretbox.Box
	db      *sql.DB
	dialect Dialect
	log     *slog.Logger
	// now is the clock used for timestamps; tests may replace it.
	now func() time.Time
	// revision is the highest event id this process has seen committed.
	revision atomic.Int64
	// credentialRevision counts committed changes to tokens and users.
	credentialRevision atomic.Int64
	// accessRevision counts committed changes to who may do what: roles,
	// groups, project access and modes, people's root roles.
	accessRevision atomic.Int64
	// commits runs this process's write transactions on SQLite, which has
	// a single writer, one group at a time (groupcommit.go). nil on
	// PostgreSQL.
	commits *groupCommit
	// generation changes whenever a change is seen: committed here, or
	// found by LatestEventID (including a late commit of a lower id).
	generation atomic.Int64
	// fingerprint is what LatestEventID saw last time.
	fingerprintMu sync.Mutex
	fingerprint   [2]int64
	// grams estimates how common each trigram of event text is, so that a
	// free-text search asks the index for rare ones (events_grams.go).
	grams   atomic.Pointer[gramSample]
	gramsMu sync.Mutex
	// changes is closed and replaced whenever Generation moves
	// (notify.go), so that followers wake up without polling.
	changesMu sync.Mutex
	changes   chan struct{}
	// url is the PostgreSQL URL, for the LISTEN connection (notify.go).
	url string
	// down is set while the database cannot be reached, writeTrouble
	// while writes are refused for a full disk or a read-only database
	// (storage.go); closed ends the probe of a store that is down.
	down, writeTrouble atomic.Pointer[apierr.Error]
	closed             chan struct{}
	closeOnce          sync.Once
	// maxConns is the pool's size (open and idle connections).
	maxConns int
	// held is the SQLite file, opened to keep the shared lock that tells
	// `bunting restore` a server uses it (backup.go); nil on PostgreSQL.
	held *os.File
}

// Generation changes whenever this process commits a change or sees one
// committed by another instance; caches of derived data key on it.
func (s *Store) Generation() int64 { return s.generation.Load() }

// CredentialRevision changes whenever this process commits a change to API
// tokens, users or their tokens; caches of credentials key on it.
func (s *Store) CredentialRevision() int64 { return s.credentialRevision.Load() }

// AccessRevision changes whenever this process commits a change to roles,
// groups, project access, projects or people; caches of permissions key on
// it.
func (s *Store) AccessRevision() int64 { return s.accessRevision.Load() }

// IsPostgresURL reports whether u selects PostgreSQL.
func IsPostgresURL(u string) bool {
	return strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://")
}

// Open connects, migrates and returns the store.
func Open(ctx context.Context, cfg Config) (*Store, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var (
		db      *sql.DB
		dialect Dialect
		err     error
		dbURL   = cfg.URL
	)
	switch {
	case IsPostgresURL(cfg.URL):
		dialect = postgresDialect
		dbURL = withConnectTimeout(cfg.URL)
		db, err = openPostgres(ctx, dbURL, log)
	case cfg.URL != "":
		return nil, fmt.Errorf("DATABASE_URL must be a postgres:// URL (got scheme %q); leave it empty for SQLite", schemeOf(cfg.URL))
	default:
		dialect = sqliteDialect
		db, err = openSQLite(cfg.Path)
	}
	if err != nil {
		return nil, err
	}
	s := &Store{db: db, dialect: dialect, log: log, now: time.Now, changes: make(chan struct{}), url: dbURL,
		closed: make(chan struct{}), maxConns: db.Stats().MaxOpenConnections}
	if dialect.Name == "sqlite" {
		s.commits = &groupCommit{s: s, slot: make(chan struct{}, 1)}
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to %s: %w", dialect.Name, err)
	}
	if dialect.Name == "sqlite" {
		if s.held, err = holdSQLite(sqlitePath(cfg.Path)); err != nil {
			db.Close()
			return nil, err
		}
	}
	if err := s.migrate(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if _, err := s.LatestEventID(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// withConnectTimeout adds connect_timeout to a PostgreSQL URL that does not
// set one (postgresConnectTimeout).
func withConnectTimeout(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Query().Has("connect_timeout") {
		return rawURL // pgx reports a URL it cannot parse
	}
	q := u.Query()
	q.Set("connect_timeout", postgresConnectTimeout)
	u.RawQuery = q.Encode()
	return u.String()
}

func schemeOf(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Scheme
	}
	return ""
}

// openPostgres connects to PostgreSQL so that a commit returns only once it
// is durable: when the server's default for this database or role is
// synchronous_commit=off (and the URL does not choose it), the sessions
// set it back to on. A server that runs with fsync=off cannot be made
// durable from here; that is logged as a warning.
func openPostgres(ctx context.Context, rawURL string, log *slog.Logger) (*sql.DB, error) {
	db, err := sql.Open("pgx", rawURL)
	if err != nil {
		return nil, err
	}
	var syncCommit, fsync string
	if err := db.QueryRowContext(ctx, `SELECT current_setting('synchronous_commit'), current_setting('fsync')`).Scan(&syncCommit, &fsync); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect to postgres: %w", err)
	}
	if fsync == "off" {
		log.Warn("PostgreSQL runs with fsync=off: acknowledged changes can be lost in an OS crash or a power cut")
	}
	if u, perr := url.Parse(rawURL); syncCommit == "off" && perr == nil && !u.Query().Has("synchronous_commit") {
		q := u.Query()
		q.Set("synchronous_commit", "on")
		u.RawQuery = q.Encode()
		db.Close()
		if db, err = sql.Open("pgx", u.String()); err != nil {
			return nil, err
		}
		log.Info("PostgreSQL defaults to synchronous_commit=off here; Bunting's sessions use on, so that acknowledged changes are durable")
	} else if syncCommit == "off" {
		log.Warn("DATABASE_URL sets synchronous_commit=off: acknowledged changes can be lost in an OS crash or a power cut")
	}
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	return db, nil
}

// sqliteURIPath escapes the characters that end the path of an SQLite URI
// filename, so a file named "a#1" or "b?c" is opened where it is.
var sqliteURIPath = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// sqlitePath is the SQLite file for a configured path ("" is the default).
func sqlitePath(path string) string {
	if path == "" {
		return filepath.Join("data", "bunting.db")
	}
	return path
}

func openSQLite(path string) (*sql.DB, error) {
	path = sqlitePath(path)
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create database directory: %w", err)
		}
	}
	// synchronous(FULL): in WAL mode every commit syncs the log before it
	// returns, so an acknowledged change survives an OS crash or a power
	// cut (NORMAL only survives a crash of this process).
	//
	// cache_size(-256): each connection keeps 256 KiB of pages rather than
	// SQLite's 2 MiB. Loading a large configuration fills every
	// connection's cache to its limit and the process keeps it; the
	// operating system caches the file anyway, and toggles and event
	// searches measure no slower (docs/benchmarks.md).
	dsn := "file:" + sqliteURIPath.Replace(path) + "?_pragma=busy_timeout(" + sqliteBusyTimeout + ")&_pragma=journal_mode(WAL)" +
		"&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_pragma=cache_size(-256)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(4)
	db.SetMaxIdleConns(4)
	return db, nil
}

func (s *Store) migrate(ctx context.Context) error {
	sub, err := fs.Sub(migrationFiles, s.dialect.dir)
	if err != nil {
		return err
	}
	var opts []goose.ProviderOption
	if s.dialect.Name == "postgres" {
		locker, err := lock.NewPostgresSessionLocker()
		if err != nil {
			return err
		}
		opts = append(opts, goose.WithSessionLocker(locker))
	}
	p, err := goose.NewProvider(s.dialect.goose, s.db, sub, opts...)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if err := checkSchemaKnown(ctx, s.db, s.dialect); err != nil {
		return err
	}
	res, err := p.Up(ctx)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", s.dialect.Name, err)
	}
	for _, r := range res {
		s.log.Info("migration applied", "version", r.Source.Version, "file", filepath.Base(r.Source.Path))
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error {
	s.closeOnce.Do(func() { close(s.closed) })
	err := s.db.Close()
	if s.held != nil {
		s.held.Close()
	}
	return err
}

// Dialect returns the database dialect.
func (s *Store) Dialect() Dialect { return s.dialect }

// DB returns the underlying database, for telemetry writes that are not
// changes (client metrics, registrations) and for tests.
func (s *Store) DB() *sql.DB { return s.db }

// Now returns the store clock's current time.
func (s *Store) Now() time.Time { return s.now() }

// SetClock replaces the clock (tests only).
func (s *Store) SetClock(now func() time.Time) { s.now = now }

// Revision is the highest event id this process knows to be committed. It
// rises when this process commits a change, or when LatestEventID sees
// changes made by another instance.
func (s *Store) Revision() int64 { return s.revision.Load() }

func (s *Store) observeRevision(id int64) {
	for {
		cur := s.revision.Load()
		if id <= cur || s.revision.CompareAndSwap(cur, id) {
			return
		}
	}
}

// recentWindow is how many of the newest event ids LatestEventID counts, to
// notice a transaction that took a lower id but committed after a higher
// one (PostgreSQL sequences do not follow commit order).
const recentWindow = 1000

// LatestEventID reads the highest event id from the database (a cheap
// primary-key lookup), raises Revision to it, and advances Generation when
// anything changed since the last look.
//
// A connection found broken (the database restarted) is replaced and the
// read tried again once: it is what the probe of a store that lost its
// database and Ready ask first.
func (s *Store) LatestEventID(ctx context.Context) (int64, error) {
	id, recent, err := s.latestEvents(ctx)
	if err != nil && s.dialect.lostConnection(err) {
		id, recent, err = s.latestEvents(ctx)
	}
	if err != nil {
		return 0, err
	}
	s.observeRevision(id)
	s.fingerprintMu.Lock()
	if fp := [2]int64{id, recent}; fp != s.fingerprint {
		s.fingerprint = fp
		s.bumpGeneration()
	}
	s.fingerprintMu.Unlock()
	return id, nil
}

// latestEvents reads the highest event id and how many of the newest
// recentWindow ids are taken.
func (s *Store) latestEvents(ctx context.Context) (id, recent int64, err error) {
	var maxID sql.NullInt64
	if err := s.db.QueryRowContext(ctx, `SELECT MAX(id) FROM events`).Scan(&maxID); err != nil {
		return 0, 0, s.translate(err)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM events WHERE id > $1`, maxID.Int64-recentWindow).Scan(&recent); err != nil {
		return 0, 0, s.translate(err)
	}
	return maxID.Int64, recent, nil
}

// translate turns driver errors into domain errors.
func (s *Store) translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return apierr.NotFound("the resource does not exist")
	case s.dialect.isUnique(err):
		return &apierr.Error{Kind: apierr.KindConflict, Message: "a resource with that name already exists", Err: err}
	case s.dialect.isForeignKey(err):
		return &apierr.Error{Kind: apierr.KindConflict, Name: "ConflictError", Message: "the change conflicts with a related resource", Err: err}
	}
	var ae *apierr.Error
	if errors.As(err, &ae) {
		return err
	}
	if e := s.storageError(err); e != nil {
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return apierr.Internal(err)
}

// IsUniqueViolation reports whether err is (or wraps) a unique violation.
func (s *Store) IsUniqueViolation(err error) bool { return s.dialect.isUnique(err) }

// Millis converts a time to the stored unix-millisecond form.
func Millis(t time.Time) int64 { return t.UnixMilli() }

// FromMillis converts stored unix milliseconds to a UTC time.
func FromMillis(ms int64) time.Time { return time.UnixMilli(ms).UTC() }
