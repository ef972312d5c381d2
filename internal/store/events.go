package store

import (
	"database/sql"
	"strconv"
	"strings"
	"unicode/utf8"
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
	total, err := q.countEvents(f)
	if err != nil {
		return nil, 0, err
	}
	var (
		conds []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.Type != "" {
		conds = append(conds, "e.type = "+arg(f.Type))
	}
	if f.Project != "" {
		conds = append(conds, "e.project = "+arg(f.Project))
	}
	if f.Feature != "" {
		conds = append(conds, "e.feature_name = "+arg(f.Feature))
	}
	from, order := "events e", "e.id DESC"
	if f.Query != "" {
		needle := strings.ToLower(f.Query)
		switch {
		case q.s.dialect.Name == "sqlite" && utf8.RuneCountInString(needle) >= 3:
			// The trigram index yields matching ids newest first.
			from, order = "events_fts f JOIN events e ON e.id = f.rowid", "f.rowid DESC"
			conds = append(conds, "events_fts MATCH "+arg(`"`+strings.ReplaceAll(needle, `"`, `""`)+`"`))
		default:
			conds = append(conds, eventSearchText+" LIKE "+arg("%"+escapeLike(needle)+"%")+" ESCAPE '\\'")
		}
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	query := `SELECT e.id, e.type, e.created_by, e.created_by_user_id, e.created_at, e.data, e.pre_data, e.tags, e.feature_name, e.project, e.environment
		FROM ` + from + where + ` ORDER BY ` + order + ` LIMIT ` + arg(limit) + ` OFFSET ` + arg(max(f.Offset, 0))
	rows, err := q.query(query, args...)
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

// eventSearchText is the text the free-text query matches; on PostgreSQL
// the same expression carries a trigram index.
const eventSearchText = `LOWER(e.type || ' ' || e.created_by || ' ' || COALESCE(e.data, '') || ' ' || COALESCE(e.pre_data, '') || ' ' || e.tags)`

func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`).Replace(s)
}

// countEvents sums the maintained per-(type, project, flag) counts.
func (q Q) countEvents(f EventFilter) (int, error) {
	var (
		conds []string
		args  []any
	)
	add := func(col, v string) {
		args = append(args, v)
		conds = append(conds, col+" = $"+strconv.Itoa(len(args)))
	}
	if f.Type != "" {
		add("type", f.Type)
	}
	if f.Project != "" {
		add("project", f.Project)
	}
	if f.Feature != "" {
		add("feature_name", f.Feature)
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	var total sql.NullInt64
	err := q.row([]any{&total}, `SELECT SUM(n) FROM event_counts`+where, args...)
	return int(total.Int64), err
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
