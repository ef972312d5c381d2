package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// Storage trouble: the database, not the request, is why something
// failed. The driver's errors are named here, once, as the apierr storage
// kinds (DatabaseUnavailable, DatabaseReadOnly, DatabaseBusy, DatabaseFull),
// so that an operator can tell them from a bug and clients may retry.
//
// The store also remembers the trouble it is in. While the database cannot
// be reached ("down"), transactions fail at once instead of each waiting
// for a connection, a probe looks for the database every probeInterval,
// and readers of derived data (the client snapshot, the token table) keep
// what they have. A write refused because the disk is full or the database
// is read-only is remembered until a write succeeds, so that Ready can say
// that writes do not work although the database answers.

// probeInterval is how often a store that lost its database tries it
// again; writes work again at most this long after it is back.
const probeInterval = 250 * time.Millisecond

// readyTimeout bounds Ready's query.
const readyTimeout = time.Second

// sqliteBusyTimeout, in milliseconds, is how long an SQLite statement waits
// for a lock that another connection holds before it fails with
// DatabaseBusy. It is long because this server's own writes outside a
// transaction (SDK metrics, signal claims) wait on it for each other and
// for the transactions' writer under load; another process that holds the
// lock (a tool with a transaction open) delays changes by as much.
const sqliteBusyTimeout = "10000"

// postgresConnectTimeout bounds each new PostgreSQL connection (TCP, TLS
// and authentication) unless DATABASE_URL sets connect_timeout, so that a
// write fails within about a second when the server is unreachable.
const postgresConnectTimeout = "1"

// unavailable is DatabaseUnavailable with its cause.
func unavailable(err error, cause string) *apierr.Error {
	return apierr.Database(apierr.KindDatabaseUnavailable, err, "The database is unavailable: "+cause+
		". SDKs are still served the flags this server last loaded; changes cannot be saved until the database is back.")
}

func readOnly(err error, cause string) *apierr.Error {
	return apierr.Database(apierr.KindDatabaseReadOnly, err, "The database is read-only: "+cause+
		". SDKs are still served the flags this server last loaded; changes cannot be saved until it is writable.")
}

func busy(err error, cause string) *apierr.Error {
	return apierr.Database(apierr.KindDatabaseBusy, err, "The database is busy: "+cause+". Try again.")
}

func full(err error) *apierr.Error {
	return apierr.Database(apierr.KindDatabaseFull, err, "The change was not saved: the database disk is full."+
		" SDKs are still served the flags this server last loaded; free space on the database's disk.")
}

// sqliteStorageError names SQLite's storage errors (nil for others).
func sqliteStorageError(err error) *apierr.Error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil // the caller gave up
	}
	var e *sqlite.Error
	if !errors.As(err, &e) {
		if errors.Is(err, errWriterTimeout) {
			return busy(err, "the change waited too long for the other changes being written")
		}
		return nil
	}
	switch e.Code() & 0xff { // the primary code of an extended one
	case sqlite3.SQLITE_FULL:
		return full(err)
	case sqlite3.SQLITE_READONLY:
		return readOnly(err, "SQLite cannot write the database file (a read-only file or file system)")
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return busy(err, "the database file is locked by another process or connection (SQLITE_BUSY)")
	case sqlite3.SQLITE_IOERR:
		return unavailable(err, "reading or writing the database file failed (disk I/O error)")
	case sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PERM, sqlite3.SQLITE_AUTH:
		return unavailable(err, "the database file cannot be opened")
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return unavailable(err, "the database file is damaged or not a database")
	}
	return nil
}

// postgresStorageError names PostgreSQL's storage errors (nil for others).
// A caller that gave up (its context ended) is not storage trouble, but a
// connection that timed out is.
func postgresStorageError(err error) *apierr.Error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return unavailable(err, connectCause(err))
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "25006": // read_only_sql_transaction
			return readOnly(err, "PostgreSQL refuses writes (a standby, or default_transaction_read_only)")
		case pe.Code == "53100": // disk_full
			return full(err)
		case pe.Code == "57014": // query_canceled: statement_timeout
			return busy(err, "a statement took longer than PostgreSQL's statement_timeout")
		case pe.Code == "55P03": // lock_not_available: lock_timeout
			return busy(err, "a lock was held longer than PostgreSQL's lock_timeout")
		case pe.Code == "40001" || pe.Code == "40P01":
			return busy(err, "the change kept conflicting with concurrent changes")
		case pe.Code == "53300" || pe.Code == "57P03":
			return unavailable(err, "PostgreSQL accepts no connections now (SQLSTATE "+pe.Code+")")
		case lostCode(pe.Code):
			return unavailable(err, "PostgreSQL ended the connection (SQLSTATE "+pe.Code+")")
		}
		return nil
	}
	if postgresLostConnection(err) {
		return unavailable(err, "the connection to PostgreSQL was lost")
	}
	return nil
}

// lostCode reports SQLSTATEs with which PostgreSQL ends a session:
// connection exceptions (class 08), admin_shutdown, crash_shutdown and
// idle_session_timeout.
func lostCode(code string) bool {
	return strings.HasPrefix(code, "08") || code == "57P01" || code == "57P02" || code == "57P05"
}

// postgresLostConnection reports an established connection that broke:
// the statement that saw it did not commit, so a transaction may run again
// on another connection.
func postgresLostConnection(err error) bool {
	var ce *pgconn.ConnectError
	if err == nil || errors.As(err, &ce) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // not established, or the caller gave up
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return lostCode(pe.Code)
	}
	var ne net.Error
	return errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.As(err, &ne)
}

// connectCause says why a new PostgreSQL connection failed, without the
// host, user or database names that pgx's message carries.
func connectCause(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "55000":
			return "the database does not accept connections (SQLSTATE 55000)"
		case "57P03":
			return "PostgreSQL is starting up or shutting down (SQLSTATE 57P03)"
		case "53300":
			return "PostgreSQL has no connection slots left (SQLSTATE 53300)"
		case "28P01", "28000":
			return "PostgreSQL refused the credentials (SQLSTATE " + pe.Code + ")"
		case "3D000":
			return "the database does not exist (SQLSTATE 3D000)"
		}
		return "PostgreSQL refused the connection (SQLSTATE " + pe.Code + ")"
	}
	var errno syscall.Errno
	switch {
	case pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded):
		return "no answer from PostgreSQL within the connect timeout"
	case errors.As(err, &errno):
		return "cannot reach PostgreSQL (" + errno.Error() + ")"
	}
	return "cannot connect to PostgreSQL"
}

// storageError names err when it is storage trouble, and remembers the
// trouble: a database that cannot be reached marks the store down, an
// established connection that broke clears the idle ones (which broke
// too, most likely), a refused write is remembered for Ready.
func (s *Store) storageError(err error) *apierr.Error {
	e := s.dialect.storage(err)
	if e == nil {
		return nil
	}
	switch {
	case e.Kind == apierr.KindDatabaseUnavailable && s.dialect.lostConnection(err):
		s.dropIdleConnections()
	case e.Kind == apierr.KindDatabaseUnavailable:
		s.markDown(e)
	case e.Kind == apierr.KindDatabaseFull || e.Kind == apierr.KindDatabaseReadOnly:
		s.refused(e)
	}
	return e
}

// refused remembers a write refused for a full disk or a read-only
// database, for Ready, until a write succeeds.
func (s *Store) refused(e *apierr.Error) {
	if prev := s.writeTrouble.Swap(e); prev == nil || prev.Kind != e.Kind {
		s.log.Warn("the database refuses changes: "+e.ErrorName(), "err", e.Err)
	}
}

// dropIdleConnections closes the pool's idle connections, so that the next
// statement opens a new one rather than finding the next broken one.
func (s *Store) dropIdleConnections() {
	s.db.SetMaxIdleConns(0)
	s.db.SetMaxIdleConns(s.maxConns)
}

// markDown records that the database cannot be reached and starts the
// probe that notices its return.
func (s *Store) markDown(e *apierr.Error) {
	if !s.down.CompareAndSwap(nil, e) {
		return
	}
	s.log.Warn("the database is unavailable: changes are refused and SDKs are served from memory until it is back", "err", e.Err)
	s.dropIdleConnections()
	go s.probe(time.Now())
}

// probe tries the database every probeInterval until it answers (or the
// store is closed), then marks it up.
func (s *Store) probe(since time.Time) {
	t := time.NewTicker(probeInterval)
	defer t.Stop()
	for {
		select {
		case <-s.closed:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
		_, err := s.LatestEventID(ctx)
		cancel()
		if err == nil {
			s.down.Store(nil)
			s.log.Warn("the database is available again", "after", time.Since(since).Round(time.Millisecond))
			return
		}
	}
}

// Unavailable returns the error that the database cannot be reached, or
// nil while it can (as far as the store knows). Caches of derived data
// keep their copy while it is not nil.
func (s *Store) Unavailable() error {
	if e := s.down.Load(); e != nil {
		return e
	}
	return nil
}

// wrote records that a write succeeded: a full disk or a read-only
// database is no longer in the way.
func (s *Store) wrote() {
	if s.writeTrouble.Load() != nil {
		if prev := s.writeTrouble.Swap(nil); prev != nil {
			s.log.Warn("the database accepts changes again", "was", prev.ErrorName())
		}
	}
}

// Ready reports whether changes can be saved now: the database answers a
// query within a second (on PostgreSQL, and is not read-only), and the
// last write was not refused for a full disk or a read-only database
// (SQLite cannot tell that without writing; the next successful write
// clears it). The error is the named storage error.
func (s *Store) Ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if _, err := s.LatestEventID(ctx); err != nil {
		if apierr.IsDatabase(err) {
			return err
		}
		return unavailable(err, fmt.Sprintf("no answer within %v", readyTimeout))
	}
	if s.dialect.Name == "postgres" {
		var ro bool
		err := s.db.QueryRowContext(ctx, `SELECT pg_is_in_recovery() OR current_setting('transaction_read_only') = 'on'`).Scan(&ro)
		switch {
		case err != nil:
			if e := s.storageError(err); e != nil {
				return e
			}
			return unavailable(err, "PostgreSQL did not say whether it accepts writes")
		case ro:
			e := readOnly(nil, "PostgreSQL refuses writes (a standby, or default_transaction_read_only)")
			s.refused(e)
			return e
		}
		if e := s.writeTrouble.Load(); e != nil && e.Kind == apierr.KindDatabaseReadOnly {
			s.wrote() // PostgreSQL says it takes writes again
		}
	}
	if e := s.writeTrouble.Load(); e != nil {
		return e
	}
	return nil
}

// errWriterTimeout is a change that waited longer than groupTimeout for
// SQLite's writer.
var errWriterTimeout = errors.New("store: timed out waiting for the SQLite writer")
