package store

import (
	"database/sql"
	"slices"
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
	// HiddenProjects are left out: events of projects the caller may not
	// see (access.Grants.HiddenProjects).
	HiddenProjects []string
}

// hiddenCond is the condition that leaves out col's hidden projects ("" when
// none are), adding their values with arg.
func hiddenCond(col string, hidden []string, nullable bool, arg func(any) string) string {
	if len(hidden) == 0 {
		return ""
	}
	list := make([]string, len(hidden))
	for i, h := range hidden {
		list[i] = arg(h)
	}
	cond := col + " NOT IN (" + strings.Join(list, ", ") + ")"
	if nullable {
		cond = "(" + col + " IS NULL OR " + cond + ")"
	}
	return cond
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
	if c := hiddenCond("e.project", f.HiddenProjects, true, arg); c != "" {
		conds = append(conds, c)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	if f.Query == "" {
		if f.Offset <= 0 {
			out, err := q.selectEvents("events e", conds, "e.id DESC", args, limit, 0)
			return out, total, err
		}
		// Skip rows on an index of the filter columns and id (every filter
		// combination has one), reading only the rows returned.
		page := "e.id IN (SELECT e.id FROM events e" + where(conds) + " ORDER BY e.id DESC LIMIT " + arg(limit) + " OFFSET " + arg(f.Offset) + ")"
		out, err := q.selectEvents("events e", []string{page}, "e.id DESC", args, limit, 0)
		return out, total, err
	}
	needle := strings.ToLower(f.Query)
	pattern := arg("%" + escapeLike(needle) + "%")
	conds = append(conds, textMatches(pattern))
	// A free-text match may be common or rare. A common text's newest
	// matches are among the newest events, which are scanned first
	// (without the text index); a rare text goes to the index at once.
	// The highest id this process knows is enough to place the window: a
	// newer event is inside it all the same. Before scanning everything,
	// the database confirms that there is little to scan.
	latest := q.s.Revision()
	if latest <= recentEventsScanned {
		if latest, err = q.s.LatestEventID(q.ctx); err != nil {
			return nil, 0, err
		}
	}
	lower := latest - recentEventsScanned
	if lower <= 0 {
		out, err := q.selectEvents("events e", conds, "e.id DESC", args, limit, f.Offset)
		return out, total, err
	}
	keep := func(string) bool { return true }
	if q.s.dialect.Name == "postgres" {
		keep = isWordGram
	}
	grams, share, err := q.s.rareGrams(q.ctx, needle, keep)
	if err != nil {
		return nil, 0, err
	}
	if len(grams) == 0 || share*float64(recentEventsScanned) >= float64(limit+f.Offset) {
		recent := append(slices.Clone(conds), "e.id > "+strconv.FormatInt(lower, 10))
		out, err := q.selectEvents("events e", recent, "e.id DESC", args, limit, f.Offset)
		if err != nil || len(out) == limit {
			return out, total, err
		}
	}
	// The index is asked for the rarest few trigrams of the text only (see
	// events_grams.go); textMatches then checks the candidates exactly.
	switch {
	case len(grams) > 0 && q.s.dialect.Name == "sqlite":
		for i, g := range grams {
			grams[i] = `"` + strings.ReplaceAll(g, `"`, `""`) + `"`
		}
		conds = append(conds, "events_fts MATCH "+arg(strings.Join(grams, " AND ")))
		out, err := q.selectEvents("events_fts f JOIN events e ON e.id = f.rowid", conds, "f.rowid DESC", args, limit, f.Offset)
		return out, total, err
	case len(grams) > 0:
		// Literal patterns (letters and digits only), so that the planner
		// sees which trigrams the index is asked for. Ordering by id+0
		// keeps it from walking the primary key newest first and testing
		// every row instead of using the index.
		for _, w := range gramRuns(needle, grams) {
			conds = append(conds, eventSearchText+" LIKE '%"+w+"%'")
		}
		out, err := q.selectEvents("events e", conds, "e.id + 0 DESC", args, limit, f.Offset)
		return out, total, err
	case q.s.dialect.Name == "postgres":
		// The trigram index may still help with the whole pattern.
		conds = append(conds, eventSearchText+" LIKE "+pattern+` ESCAPE '\'`)
	}
	// No trigram to look up (a text of one or two characters): scan.
	out, err := q.selectEvents("events e", conds, "e.id DESC", args, limit, f.Offset)
	return out, total, err
}

// recentEventsScanned is how many of the newest events a free-text search
// scans before it asks the text index (a variable for tests).
var recentEventsScanned int64 = 2000

func where(conds []string) string {
	if len(conds) == 0 {
		return ""
	}
	return " WHERE " + strings.Join(conds, " AND ")
}

func (q Q) selectEvents(from string, conds []string, order string, args []any, limit, offset int) ([]Event, error) {
	args = slices.Clone(args)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	query := `SELECT e.id, e.type, e.created_by, e.created_by_user_id, e.created_at, e.data, e.pre_data, e.tags, e.feature_name, e.project, e.environment
		FROM ` + from + where(conds) + ` ORDER BY ` + order + ` LIMIT ` + arg(limit) + ` OFFSET ` + arg(max(offset, 0))
	return collect(q, scanEvent, query, args...)
}

// eventText is the text the free-text index holds for an event: its type,
// creator, data, previous data and tags. On PostgreSQL eventSearchText
// carries a trigram index.
const (
	eventText       = `e.type || ' ' || e.created_by || ' ' || COALESCE(e.data, '') || ' ' || COALESCE(e.pre_data, '') || ' ' || e.tags`
	eventSearchText = `LOWER(` + eventText + `)`
)

// textMatches is the exact free-text test: like Unleash, the pattern (a
// lowered, escaped %text%) must match one of the fields on its own, not
// across the boundary of two.
func textMatches(pattern string) string {
	var or []string
	for _, col := range []string{"e.type", "e.created_by", "e.data", "e.pre_data", "e.tags"} {
		or = append(or, "LOWER("+col+") LIKE "+pattern+` ESCAPE '\'`)
	}
	return "(" + strings.Join(or, " OR ") + ")"
}

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
	if c := hiddenCond("project", f.HiddenProjects, false, func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}); c != "" {
		conds = append(conds, c)
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
