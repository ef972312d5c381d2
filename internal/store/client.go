package store

import "database/sql"

// ClientData is everything the client API serves, loaded at once so that
// the server can answer SDKs from memory.
type ClientData struct {
	// Revision is the highest event id; Generation is Store.Generation
	// when the load started.
	Revision     int64
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
}

// ClientData loads the client API's data in one read-only transaction (on
// PostgreSQL repeatable read; on SQLite a deferred read, which sees one
// snapshot of the WAL), so Revision is exactly the data's: event ids follow
// commit order (pgWriteEventSQL; SQLite commits one at a time). Reading the
// revision apart from the data let a change committed in between label
// newer data with an older revision, and the stream hub then sent two
// different updates with one event id.
func (s *Store) ClientData(q Q) (*ClientData, error) {
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
	return q.clientData(rev.Int64, gen)
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
	if d.Segments, err = q.Segments(); err != nil {
		return nil, err
	}
	if d.Dependencies, err = q.Dependencies(""); err != nil {
		return nil, err
	}
	envs, err := q.Environments()
	if err != nil {
		return nil, err
	}
	for _, e := range envs {
		d.EnvironmentNames = append(d.EnvironmentNames, e.Name)
	}
	if d.Tags, err = featureTagPairs(q); err != nil {
		return nil, err
	}
	return d, nil
}

func (q Q) allFeatureEnvironments() ([]FeatureEnvironment, error) {
	return collect(q, scanFeatureEnvironment, `SELECT feature_name, environment, enabled, variants, last_seen_at FROM feature_environments`)
}
