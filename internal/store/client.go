package store

import (
	"database/sql"
	"strconv"
	"strings"
)

// ClientData is everything the client API serves, loaded at once so that
// the server can answer SDKs from memory.
type ClientData struct {
	// Revision is the highest event id; Generation is Store.Generation
	// when the load started. Recent counts the events among the newest
	// ids up to Revision (see ClientDataSince).
	Revision     int64
	Recent       int64
	Generation   int64
	Features     []Feature
	Environments []FeatureEnvironment
	Strategies   []Strategy
	Segments     []Segment
	Dependencies []Dependency
	// Tags maps a flag name to its tags as [type, value] pairs.
	Tags map[string][][2]string
	// EnvironmentNames lists the environments that exist.
	EnvironmentNames []string
	// Only, when not nil, makes the data partial (ClientDataSince): the
	// rows of Features, Environments, Strategies, Dependencies and Tags are
	// those of these flags alone (a flag listed without a row was deleted
	// or archived); Segments and EnvironmentNames are complete.
	Only []string
}

// ClientData loads the client API's data in one read-only transaction (on
// PostgreSQL repeatable read; on SQLite a deferred read, which sees one
// snapshot of the WAL), so Revision is exactly the data's: event ids follow
// commit order (pgWriteEventSQL; SQLite commits one at a time). Reading the
// revision apart from the data let a change committed in between label
// newer data with an older revision, and the stream hub then sent two
// different updates with one event id.
func (s *Store) ClientData(q Q) (*ClientData, error) {
	return s.ClientDataSince(q, 0, 0, nil)
}

// ClientDataSince is ClientData for a reader that holds the client data at
// revision since with the count recent (0, 0: none): when every change
// after since is to named flags (their events say which), it loads the
// rows of those flags only, of the flags that depend on them, and of the
// names related adds (the flags the caller knows to depend on them: a
// deleted parent's dependency rows are gone), and sets Only (empty when
// nothing changed). Any other change (segments, environments, projects,
// tags, or more than maxPartialFlags flags) gives the whole data.
//
// Event ids follow commit order (see ClientData), so the events after
// since are exactly the changes the reader has not seen. Should one with a
// lower id still commit later, the count of the newest ids up to since
// differs from recent, and the whole data is loaded, as LatestEventID
// notices it.
func (s *Store) ClientDataSince(q Q, since, recent int64, related func(names []string) []string) (*ClientData, error) {
	gen := s.Generation()
	if q.tx == nil {
		opts := &sql.TxOptions{ReadOnly: true}
		if s.dialect.Name == "postgres" {
			opts.Isolation = sql.LevelRepeatableRead
		}
		sqlTx, err := s.db.BeginTx(q.ctx, opts)
		if err != nil {
			return nil, s.translate(err)
		}
		defer sqlTx.Rollback() //nolint:errcheck // read-only
		q = Q{ctx: q.ctx, q: sqlTx, s: s}
	}
	var rev sql.NullInt64
	if err := q.row([]any{&rev}, `SELECT MAX(id) FROM events`); err != nil {
		return nil, err
	}
	s.observeRevision(rev.Int64)
	var d *ClientData
	var err error
	if since > 0 && since <= rev.Int64 {
		d, err = q.clientDataSince(since, recent, rev.Int64, gen, related)
	}
	if d == nil && err == nil {
		d, err = q.clientData(rev.Int64, gen)
	}
	if err != nil {
		return nil, err
	}
	return d, q.row([]any{&d.Recent}, `SELECT COUNT(*) FROM events WHERE id > $1 AND id <= $2`, rev.Int64-recentWindow, rev.Int64)
}

// clientDataSince is the partial load of ClientDataSince, or nil when the
// whole data must be loaded.
func (q Q) clientDataSince(since, recent, rev, gen int64, related func([]string) []string) (*ClientData, error) {
	var now int64
	if err := q.row([]any{&now}, `SELECT COUNT(*) FROM events WHERE id > $1 AND id <= $2`, since-recentWindow, since); err != nil || now != recent {
		return nil, err
	}
	names := []string{}
	if since < rev {
		var err error
		if names, err = q.changedFlags(since, rev); err != nil || names == nil {
			return nil, err
		}
	}
	return q.partialClientData(rev, gen, names, related)
}

// maxPartialFlags is the most flags a partial load reads; past it the
// whole data is as cheap.
const maxPartialFlags = 500

// changedFlags returns the flags the events in (since, rev] changed, or
// nil when one of them may have changed more than named flags.
func (q Q) changedFlags(since, rev int64) ([]string, error) {
	seen := map[string]bool{}
	names := []string{}
	whole := false
	err := q.eachRow(func(row scanner) error {
		var typ string
		var feature sql.NullString
		if err := row.Scan(&typ, &feature); err != nil {
			return err
		}
		switch {
		case whole:
		case strings.HasPrefix(typ, "feature-") && feature.String != "":
			if !seen[feature.String] {
				seen[feature.String] = true
				names = append(names, feature.String)
			}
		case !outsideClientData(typ):
			whole = true
		}
		return nil
	}, `SELECT type, feature_name FROM events WHERE id > $1 AND id <= $2 ORDER BY id LIMIT `+strconv.Itoa(4*maxPartialFlags), since, rev)
	if err != nil || whole || len(names) > maxPartialFlags {
		return nil, err
	}
	var n int64
	if err := q.row([]any{&n}, `SELECT COUNT(*) FROM events WHERE id > $1 AND id <= $2`, since, rev); err != nil || n > 4*maxPartialFlags {
		return nil, err
	}
	return names, nil
}

// outsideClientData reports whether events of type typ change nothing the
// client data holds (credentials, people, signals, context fields, SDK
// registrations, new tags and tag types: a flag's tags change with its own
// feature-tagged event).
func outsideClientData(typ string) bool {
	switch typ {
	case "tag-created", "tag-type-created", "tag-type-updated":
		return true
	}
	for _, prefix := range []string{"api-token-", "pat-", "user-", "service-account-", "signal-", "actions-", "context-field-", "application-"} {
		if strings.HasPrefix(typ, prefix) {
			return true
		}
	}
	return false
}

// partialClientData loads the rows of the flags named, of their children
// and of related(names).
func (q Q) partialClientData(rev, gen int64, names []string, related func([]string) []string) (*ClientData, error) {
	d := &ClientData{Revision: rev, Generation: gen, Only: []string{}, Tags: map[string][][2]string{},
		Features: []Feature{}, Environments: []FeatureEnvironment{}, Strategies: []Strategy{}, Dependencies: []Dependency{}}
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			d.Only = append(d.Only, name)
		}
	}
	for _, n := range names {
		add(n)
	}
	if related != nil {
		for _, n := range related(names) {
			add(n)
		}
	}
	if len(names) > 0 {
		in, args := inList(names, 1)
		children, err := collect(q, scanString, `SELECT DISTINCT child FROM feature_dependencies WHERE parent IN (`+in+`)`, args...)
		if err != nil {
			return nil, err
		}
		for _, c := range children {
			add(c)
		}
	}
	switch {
	case len(d.Only) > maxPartialFlags:
		return q.clientData(rev, gen)
	case len(d.Only) == 0: // only changes outside the client data
		return d, q.clientDataShared(d)
	}
	var err error
	in, args := inList(d.Only, 1)
	if d.Features, err = collect(q, scanFeature, `SELECT `+featureColumns+` FROM features WHERE archived_at IS NULL AND name IN (`+in+`)`, args...); err != nil {
		return nil, err
	}
	if d.Environments, err = collect(q, scanFeatureEnvironment, `SELECT feature_name, environment, enabled, variants, last_seen_at FROM feature_environments WHERE feature_name IN (`+in+`)`, args...); err != nil {
		return nil, err
	}
	if d.Strategies, err = q.strategiesWhere(`fs.feature_name IN (`+in+`)`, args...); err != nil {
		return nil, err
	}
	if d.Dependencies, err = collect(q, scanDependency, `SELECT child, parent, enabled, variants FROM feature_dependencies WHERE child IN (`+in+`) ORDER BY child, parent`, args...); err != nil {
		return nil, err
	}
	tags, err := collect(q, scanFeatureTag, `SELECT feature_name, tag_type, tag_value, created_by_user_id FROM feature_tags WHERE feature_name IN (`+in+`) ORDER BY feature_name, tag_type, tag_value`, args...)
	if err != nil {
		return nil, err
	}
	d.Tags = tagPairs(tags)
	return d, q.clientDataShared(d)
}

// inList is "$first, $first+1, …" for the values, and the values as
// arguments.
func inList(values []string, first int) (string, []any) {
	var b strings.Builder
	args := make([]any, len(values))
	for i, v := range values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(first+i))
		args[i] = v
	}
	return b.String(), args
}

func (q Q) clientData(rev, gen int64) (*ClientData, error) {
	d := &ClientData{Revision: rev, Generation: gen}
	var err error
	if d.Features, err = q.Features("", false); err != nil {
		return nil, err
	}
	if d.Environments, err = q.allFeatureEnvironments(); err != nil {
		return nil, err
	}
	if d.Strategies, err = q.AllStrategies(); err != nil {
		return nil, err
	}
	if d.Dependencies, err = q.Dependencies(""); err != nil {
		return nil, err
	}
	if d.Tags, err = featureTagPairs(q); err != nil {
		return nil, err
	}
	return d, q.clientDataShared(d)
}

// clientDataShared loads what a partial load reads whole too: the
// segments and the environments' names.
func (q Q) clientDataShared(d *ClientData) error {
	var err error
	if d.Segments, err = q.Segments(); err != nil {
		return err
	}
	envs, err := q.Environments()
	if err != nil {
		return err
	}
	for _, e := range envs {
		d.EnvironmentNames = append(d.EnvironmentNames, e.Name)
	}
	return nil
}

func (q Q) allFeatureEnvironments() ([]FeatureEnvironment, error) {
	return collect(q, scanFeatureEnvironment, `SELECT feature_name, environment, enabled, variants, last_seen_at FROM feature_environments`)
}
