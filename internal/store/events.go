package store

import (
	"database/sql"
	"strconv"
	"strings"
)

// EventFilter selects events. Empty fields do not filter.
type EventFilter struct {
	Type    string
	Project string
	Feature string
	// Query is a case-insensitive substring of type, creator or data.
	Query  string
	Limit  int
	Offset int
}

// Events returns the events matching f, newest first, and how many events
// match its type/project/feature filters (ignoring Query, Limit and Offset).
func (q Q) Events(f EventFilter) ([]Event, int, error) {
	var (
		conds []string
		args  []any
	)
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	if f.Type != "" {
		add("type = ?", f.Type)
	}
	if f.Project != "" {
		add("project = ?", f.Project)
	}
	if f.Feature != "" {
		add("feature_name = ?", f.Feature)
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	var total int
	if err := q.row([]any{&total}, `SELECT COUNT(*) FROM events`+where, args...); err != nil {
		return nil, 0, err
	}
	if f.Query != "" {
		args = append(args, "%"+strings.ToLower(f.Query)+"%")
		p := "$" + strconv.Itoa(len(args))
		cond := "(LOWER(type) LIKE " + p + " OR LOWER(created_by) LIKE " + p + " OR LOWER(COALESCE(data, '')) LIKE " + p +
			" OR LOWER(COALESCE(pre_data, '')) LIKE " + p + " OR LOWER(tags) LIKE " + p + ")"
		if where == "" {
			where = " WHERE " + cond
		} else {
			where += " AND " + cond
		}
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	args = append(args, limit, max(f.Offset, 0))
	rows, err := q.query(`SELECT id, type, created_by, created_by_user_id, created_at, data, pre_data, tags, feature_name, project, environment
		FROM events`+where+` ORDER BY id DESC LIMIT $`+strconv.Itoa(len(args)-1)+` OFFSET $`+strconv.Itoa(len(args)), args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	out := []Event{}
	for rows.Next() {
		ev, err := scanEvent(rows)
		if err != nil {
			return nil, 0, q.s.translate(err)
		}
		out = append(out, ev)
	}
	return out, total, q.s.translate(rows.Err())
}

func scanEvent(sc interface{ Scan(...any) error }) (Event, error) {
	var (
		ev                            Event
		userID                        sql.NullInt64
		created                       int64
		data, pre                     sql.NullString
		tags                          string
		feature, project, environment sql.NullString
	)
	if err := sc.Scan(&ev.ID, &ev.Type, &ev.CreatedBy, &userID, &created, &data, &pre, &tags, &feature, &project, &environment); err != nil {
		return ev, err
	}
	if userID.Valid {
		id := userID.Int64
		ev.CreatedByUserID = &id
	}
	ev.CreatedAt = FromMillis(created)
	if data.Valid {
		ev.Data = []byte(data.String)
	}
	if pre.Valid {
		ev.PreData = []byte(pre.String)
	}
	ev.Tags = []byte(tags)
	ev.FeatureName, ev.Project, ev.Environment = strPtr(feature), strPtr(project), strPtr(environment)
	return ev, nil
}
