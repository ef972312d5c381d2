// Signal endpoints, their tokens, received signals and the per-second
// rate counter.

package store

import (
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// SignalEndpoint is a named address external systems post signals to.
type SignalEndpoint struct {
	ID              int64                 `json:"id"`
	Enabled         bool                  `json:"enabled"`
	Name            string                `json:"name"`
	CreatedAt       time.Time             `json:"createdAt"`
	CreatedByUserID *int64                `json:"createdByUserId"`
	Description     *string               `json:"description"`
	Tokens          []SignalEndpointToken `json:"tokens"`
}

// SignalEndpointToken is one credential of a signal endpoint; only the hash
// of its secret is stored.
type SignalEndpointToken struct {
	ID               int64     `json:"id"`
	Name             string    `json:"name"`
	SignalEndpointID int64     `json:"signalEndpointId"`
	CreatedAt        time.Time `json:"createdAt"`
	CreatedByUserID  *int64    `json:"createdByUserId"`
}

// Signal is one received notification with its payload.
type Signal struct {
	ID                int64           `json:"id"`
	Source            string          `json:"source"`
	SourceID          int64           `json:"sourceId"`
	TokenID           *int64          `json:"createdBySourceTokenId"`
	TokenName         *string         `json:"tokenName"`
	Payload           json.RawMessage `json:"payload"`
	CreatedAt         time.Time       `json:"createdAt"`
	SourceName        *string         `json:"sourceName,omitempty"`
	SourceDescription *string         `json:"sourceDescription,omitempty"`
}

// SignalSourceEndpoint is the Signal.Source of signals posted to an endpoint.
const SignalSourceEndpoint = "signal-endpoint"

// insertID runs an INSERT … RETURNING id and marks the transaction changed.
func (q Q) insertID(query string, args ...any) (int64, error) {
	var id int64
	err := q.row([]any{&id}, query, args...)
	if err == nil && q.tx != nil {
		q.tx.changed = true
	}
	return id, err
}

const signalEndpointColumns = `id, name, description, enabled, created_at, created_by_user_id`

func scanSignalEndpoint(sc interface{ Scan(...any) error }) (SignalEndpoint, error) {
	var (
		e       SignalEndpoint
		desc    sql.NullString
		created int64
		by      sql.NullInt64
	)
	err := sc.Scan(&e.ID, &e.Name, &desc, &e.Enabled, &created, &by)
	e.Description, e.CreatedAt, e.CreatedByUserID = strPtr(desc), FromMillis(created), int64Ptr(by)
	e.Tokens = []SignalEndpointToken{}
	return e, err
}

func int64Ptr(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	n := v.Int64
	return &n
}

// SignalEndpoints lists every endpoint with its tokens, by id.
func (q Q) SignalEndpoints() ([]SignalEndpoint, error) {
	out, err := collect(q, scanSignalEndpoint, `SELECT `+signalEndpointColumns+` FROM signal_endpoints ORDER BY id`)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].Tokens, err = q.SignalEndpointTokens(out[i].ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// SignalEndpoint returns one endpoint with its tokens, or NotFound.
func (q Q) SignalEndpoint(id int64) (SignalEndpoint, error) {
	return q.signalEndpointWhere(`id = $1`, id)
}

// SignalEndpointByName returns one endpoint with its tokens, or NotFound.
func (q Q) SignalEndpointByName(name string) (SignalEndpoint, error) {
	return q.signalEndpointWhere(`name = $1`, name)
}

func (q Q) signalEndpointWhere(cond string, arg any) (SignalEndpoint, error) {
	e, err := scanSignalEndpoint(q.q.QueryRowContext(q.ctx, `SELECT `+signalEndpointColumns+` FROM signal_endpoints WHERE `+cond, arg))
	if err == sql.ErrNoRows {
		return e, apierr.NotFound("Could not find signal endpoint %v", arg)
	}
	if err != nil {
		return e, q.s.translate(err)
	}
	e.Tokens, err = q.SignalEndpointTokens(e.ID)
	return e, err
}

// CountSignalEndpoints counts the endpoints.
func (q Q) CountSignalEndpoints() (int, error) {
	var n int
	err := q.row([]any{&n}, `SELECT COUNT(*) FROM signal_endpoints`)
	return n, err
}

// InsertSignalEndpoint creates an endpoint and returns its id; a taken
// name is a Conflict.
func (q Q) InsertSignalEndpoint(e SignalEndpoint) (int64, error) {
	id, err := q.insertID(`INSERT INTO signal_endpoints (name, description, enabled, created_at, created_by_user_id)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`, e.Name, nullableText(e.Description), e.Enabled, Millis(e.CreatedAt), e.CreatedByUserID)
	if apierr.IsKind(err, apierr.KindConflict) {
		return 0, apierr.Conflict("A signal endpoint with the name %s already exists", e.Name)
	}
	return id, err
}

// UpdateSignalEndpoint stores an endpoint's name, description and enabled state.
func (q Q) UpdateSignalEndpoint(e SignalEndpoint) error {
	n, err := q.exec(`UPDATE signal_endpoints SET name = $2, description = $3, enabled = $4 WHERE id = $1`,
		e.ID, e.Name, nullableText(e.Description), e.Enabled)
	if apierr.IsKind(err, apierr.KindConflict) {
		return apierr.Conflict("A signal endpoint with the name %s already exists", e.Name)
	}
	if err == nil && n == 0 {
		return apierr.NotFound("Could not find signal endpoint %d", e.ID)
	}
	return err
}

// DeleteSignalEndpoint removes an endpoint with its tokens and signals.
func (q Q) DeleteSignalEndpoint(id int64) error {
	if _, err := q.exec(`DELETE FROM signal_endpoint_rate WHERE endpoint_id = $1`, id); err != nil {
		return err
	}
	n, err := q.exec(`DELETE FROM signal_endpoints WHERE id = $1`, id)
	if err == nil && n == 0 {
		return apierr.NotFound("Could not find signal endpoint %d", id)
	}
	return err
}

const signalTokenColumns = `id, endpoint_id, name, created_at, created_by_user_id`

func scanSignalToken(sc interface{ Scan(...any) error }) (SignalEndpointToken, error) {
	var (
		t       SignalEndpointToken
		created int64
		by      sql.NullInt64
	)
	err := sc.Scan(&t.ID, &t.SignalEndpointID, &t.Name, &created, &by)
	t.CreatedAt, t.CreatedByUserID = FromMillis(created), int64Ptr(by)
	return t, err
}

// SignalEndpointTokens lists an endpoint's tokens by id.
func (q Q) SignalEndpointTokens(endpointID int64) ([]SignalEndpointToken, error) {
	return collect(q, scanSignalToken, `SELECT `+signalTokenColumns+` FROM signal_endpoint_tokens WHERE endpoint_id = $1 ORDER BY id`, endpointID)
}

// SignalEndpointToken returns one token of an endpoint, or NotFound.
func (q Q) SignalEndpointToken(endpointID, id int64) (SignalEndpointToken, error) {
	t, err := scanSignalToken(q.q.QueryRowContext(q.ctx, `SELECT `+signalTokenColumns+
		` FROM signal_endpoint_tokens WHERE endpoint_id = $1 AND id = $2`, endpointID, id))
	if err == sql.ErrNoRows {
		return t, apierr.NotFound("Could not find token %d of signal endpoint %d", id, endpointID)
	}
	return t, q.s.translate(err)
}

// SignalEndpointTokenByHash finds an endpoint's token by its secret's hash.
func (q Q) SignalEndpointTokenByHash(endpointID int64, hash string) (SignalEndpointToken, error) {
	t, err := scanSignalToken(q.q.QueryRowContext(q.ctx, `SELECT `+signalTokenColumns+
		` FROM signal_endpoint_tokens WHERE endpoint_id = $1 AND secret_hash = $2`, endpointID, hash))
	if err == sql.ErrNoRows {
		return t, apierr.NotFound("no such signal endpoint token")
	}
	return t, q.s.translate(err)
}

// CountSignalEndpointTokens counts an endpoint's tokens.
func (q Q) CountSignalEndpointTokens(endpointID int64) (int, error) {
	var n int
	err := q.row([]any{&n}, `SELECT COUNT(*) FROM signal_endpoint_tokens WHERE endpoint_id = $1`, endpointID)
	return n, err
}

// InsertSignalEndpointToken stores a token (its secret hashed) and returns its id.
func (q Q) InsertSignalEndpointToken(t SignalEndpointToken, secret string) (int64, error) {
	return q.insertID(`INSERT INTO signal_endpoint_tokens (endpoint_id, name, secret_hash, created_at, created_by_user_id)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`, t.SignalEndpointID, t.Name, HashSecret(secret), Millis(t.CreatedAt), t.CreatedByUserID)
}

// RenameSignalEndpointToken renames a token.
func (q Q) RenameSignalEndpointToken(endpointID, id int64, name string) error {
	_, err := q.exec(`UPDATE signal_endpoint_tokens SET name = $3 WHERE endpoint_id = $1 AND id = $2`, endpointID, id, name)
	return err
}

// DeleteSignalEndpointToken removes a token.
func (q Q) DeleteSignalEndpointToken(endpointID, id int64) error {
	_, err := q.exec(`DELETE FROM signal_endpoint_tokens WHERE endpoint_id = $1 AND id = $2`, endpointID, id)
	return err
}

// HitSignalRate counts one request for an endpoint in the window starting
// at windowStart (unix milliseconds) and returns the window's count so far.
// The upsert is atomic, so instances sharing a database share the count.
func (q Q) HitSignalRate(endpointID, windowStart int64) (int64, error) {
	var hits int64
	err := q.row([]any{&hits}, `INSERT INTO signal_endpoint_rate (endpoint_id, window_start, hits) VALUES ($1, $2, 1)
		ON CONFLICT (endpoint_id, window_start) DO UPDATE SET hits = signal_endpoint_rate.hits + 1
		RETURNING hits`, endpointID, windowStart)
	return hits, err
}

// PruneSignalRate deletes rate windows that started before before.
func (q Q) PruneSignalRate(before time.Time) error {
	_, err := q.exec(`DELETE FROM signal_endpoint_rate WHERE window_start < $1`, Millis(before))
	return err
}

// InsertSignal stores a received signal and returns it with its id.
func (q Q) InsertSignal(sg Signal) (Signal, error) {
	id, err := q.insertID(`INSERT INTO signals (source, source_id, token_id, token_name, payload, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		sg.Source, sg.SourceID, sg.TokenID, nullableText(sg.TokenName), string(sg.Payload), Millis(sg.CreatedAt))
	sg.ID = id
	return sg, err
}

// SignalFilter selects signals; zero fields do not filter.
type SignalFilter struct {
	SourceID int64
	From, To *time.Time
	Limit    int
	Offset   int
}

// Signals returns the signals matching f, newest first, with their
// endpoint's name and description, and how many match in all.
func (q Q) Signals(f SignalFilter) ([]Signal, int, error) {
	var (
		conds []string
		args  []any
	)
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.SourceID != 0 {
		add("s.source_id = ?", f.SourceID)
	}
	if f.From != nil {
		add("s.created_at >= ?", Millis(*f.From))
	}
	if f.To != nil {
		add("s.created_at < ?", Millis(*f.To))
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	var total int
	if err := q.row([]any{&total}, `SELECT COUNT(*) FROM signals s`+where, args...); err != nil {
		return nil, 0, err
	}
	args = append(args, max(f.Limit, 1), max(f.Offset, 0))
	out, err := collect(q, func(row scanner) (Signal, error) {
		var (
			sg          Signal
			tokenID     sql.NullInt64
			tokenName   sql.NullString
			payload     string
			created     int64
			name        string
			description sql.NullString
		)
		err := row.Scan(&sg.ID, &sg.Source, &sg.SourceID, &tokenID, &tokenName, &payload, &created, &name, &description)
		sg.TokenID, sg.TokenName, sg.Payload, sg.CreatedAt = int64Ptr(tokenID), strPtr(tokenName), json.RawMessage(payload), FromMillis(created)
		sg.SourceName, sg.SourceDescription = &name, strPtr(description)
		return sg, err
	}, `SELECT s.id, s.source, s.source_id, s.token_id, s.token_name, s.payload, s.created_at, e.name, e.description
		FROM signals s JOIN signal_endpoints e ON e.id = s.source_id`+where+
		` ORDER BY s.id DESC LIMIT $`+strconv.Itoa(len(args)-1)+` OFFSET $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, 0, err
	}
	return out, total, nil
}

// HasUnprocessedSignals reports whether some signal awaits processing,
// claimed or not.
func (q Q) HasUnprocessedSignals() (bool, error) {
	var id sql.NullInt64
	err := q.row([]any{&id}, `SELECT MIN(id) FROM signals WHERE processed_at IS NULL`)
	return id.Valid, err
}

// ReleaseAbandonedSignalClaims makes signals claimed before claimedBefore
// but never marked processed claimable again, and returns how many there
// were. Such a claim belongs to an instance that stopped (or failed to
// record the result) while processing; only the lease holder calls this.
func (q Q) ReleaseAbandonedSignalClaims(claimedBefore time.Time) (int64, error) {
	return q.exec(`UPDATE signals SET claimed_by = NULL, claimed_at = NULL
		WHERE processed_at IS NULL AND claimed_by IS NOT NULL AND claimed_at < $1`, Millis(claimedBefore))
}

// ClaimNextSignal marks the oldest unclaimed signal as claimed by holder
// and returns it; ok is false when none is left. The claim is one
// conditional UPDATE, so two instances can never claim the same signal.
func (q Q) ClaimNextSignal(holder string) (sg Signal, ok bool, err error) {
	var (
		tokenID   sql.NullInt64
		tokenName sql.NullString
		payload   string
		created   int64
	)
	err = q.row([]any{&sg.ID, &sg.Source, &sg.SourceID, &tokenID, &tokenName, &payload, &created},
		`UPDATE signals SET claimed_by = $1, claimed_at = $2
		WHERE id = (SELECT MIN(id) FROM signals WHERE claimed_by IS NULL) AND claimed_by IS NULL
		RETURNING id, source, source_id, token_id, token_name, payload, created_at`, holder, q.now())
	if apierr.IsKind(err, apierr.KindNotFound) {
		return sg, false, nil
	}
	if err != nil {
		return sg, false, err
	}
	sg.TokenID, sg.TokenName, sg.Payload, sg.CreatedAt = int64Ptr(tokenID), strPtr(tokenName), json.RawMessage(payload), FromMillis(created)
	return sg, true, nil
}

// MarkSignalProcessed records that a claimed signal's action sets have run.
func (q Q) MarkSignalProcessed(id int64) error {
	_, err := q.exec(`UPDATE signals SET processed_at = $2 WHERE id = $1`, id, q.now())
	return err
}

// CountUnprocessedSignals counts signals whose processing has not finished.
func (q Q) CountUnprocessedSignals() (int, error) {
	var n int
	err := q.row([]any{&n}, `SELECT COUNT(*) FROM signals WHERE processed_at IS NULL`)
	return n, err
}

// SignalClaimedBy returns the instance that claimed a signal (nil while
// unclaimed), for diagnostics.
func (q Q) SignalClaimedBy(id int64) (*string, error) {
	var by sql.NullString
	err := q.row([]any{&by}, `SELECT claimed_by FROM signals WHERE id = $1`, id)
	return strPtr(by), err
}

// Advisory lock keys for LockForLimit.
const (
	LimitKeySignalEndpoints int64 = 4_242_200 + iota
	LimitKeySignalTokens
	LimitKeyActionSets
)

// LockForLimit serializes, until this transaction ends, the creations that
// count against one limit, so concurrent creations on PostgreSQL cannot
// overshoot it. SQLite transactions are serialized already.
func (tx *Tx) LockForLimit(key int64) error {
	if tx.s.dialect.Name != "postgres" {
		return nil
	}
	_, err := tx.q.ExecContext(tx.ctx, `SELECT pg_advisory_xact_lock($1)`, key)
	return tx.s.translate(err)
}
