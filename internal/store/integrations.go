// Integrations (Unleash's addons), their outbox, delivery log and the
// database-held encryption key. The outbox is filled by a trigger on
// events (migration 00600), in the transaction that writes the event; the
// integrations package reads and empties it.

package store

import (
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// Integration is one configured integration as stored. Parameters holds
// the plain parameters; Secrets the encrypted secret ones (opaque here).
type Integration struct {
	ID           int64
	Provider     string
	Description  *string
	Enabled      bool
	Parameters   map[string]string
	Secrets      string
	Events       []string
	Projects     []string
	Environments []string
	CreatedAt    time.Time
}

const integrationColumns = `id, provider, description, enabled, parameters, secrets, events, projects, environments, created_at`

func scanIntegration(sc scanner) (Integration, error) {
	var (
		in                       Integration
		desc                     sql.NullString
		params, events, projects string
		envs                     string
		created                  int64
	)
	if err := sc.Scan(&in.ID, &in.Provider, &desc, &in.Enabled, &params, &in.Secrets, &events, &projects, &envs, &created); err != nil {
		return in, err
	}
	in.Description, in.CreatedAt = strPtr(desc), FromMillis(created)
	in.Parameters = map[string]string{}
	in.Events, in.Projects, in.Environments = []string{}, []string{}, []string{}
	for _, f := range []struct {
		text string
		dst  any
	}{{params, &in.Parameters}, {events, &in.Events}, {projects, &in.Projects}, {envs, &in.Environments}} {
		if err := json.Unmarshal([]byte(f.text), f.dst); err != nil {
			return in, err
		}
	}
	return in, nil
}

// Integrations lists every integration by id.
func (q Q) Integrations() ([]Integration, error) {
	return collect(q, scanIntegration, `SELECT `+integrationColumns+` FROM integrations ORDER BY id`)
}

// Integration returns one integration, or NotFound.
func (q Q) Integration(id int64) (Integration, error) {
	in, err := scanIntegration(q.q.QueryRowContext(q.ctx, `SELECT `+integrationColumns+` FROM integrations WHERE id = $1`, id))
	if err == sql.ErrNoRows {
		return in, apierr.NotFound("Could not find addon with id %d", id)
	}
	return in, q.s.translate(err)
}

// integrationArgs are the stored columns of in after id and created_at.
func integrationArgs(in Integration) ([]any, error) {
	out := []any{in.Provider, nullableText(in.Description), in.Enabled}
	for _, v := range []any{nonNilMap(in.Parameters)} {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out = append(out, string(b))
	}
	out = append(out, in.Secrets)
	for _, l := range [][]string{in.Events, in.Projects, in.Environments} {
		if l == nil {
			l = []string{}
		}
		b, err := json.Marshal(l)
		if err != nil {
			return nil, err
		}
		out = append(out, string(b))
	}
	return out, nil
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// InsertIntegration stores a new integration and returns its id.
func (q Q) InsertIntegration(in Integration) (int64, error) {
	args, err := integrationArgs(in)
	if err != nil {
		return 0, err
	}
	return q.insertID(`INSERT INTO integrations (provider, description, enabled, parameters, secrets, events, projects, environments, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`, append(args, Millis(in.CreatedAt))...)
}

// UpdateIntegration stores every field of in but its id and creation time.
func (q Q) UpdateIntegration(in Integration) error {
	args, err := integrationArgs(in)
	if err != nil {
		return err
	}
	n, err := q.exec(`UPDATE integrations SET provider = $2, description = $3, enabled = $4, parameters = $5, secrets = $6,
		events = $7, projects = $8, environments = $9 WHERE id = $1`, append([]any{in.ID}, args...)...)
	if err == nil && n == 0 {
		return apierr.NotFound("Could not find addon with id %d", in.ID)
	}
	return err
}

// DeleteIntegration removes an integration with its outbox and log.
func (q Q) DeleteIntegration(id int64) error {
	_, err := q.exec(`DELETE FROM integrations WHERE id = $1`, id)
	return err
}

// Delivery is one outbox row with its event.
type Delivery struct {
	ID            int64
	IntegrationID int64
	Attempts      int
	NextAttemptAt time.Time
	CreatedAt     time.Time
	Event         Event
}

// IntegrationsWithDeliveries lists the integrations that have something
// in the outbox.
func (q Q) IntegrationsWithDeliveries() ([]int64, error) {
	return collect(q, func(row scanner) (int64, error) {
		var id int64
		return id, row.Scan(&id)
	}, `SELECT i.id FROM integrations i WHERE EXISTS (SELECT 1 FROM integration_outbox o WHERE o.integration_id = i.id) ORDER BY i.id`)
}

// Deliveries returns an integration's first limit outbox rows in event
// order, with their events.
func (q Q) Deliveries(integrationID int64, limit int) ([]Delivery, error) {
	return collect(q, func(row scanner) (Delivery, error) {
		var (
			d             Delivery
			next, created int64
			ev            Event
			userID        sql.NullInt64
			evCreated     int64
			data, pre     sql.NullString
			tags          string
			f, p, e       sql.NullString
		)
		err := row.Scan(&d.ID, &d.IntegrationID, &d.Attempts, &next, &created,
			&ev.ID, &ev.Type, &ev.CreatedBy, &userID, &evCreated, &data, &pre, &tags, &f, &p, &e)
		if err != nil {
			return d, err
		}
		d.NextAttemptAt, d.CreatedAt = FromMillis(next), FromMillis(created)
		ev.CreatedByUserID, ev.CreatedAt = int64Ptr(userID), FromMillis(evCreated)
		if data.Valid {
			ev.Data = json.RawMessage(data.String)
		}
		if pre.Valid {
			ev.PreData = json.RawMessage(pre.String)
		}
		ev.Tags = json.RawMessage(tags)
		ev.FeatureName, ev.Project, ev.Environment = strPtr(f), strPtr(p), strPtr(e)
		d.Event = ev
		return d, nil
	}, `SELECT o.id, o.integration_id, o.attempts, o.next_attempt_at, o.created_at,
			e.id, e.type, e.created_by, e.created_by_user_id, e.created_at, e.data, e.pre_data, e.tags, e.feature_name, e.project, e.environment
		FROM integration_outbox o JOIN events e ON e.id = o.event_id
		WHERE o.integration_id = $1 ORDER BY o.id LIMIT $2`, integrationID, limit)
}

// CountDeliveries counts the outbox rows (of one integration, or of all
// with 0).
func (q Q) CountDeliveries(integrationID int64) (int, error) {
	var n int
	if integrationID == 0 {
		err := q.row([]any{&n}, `SELECT COUNT(*) FROM integration_outbox`)
		return n, err
	}
	err := q.row([]any{&n}, `SELECT COUNT(*) FROM integration_outbox WHERE integration_id = $1`, integrationID)
	return n, err
}

// DeliveryAttempt is one row of the delivery log.
type DeliveryAttempt struct {
	ID            int64
	IntegrationID int64
	DeliveryID    string
	// EventID names the event delivered; a test send has none and carries
	// its Event instead.
	EventID      *int64
	Event        json.RawMessage
	Attempt      int
	State        string
	StateDetails string
	Details      json.RawMessage
	CreatedAt    time.Time
}

// DeliveryOutcome is what one attempt did to its outbox row: Done removes
// it (delivered, or failed for good); otherwise it waits for RetryAt.
type DeliveryOutcome struct {
	OutboxID int64
	Done     bool
	RetryAt  time.Time
	Log      DeliveryAttempt
}

// recordChunk bounds the rows of one statement of RecordDeliveries (nine
// parameters a log row: well under both databases' parameter limits).
const recordChunk = 100

// RecordDeliveries applies attempts' outcomes to the outbox and writes
// them to the delivery log, in one bookkeeping transaction (Store.Record).
// The finished rows go in one DELETE and the log rows in one multi-row
// INSERT (per recordChunk), in the outcomes' order: a statement per
// delivery made this transaction, on the writer's path, cost more than
// the deliveries themselves.
func (tx *Tx) RecordDeliveries(outcomes []DeliveryOutcome) error {
	for start := 0; start < len(outcomes); start += recordChunk {
		if err := tx.recordDeliveries(outcomes[start:min(start+recordChunk, len(outcomes))]); err != nil {
			return err
		}
	}
	return nil
}

func (tx *Tx) recordDeliveries(outcomes []DeliveryOutcome) error {
	var (
		done []any
		in   strings.Builder
	)
	for _, o := range outcomes {
		switch {
		case o.OutboxID == 0:
		case o.Done:
			done = append(done, o.OutboxID)
			if len(done) > 1 {
				in.WriteString(", ")
			}
			in.WriteString(tx.s.placeholder(len(done)))
		default:
			if _, err := tx.exec(`UPDATE integration_outbox SET attempts = attempts + 1, next_attempt_at = $2 WHERE id = $1`, o.OutboxID, Millis(o.RetryAt)); err != nil {
				return err
			}
		}
	}
	if len(done) > 0 {
		if _, err := tx.exec(`DELETE FROM integration_outbox WHERE id IN (`+in.String()+`)`, done...); err != nil {
			return err
		}
	}
	logs := make([]DeliveryAttempt, len(outcomes))
	for i, o := range outcomes {
		logs[i] = o.Log
	}
	return tx.insertAttempts(logs)
}

// InsertDeliveryAttempt writes one row of the delivery log.
func (q Q) InsertDeliveryAttempt(a DeliveryAttempt) error {
	return q.insertAttempts([]DeliveryAttempt{a})
}

// insertAttempts writes rows of the delivery log in one statement.
func (q Q) insertAttempts(attempts []DeliveryAttempt) error {
	if len(attempts) == 0 {
		return nil
	}
	var (
		stmt strings.Builder
		args = make([]any, 0, 9*len(attempts))
	)
	stmt.WriteString(`INSERT INTO integration_events (integration_id, delivery_id, event_id, event, attempt, state, state_details, details, created_at) VALUES `)
	for i, a := range attempts {
		if i > 0 {
			stmt.WriteString(", ")
		}
		stmt.WriteString("(")
		for c := range 9 {
			if c > 0 {
				stmt.WriteString(", ")
			}
			stmt.WriteString(q.s.placeholder(len(args) + c + 1))
		}
		stmt.WriteString(")")
		args = append(args, attemptArgs(a)...)
	}
	_, err := q.exec(stmt.String(), args...)
	return err
}

// placeholder is the n-th parameter of a statement whose parameters are
// written in order: $n on PostgreSQL, but ? on SQLite, which looks each
// $n up by name among those before it while parsing and again while
// binding, a cost that grows with the square of a long statement's
// parameters.
func (s *Store) placeholder(n int) string {
	if s.dialect.Name == "sqlite" {
		return "?"
	}
	return "$" + strconv.Itoa(n)
}

// attemptArgs are a log row's nine column values.
func attemptArgs(a DeliveryAttempt) []any {
	var event any
	if len(a.Event) > 0 {
		event = string(a.Event)
	}
	details := "{}"
	if len(a.Details) > 0 {
		details = string(a.Details)
	}
	return []any{a.IntegrationID, a.DeliveryID, a.EventID, event, a.Attempt, a.State, a.StateDetails, details, Millis(a.CreatedAt)}
}

// DropDeliveries removes an integration's outbox rows (when it was
// disabled before they were sent), logging each with state and details;
// it returns how many there were.
func (tx *Tx) DropDeliveries(integrationID int64, state, details string, at time.Time) (int64, error) {
	if _, err := tx.exec(`INSERT INTO integration_events (integration_id, delivery_id, event_id, event, attempt, state, state_details, details, created_at)
		SELECT integration_id, 'msg_' || event_id || '_' || integration_id, event_id, NULL, attempts, $2, $3, '{}', $4
		FROM integration_outbox WHERE integration_id = $1 ORDER BY id`, integrationID, state, details, Millis(at)); err != nil {
		return 0, err
	}
	return tx.exec(`DELETE FROM integration_outbox WHERE integration_id = $1`, integrationID)
}

// DeliveryAttempts returns an integration's delivery log, newest first,
// with each attempt's event.
func (q Q) DeliveryAttempts(integrationID int64, limit, offset int) ([]DeliveryAttempt, error) {
	return collect(q, func(row scanner) (DeliveryAttempt, error) {
		var (
			a              DeliveryAttempt
			eventID        sql.NullInt64
			stored         sql.NullString
			details        string
			created        int64
			evID, evUser   sql.NullInt64
			evType, evBy   sql.NullString
			evCreated      sql.NullInt64
			data, pre, tag sql.NullString
			f, p, e        sql.NullString
		)
		err := row.Scan(&a.ID, &a.IntegrationID, &a.DeliveryID, &eventID, &stored, &a.Attempt, &a.State, &a.StateDetails, &details, &created,
			&evID, &evType, &evBy, &evUser, &evCreated, &data, &pre, &tag, &f, &p, &e)
		if err != nil {
			return a, err
		}
		a.EventID, a.Details, a.CreatedAt = int64Ptr(eventID), json.RawMessage(details), FromMillis(created)
		switch {
		case stored.Valid:
			a.Event = json.RawMessage(stored.String)
		case evID.Valid:
			ev := Event{ID: evID.Int64, Type: evType.String, CreatedBy: evBy.String, CreatedByUserID: int64Ptr(evUser),
				CreatedAt: FromMillis(evCreated.Int64), Tags: json.RawMessage(tag.String), FeatureName: strPtr(f), Project: strPtr(p), Environment: strPtr(e)}
			if data.Valid {
				ev.Data = json.RawMessage(data.String)
			}
			if pre.Valid {
				ev.PreData = json.RawMessage(pre.String)
			}
			a.Event, err = json.Marshal(ev)
		}
		return a, err
	}, `SELECT l.id, l.integration_id, l.delivery_id, l.event_id, l.event, l.attempt, l.state, l.state_details, l.details, l.created_at,
			e.id, e.type, e.created_by, e.created_by_user_id, e.created_at, e.data, e.pre_data, e.tags, e.feature_name, e.project, e.environment
		FROM integration_events l LEFT JOIN events e ON e.id = l.event_id
		WHERE l.integration_id = $1 ORDER BY l.id DESC LIMIT $2 OFFSET $3`, integrationID, limit, offset)
}

// PruneDeliveryLog deletes log rows older than before, and all but the
// newest keep rows of each integration; it returns how many went.
func (q Q) PruneDeliveryLog(before time.Time, keep int) (int64, error) {
	n, err := q.exec(`DELETE FROM integration_events WHERE created_at < $1`, Millis(before))
	if err != nil {
		return n, err
	}
	ids, err := collect(q, func(row scanner) (int64, error) {
		var id int64
		return id, row.Scan(&id)
	}, `SELECT id FROM integrations ORDER BY id`)
	if err != nil {
		return n, err
	}
	for _, id := range ids {
		m, err := q.exec(`DELETE FROM integration_events WHERE integration_id = $1 AND id <= (
			SELECT id FROM integration_events WHERE integration_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)`, id, keep)
		if err != nil {
			return n, err
		}
		n += m
	}
	return n, nil
}

// IntegrationKey returns the database-held key for secret parameters,
// storing fresh (a generated key) first when there is none; instances
// that race agree on the one stored first.
func (q Q) IntegrationKey(fresh string) (string, error) {
	if _, err := q.exec(`INSERT INTO integration_keys (id, secret, created_at) VALUES (1, $1, $2) ON CONFLICT (id) DO NOTHING`, fresh, q.now()); err != nil {
		return "", err
	}
	var key string
	err := q.row([]any{&key}, `SELECT secret FROM integration_keys WHERE id = 1`)
	return key, err
}

// DeliveryID is the stable id of the delivery of event eventID to
// integration integrationID, sent as webhook-id: the same on every attempt
// and after a restart.
func DeliveryID(eventID, integrationID int64) string {
	var b strings.Builder
	b.WriteString("msg_")
	b.WriteString(strconv.FormatInt(eventID, 10))
	b.WriteByte('_')
	b.WriteString(strconv.FormatInt(integrationID, 10))
	return b.String()
}
