package store

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
}

// ClientData loads the client API's data in one read transaction. Revision
// is read first, so a change committed during the load makes the data
// look older than it is (and be rebuilt), never newer.
func (s *Store) ClientData(q Q) (*ClientData, error) {
	rev, err := s.LatestEventID(q.ctx)
	if err != nil {
		return nil, err
	}
	d := &ClientData{Revision: rev, Generation: s.Generation()}
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
	if d.Tags, err = featureTagPairs(q); err != nil {
		return nil, err
	}
	return d, nil
}

func (q Q) allFeatureEnvironments() ([]FeatureEnvironment, error) {
	return collect(q, scanFeatureEnvironment, `SELECT feature_name, environment, enabled, variants, last_seen_at FROM feature_environments`)
}
