// Leases: which instance does a background job when several share the
// database (one row per job in the leases table).

package store

import (
	"database/sql"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// AcquireLease takes or renews the lease called name for holder until
// until, and reports whether holder holds it: it does unless another
// holder's lease is still running. A lease with no row yet is created, so
// a new job needs no migration.
func (q Q) AcquireLease(name, holder string, until time.Time) (bool, error) {
	n, err := q.exec(`INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
		WHERE leases.holder = excluded.holder OR leases.holder IS NULL OR leases.expires_at < $4`,
		name, holder, Millis(until), q.now())
	return n > 0, err
}

// ReleaseLease gives the lease called name up when holder holds it.
func (q Q) ReleaseLease(name, holder string) error {
	_, err := q.exec(`UPDATE leases SET holder = NULL, expires_at = 0 WHERE name = $1 AND holder = $2`, name, holder)
	return err
}

// LeaseHolder names the instance holding the lease called name ("" when
// none holds an unexpired one).
func (q Q) LeaseHolder(name string) (string, error) {
	var holder sql.NullString
	err := q.row([]any{&holder}, `SELECT holder FROM leases WHERE name = $1 AND expires_at >= $2`, name, q.now())
	if apierr.IsKind(err, apierr.KindNotFound) {
		return "", nil
	}
	return holder.String, err
}
