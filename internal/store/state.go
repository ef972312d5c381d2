package store

import "github.com/bunting-flags/bunting/engine"

// AllFeatureEnvironments lists the state of every live flag in every
// environment, ordered by flag and environment.
func (q Q) AllFeatureEnvironments() ([]FeatureEnvironment, error) {
	return collect(q, scanFeatureEnvironment, `SELECT fe.feature_name, fe.environment, fe.enabled, fe.variants, fe.last_seen_at
		FROM feature_environments fe JOIN features f ON f.name = fe.feature_name
		WHERE f.archived_at IS NULL ORDER BY fe.feature_name, fe.environment`)
}

// UpsertFeatureEnvironment stores a flag's state in an environment,
// creating the row when the flag has none there.
func (q Q) UpsertFeatureEnvironment(feature, env string, enabled bool, variants []engine.Variant) error {
	_, err := q.exec(`INSERT INTO feature_environments (feature_name, environment, enabled, variants) VALUES ($1, $2, $3, $4)
		ON CONFLICT (feature_name, environment) DO UPDATE SET enabled = excluded.enabled, variants = excluded.variants`,
		feature, env, enabled, encodeJSON(nonNil(variants)))
	return err
}

// DeleteFeatureStrategies removes every strategy of a flag.
func (q Q) DeleteFeatureStrategies(feature string) error {
	_, err := q.exec(`DELETE FROM feature_strategies WHERE feature_name = $1`, feature)
	return err
}

// StrategyExists reports whether a flag strategy with this id exists.
func (q Q) StrategyExists(id string) (bool, error) {
	var n int
	err := q.row([]any{&n}, `SELECT COUNT(*) FROM feature_strategies WHERE id = $1`, id)
	return n > 0, err
}

// SegmentIDByName returns a segment's id, or 0 when there is none.
func (q Q) SegmentIDByName(name string) (int, error) {
	ids, err := collect(q, scanInt, `SELECT id FROM segments WHERE name = $1`, name)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	return ids[0], nil
}

// DropFeatures removes every flag (archived ones too) with its
// environments, strategies, tags and dependencies.
func (q Q) DropFeatures() error {
	_, err := q.exec(`DELETE FROM features`)
	return err
}

// DropCustomStrategyTypes removes every strategy type that is not built in.
func (q Q) DropCustomStrategyTypes() error {
	_, err := q.exec(`DELETE FROM strategy_types WHERE NOT built_in`)
	return err
}

// DropFeatureTags removes every flag-tag link.
func (q Q) DropFeatureTags() error {
	_, err := q.exec(`DELETE FROM feature_tags`)
	return err
}

// DropTags removes every tag and its flag links.
func (q Q) DropTags() error {
	if err := q.DropFeatureTags(); err != nil {
		return err
	}
	_, err := q.exec(`DELETE FROM tags`)
	return err
}

// DropTagTypes removes every tag type with its tags.
func (q Q) DropTagTypes() error {
	if err := q.DropTags(); err != nil {
		return err
	}
	_, err := q.exec(`DELETE FROM tag_types`)
	return err
}
