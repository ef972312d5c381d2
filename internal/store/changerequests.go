// Change requests: each project environment's setting, the requests with
// their changes, reviews and comments. The rules live in
// internal/changerequests.

package store

import (
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// Change request states (Unleash's names).
const (
	CRDraft     = "Draft"
	CRInReview  = "In review"
	CRApproved  = "Approved"
	CRScheduled = "Scheduled"
	CRApplied   = "Applied"
	CRCancelled = "Cancelled"
	CRRejected  = "Rejected"
)

// OpenChangeRequestStates are the states of a request still under way.
var OpenChangeRequestStates = []string{CRDraft, CRInReview, CRApproved, CRScheduled}

// ChangeRequestSetting is one project environment's change request
// setting.
type ChangeRequestSetting struct {
	Project           string
	Environment       string
	Enabled           bool
	RequiredApprovals int
}

// ChangeRequestSettings lists a project's stored settings (environments
// never configured have no row).
func (q Q) ChangeRequestSettings(project string) ([]ChangeRequestSetting, error) {
	return collect(q, func(row scanner) (ChangeRequestSetting, error) {
		var s ChangeRequestSetting
		return s, row.Scan(&s.Project, &s.Environment, &s.Enabled, &s.RequiredApprovals)
	}, `SELECT project, environment, enabled, required_approvals FROM change_request_settings WHERE project = $1 ORDER BY environment`, project)
}

// ChangeRequestSetting returns a project environment's setting (disabled,
// one approval, when never configured).
func (q Q) ChangeRequestSetting(project, env string) (ChangeRequestSetting, error) {
	s := ChangeRequestSetting{Project: project, Environment: env, RequiredApprovals: 1}
	err := q.q.QueryRowContext(q.ctx, `SELECT enabled, required_approvals FROM change_request_settings WHERE project = $1 AND environment = $2`,
		project, env).Scan(&s.Enabled, &s.RequiredApprovals)
	if err == sql.ErrNoRows {
		return s, nil
	}
	return s, q.s.translate(err)
}

// ProtectedEnvironments lists the environments of project where change
// requests are on.
func (q Q) ProtectedEnvironments(project string) ([]string, error) {
	return collect(q, scanString, `SELECT environment FROM change_request_settings WHERE project = $1 AND enabled ORDER BY environment`, project)
}

// SetChangeRequestSetting stores s.
func (q Q) SetChangeRequestSetting(s ChangeRequestSetting) error {
	_, err := q.exec(`INSERT INTO change_request_settings (project, environment, enabled, required_approvals) VALUES ($1, $2, $3, $4)
		ON CONFLICT (project, environment) DO UPDATE SET enabled = excluded.enabled, required_approvals = excluded.required_approvals`,
		s.Project, s.Environment, s.Enabled, s.RequiredApprovals)
	return err
}

// ProjectEnvironment is an environment of a project.
type ProjectEnvironment struct{ Project, Environment string }

// SegmentEnvironments lists the project environments whose strategies use
// segment id.
func (q Q) SegmentEnvironments(id int) ([]ProjectEnvironment, error) {
	return collect(q, func(row scanner) (ProjectEnvironment, error) {
		var pe ProjectEnvironment
		return pe, row.Scan(&pe.Project, &pe.Environment)
	}, `SELECT DISTINCT f.project_id, fs.environment FROM feature_strategy_segments s
		JOIN feature_strategies fs ON fs.id = s.strategy_id
		JOIN features f ON f.name = fs.feature_name
		WHERE s.segment_id = $1 ORDER BY f.project_id, fs.environment`, id)
}

// ChangeRequest is one change request as stored. AuthorKey and
// ScheduledBy identify a principal ("user:<id>" or "token:<name>").
type ChangeRequest struct {
	ID              int64
	Project         string
	Environment     string
	Title           string
	State           string
	MinApprovals    int
	AuthorKey       string
	CreatedBy       string
	CreatedByUserID *int64
	CreatedAt       time.Time
	StateTimestamps map[string]time.Time
	ScheduledAt     *time.Time
	ScheduleStatus  string
	ScheduleReason  string
	ScheduledBy     string
}

const changeRequestColumns = `id, project, environment, title, state, min_approvals, author_key, created_by, created_by_user_id, created_at,
	state_timestamps, scheduled_at, schedule_status, schedule_reason, scheduled_by`

func scanChangeRequest(row scanner) (ChangeRequest, error) {
	var (
		cr                    ChangeRequest
		title, status, reason sql.NullString
		by                    sql.NullString
		userID, scheduled     sql.NullInt64
		created               int64
		stamps                string
	)
	if err := row.Scan(&cr.ID, &cr.Project, &cr.Environment, &title, &cr.State, &cr.MinApprovals, &cr.AuthorKey, &cr.CreatedBy, &userID, &created,
		&stamps, &scheduled, &status, &reason, &by); err != nil {
		return cr, err
	}
	cr.Title, cr.ScheduleStatus, cr.ScheduleReason, cr.ScheduledBy = title.String, status.String, reason.String, by.String
	cr.CreatedByUserID, cr.CreatedAt = int64Ptr(userID), FromMillis(created)
	if scheduled.Valid {
		t := FromMillis(scheduled.Int64)
		cr.ScheduledAt = &t
	}
	var ms map[string]int64
	if err := json.Unmarshal([]byte(stamps), &ms); err != nil {
		return cr, err
	}
	cr.StateTimestamps = make(map[string]time.Time, len(ms))
	for k, v := range ms {
		cr.StateTimestamps[k] = FromMillis(v)
	}
	return cr, nil
}

func nullEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// changeRequestArgs are cr's stored columns after id.
func changeRequestArgs(cr ChangeRequest) ([]any, error) {
	ms := make(map[string]int64, len(cr.StateTimestamps))
	for k, v := range cr.StateTimestamps {
		ms[k] = Millis(v)
	}
	stamps, err := json.Marshal(ms)
	if err != nil {
		return nil, err
	}
	var scheduled any
	if cr.ScheduledAt != nil {
		scheduled = Millis(*cr.ScheduledAt)
	}
	return []any{cr.Project, cr.Environment, nullEmpty(cr.Title), cr.State, cr.MinApprovals, cr.AuthorKey, cr.CreatedBy, cr.CreatedByUserID,
		Millis(cr.CreatedAt), string(stamps), scheduled, nullEmpty(cr.ScheduleStatus), nullEmpty(cr.ScheduleReason), nullEmpty(cr.ScheduledBy)}, nil
}

// InsertChangeRequest stores a new request and returns its id.
func (q Q) InsertChangeRequest(cr ChangeRequest) (int64, error) {
	args, err := changeRequestArgs(cr)
	if err != nil {
		return 0, err
	}
	return q.insertID(`INSERT INTO change_requests (project, environment, title, state, min_approvals, author_key, created_by, created_by_user_id,
		created_at, state_timestamps, scheduled_at, schedule_status, schedule_reason, scheduled_by)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) RETURNING id`, args...)
}

// UpdateChangeRequest stores every field of cr but its id.
func (q Q) UpdateChangeRequest(cr ChangeRequest) error {
	args, err := changeRequestArgs(cr)
	if err != nil {
		return err
	}
	_, err = q.exec(`UPDATE change_requests SET project = $1, environment = $2, title = $3, state = $4, min_approvals = $5, author_key = $6,
		created_by = $7, created_by_user_id = $8, created_at = $9, state_timestamps = $10, scheduled_at = $11, schedule_status = $12,
		schedule_reason = $13, scheduled_by = $14 WHERE id = $15`, append(args, cr.ID)...)
	return err
}

// DeleteChangeRequest removes a request with its changes, reviews and
// comments.
func (q Q) DeleteChangeRequest(id int64) error {
	_, err := q.exec(`DELETE FROM change_requests WHERE id = $1`, id)
	return err
}

// ChangeRequest returns one request, or NotFound.
func (q Q) ChangeRequest(id int64) (ChangeRequest, error) {
	cr, err := scanChangeRequest(q.q.QueryRowContext(q.ctx, `SELECT `+changeRequestColumns+` FROM change_requests WHERE id = $1`, id))
	if err == sql.ErrNoRows {
		return cr, apierr.NotFound("Could not find a change request with id %d.", id)
	}
	return cr, q.s.translate(err)
}

// LockChangeRequest locks a request's row until the transaction ends
// (PostgreSQL; SQLite has one writer), so that two instances cannot both
// move it from the same state.
func (tx *Tx) LockChangeRequest(id int64) error {
	return tx.lock(`SELECT 1 FROM change_requests WHERE id = $1 FOR UPDATE`, id)
}

// ChangeRequestFilter selects requests. Empty fields select everything.
type ChangeRequestFilter struct {
	Project     string
	Environment string
	States      []string
	AuthorKey   string
	// CreatedByUserID selects the requests of one person.
	CreatedByUserID *int64
	// Feature selects requests with a change of that flag.
	Feature string
	// Limit (0 = no limit) and Offset page the answer, newest first.
	Limit, Offset int
}

func (f ChangeRequestFilter) where() (string, []any) {
	var (
		conds []string
		args  []any
	)
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.Project != "" {
		add("project = ?", f.Project)
	}
	if f.Environment != "" {
		add("environment = ?", f.Environment)
	}
	if f.AuthorKey != "" {
		add("author_key = ?", f.AuthorKey)
	}
	if f.CreatedByUserID != nil {
		add("created_by_user_id = ?", *f.CreatedByUserID)
	}
	if f.Feature != "" {
		add("id IN (SELECT change_request_id FROM change_request_changes WHERE feature = ?)", f.Feature)
	}
	if len(f.States) > 0 {
		var ph []string
		for _, s := range f.States {
			args = append(args, s)
			ph = append(ph, "$"+strconv.Itoa(len(args)))
		}
		conds = append(conds, "state IN ("+strings.Join(ph, ", ")+")")
	}
	if len(conds) == 0 {
		return "", args
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// ChangeRequests lists the requests f selects, newest first.
func (q Q) ChangeRequests(f ChangeRequestFilter) ([]ChangeRequest, error) {
	where, args := f.where()
	query := `SELECT ` + changeRequestColumns + ` FROM change_requests` + where + ` ORDER BY id DESC`
	if f.Limit > 0 {
		query += ` LIMIT ` + strconv.Itoa(f.Limit) + ` OFFSET ` + strconv.Itoa(f.Offset)
	}
	return collect(q, scanChangeRequest, query, args...)
}

// CountChangeRequests counts the requests f selects (ignoring its paging).
func (q Q) CountChangeRequests(f ChangeRequestFilter) (int, error) {
	where, args := f.where()
	var n int
	return n, q.row([]any{&n}, `SELECT COUNT(*) FROM change_requests`+where, args...)
}

// ChangeRequestChange is one change of a request: of a flag (Feature) or
// of a segment (SegmentID).
type ChangeRequestChange struct {
	ID              int64
	ChangeRequestID int64
	Feature         string
	SegmentID       int
	Action          string
	Payload         json.RawMessage
	Version         string
	CreatedBy       string
	CreatedByUserID *int64
	CreatedAt       time.Time
}

const changeColumns = `id, change_request_id, feature, segment_id, action, payload, version, created_by, created_by_user_id, created_at`

func scanChange(row scanner) (ChangeRequestChange, error) {
	var (
		c               ChangeRequestChange
		feature         sql.NullString
		segment, userID sql.NullInt64
		payload         string
		created         int64
	)
	if err := row.Scan(&c.ID, &c.ChangeRequestID, &feature, &segment, &c.Action, &payload, &c.Version, &c.CreatedBy, &userID, &created); err != nil {
		return c, err
	}
	c.Feature, c.SegmentID, c.Payload = feature.String, int(segment.Int64), json.RawMessage(payload)
	c.CreatedByUserID, c.CreatedAt = int64Ptr(userID), FromMillis(created)
	return c, nil
}

func changeArgs(c ChangeRequestChange) []any {
	var segment any
	if c.SegmentID != 0 {
		segment = c.SegmentID
	}
	payload := string(c.Payload)
	if payload == "" {
		payload = "null"
	}
	return []any{c.ChangeRequestID, nullEmpty(c.Feature), segment, c.Action, payload, c.Version, c.CreatedBy, c.CreatedByUserID, Millis(c.CreatedAt)}
}

// InsertChangeRequestChange stores a new change and returns its id.
func (q Q) InsertChangeRequestChange(c ChangeRequestChange) (int64, error) {
	return q.insertID(`INSERT INTO change_request_changes (change_request_id, feature, segment_id, action, payload, version, created_by,
		created_by_user_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`, changeArgs(c)...)
}

// UpdateChangeRequestChange stores every field of c but its id.
func (q Q) UpdateChangeRequestChange(c ChangeRequestChange) error {
	_, err := q.exec(`UPDATE change_request_changes SET change_request_id = $1, feature = $2, segment_id = $3, action = $4, payload = $5,
		version = $6, created_by = $7, created_by_user_id = $8, created_at = $9 WHERE id = $10`, append(changeArgs(c), c.ID)...)
	return err
}

// DeleteChangeRequestChange removes one change.
func (q Q) DeleteChangeRequestChange(id int64) error {
	_, err := q.exec(`DELETE FROM change_request_changes WHERE id = $1`, id)
	return err
}

// ChangeRequestChanges lists the changes of the given requests in the
// order they were drafted.
func (q Q) ChangeRequestChanges(ids ...int64) ([]ChangeRequestChange, error) {
	if len(ids) == 0 {
		return []ChangeRequestChange{}, nil
	}
	ph := make([]string, len(ids))
	args := make([]any, len(ids))
	for i, id := range ids {
		ph[i], args[i] = "$"+strconv.Itoa(i+1), id
	}
	return collect(q, scanChange, `SELECT `+changeColumns+` FROM change_request_changes WHERE change_request_id IN (`+strings.Join(ph, ", ")+`) ORDER BY id`, args...)
}

// ChangeRequestReview is an approval, or with Rejected a rejection.
type ChangeRequestReview struct {
	ChangeRequestID int64
	ReviewerKey     string
	CreatedBy       string
	CreatedByUserID *int64
	Rejected        bool
	CreatedAt       time.Time
}

// ChangeRequestReviews lists a request's reviews, oldest first.
func (q Q) ChangeRequestReviews(id int64) ([]ChangeRequestReview, error) {
	return collect(q, func(row scanner) (ChangeRequestReview, error) {
		var (
			r       ChangeRequestReview
			userID  sql.NullInt64
			created int64
		)
		err := row.Scan(&r.ChangeRequestID, &r.ReviewerKey, &r.CreatedBy, &userID, &r.Rejected, &created)
		r.CreatedByUserID, r.CreatedAt = int64Ptr(userID), FromMillis(created)
		return r, err
	}, `SELECT change_request_id, reviewer_key, created_by, created_by_user_id, rejected, created_at FROM change_request_reviews
		WHERE change_request_id = $1 ORDER BY created_at, reviewer_key`, id)
}

// SetChangeRequestReview stores r, replacing the reviewer's earlier review.
func (q Q) SetChangeRequestReview(r ChangeRequestReview) error {
	_, err := q.exec(`INSERT INTO change_request_reviews (change_request_id, reviewer_key, created_by, created_by_user_id, rejected, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (change_request_id, reviewer_key) DO UPDATE
		SET created_by = excluded.created_by, created_by_user_id = excluded.created_by_user_id, rejected = excluded.rejected, created_at = excluded.created_at`,
		r.ChangeRequestID, r.ReviewerKey, r.CreatedBy, r.CreatedByUserID, r.Rejected, Millis(r.CreatedAt))
	return err
}

// DeleteChangeRequestReviews removes a request's reviews and reports how
// many there were.
func (q Q) DeleteChangeRequestReviews(id int64) (int64, error) {
	return q.exec(`DELETE FROM change_request_reviews WHERE change_request_id = $1`, id)
}

// ChangeRequestComment is a comment on a request.
type ChangeRequestComment struct {
	ID              int64
	ChangeRequestID int64
	Text            string
	CreatedBy       string
	CreatedByUserID *int64
	CreatedAt       time.Time
}

// ChangeRequestComments lists a request's comments, oldest first.
func (q Q) ChangeRequestComments(id int64) ([]ChangeRequestComment, error) {
	return collect(q, func(row scanner) (ChangeRequestComment, error) {
		var (
			c       ChangeRequestComment
			userID  sql.NullInt64
			created int64
		)
		err := row.Scan(&c.ID, &c.ChangeRequestID, &c.Text, &c.CreatedBy, &userID, &created)
		c.CreatedByUserID, c.CreatedAt = int64Ptr(userID), FromMillis(created)
		return c, err
	}, `SELECT id, change_request_id, text, created_by, created_by_user_id, created_at FROM change_request_comments
		WHERE change_request_id = $1 ORDER BY id`, id)
}

// InsertChangeRequestComment stores a comment and returns its id.
func (q Q) InsertChangeRequestComment(c ChangeRequestComment) (int64, error) {
	return q.insertID(`INSERT INTO change_request_comments (change_request_id, text, created_by, created_by_user_id, created_at)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`, c.ChangeRequestID, c.Text, c.CreatedBy, c.CreatedByUserID, Millis(c.CreatedAt))
}

// DueChangeRequests lists the ids of scheduled requests whose pending
// schedule is due at now, earliest first.
func (q Q) DueChangeRequests(now time.Time) ([]int64, error) {
	return collect(q, func(row scanner) (int64, error) {
		var id int64
		return id, row.Scan(&id)
	}, `SELECT id FROM change_requests WHERE state = $1 AND schedule_status = 'pending' AND scheduled_at <= $2 ORDER BY scheduled_at, id`,
		CRScheduled, Millis(now))
}

// NextScheduledChangeRequest returns when the earliest pending schedule is
// due (ok false when none is pending).
func (q Q) NextScheduledChangeRequest() (at time.Time, ok bool, err error) {
	var ms sql.NullInt64
	err = q.row([]any{&ms}, `SELECT MIN(scheduled_at) FROM change_requests WHERE state = $1 AND schedule_status = 'pending'`, CRScheduled)
	if err != nil || !ms.Valid {
		return time.Time{}, false, err
	}
	return FromMillis(ms.Int64), true, nil
}
