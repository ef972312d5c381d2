package store

import (
	"database/sql"
	"slices"
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
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	if f.Query == "" {
		out, err := q.selectEvents("events e", conds, "e.id DESC", args, limit, f.Offset)
		return out, total, err
	}
	needle := strings.ToLower(f.Query)
	// A free-text match may be common or rare. First scan the newest
	// events in a small window (without the text index): a common
	// term's newest matches are there. Otherwise ask the text index.
	latest, err := q.s.LatestEventID(q.ctx)
	if err != nil {
		return nil, 0, err
	}
	likeArgs := append(slices.Clone(args), "%"+escapeLike(needle)+"%")
	scan := "(' ' || " + eventSearchText + ") LIKE $" + strconv.Itoa(len(likeArgs)) + ` ESCAPE '\'`
	for _, span := range []int64{2000} {
		lower := latest - span
		windowConds := append(slices.Clone(conds), scan)
		if lower > 0 {
			windowConds = append(windowConds, "e.id > "+strconv.FormatInt(lower, 10))
		}
		out, err := q.selectEvents("events e", windowConds, "e.id DESC", likeArgs, limit, f.Offset)
		if err != nil || lower <= 0 || len(out) == limit {
			return out, total, err
		}
	}
	if q.s.dialect.Name == "sqlite" && utf8.RuneCountInString(needle) >= 3 {
		// The trigram index yields matching ids newest first. (Matching only
		// the rarest trigrams and re-checking with LIKE was measured slower.)
		ftsArgs := append(slices.Clone(args), `"`+strings.ReplaceAll(needle, `"`, `""`)+`"`)
		ftsConds := append(slices.Clone(conds), "events_fts MATCH $"+strconv.Itoa(len(ftsArgs)))
		out, err := q.selectEvents("events_fts f JOIN events e ON e.id = f.rowid", ftsConds, "f.rowid DESC", ftsArgs, limit, f.Offset)
		return out, total, err
	}
	indexed := eventSearchText + " LIKE $" + strconv.Itoa(len(likeArgs)) + ` ESCAPE '\'`
	out, err := q.selectEvents("events e", append(slices.Clone(conds), indexed), "e.id DESC", likeArgs, limit, f.Offset)
	return out, total, err
}

func (q Q) selectEvents(from string, conds []string, order string, args []any, limit, offset int) ([]Event, error) {
	args = slices.Clone(args)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := ""
	if len(conds) > 0 {
		where = " WHERE " + strings.Join(conds, " AND ")
	}
	query := `SELECT e.id, e.type, e.created_by, e.created_by_user_id, e.created_at, e.data, e.pre_data, e.tags, e.feature_name, e.project, e.environment
		FROM ` + from + where + ` ORDER BY ` + order + ` LIMIT ` + arg(limit) + ` OFFSET ` + arg(max(offset, 0))
	rows, err := q.query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Event{}
	for rows.Next() {
		ev, err := scanEvent(rows)
		if err != nil {
			return nil, q.s.translate(err)
		}
		out = append(out, ev)
	}
	return out, q.s.translate(rows.Err())
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
