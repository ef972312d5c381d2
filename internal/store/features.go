package store

import (
	"database/sql"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
)

const featureColumns = `name, project_id, type, description, stale, potentially_stale, impression_data, archived_at, created_at, created_by, last_seen_at`

func scanFeature(sc interface{ Scan(...any) error }) (Feature, error) {
	var (
		f                      Feature
		desc, createdBy        sql.NullString
		archivedAt, lastSeenAt sql.NullInt64
		createdAt              int64
	)
	err := sc.Scan(&f.Name, &f.Project, &f.Type, &desc, &f.Stale, &f.PotentiallyStale, &f.ImpressionData,
		&archivedAt, &createdAt, &createdBy, &lastSeenAt)
	f.Description, f.CreatedBy = strPtr(desc), strPtr(createdBy)
	f.ArchivedAt, f.LastSeenAt, f.CreatedAt = timePtr(archivedAt), timePtr(lastSeenAt), FromMillis(createdAt)
	f.Archived = archivedAt.Valid
	return f, err
}

// Feature returns a flag (archived or not) or a NotFound error.
func (q Q) Feature(name string) (Feature, error) {
	f, err := scanFeature(q.q.QueryRowContext(q.ctx, `SELECT `+featureColumns+` FROM features WHERE name = $1`, name))
	if err == sql.ErrNoRows {
		return f, apierr.NotFound("Could not find feature flag %s", name)
	}
	return f, q.s.translate(err)
}

// FeatureInProject returns a flag that belongs to project, with the Unleash
// messages when it does not exist or lives in another project.
func (q Q) FeatureInProject(project, name string) (Feature, error) {
	f, err := q.Feature(name)
	if apierr.IsKind(err, apierr.KindNotFound) {
		return f, apierr.NotFound("There's no feature named \"%s\" in project \"%s\".", name, project)
	}
	if err != nil {
		return f, err
	}
	if f.Project != project {
		return f, apierr.NotFound("There's no feature named \"%s\" in project \"%s\", but there's a feature with that name in project \"%s\"", name, project, f.Project)
	}
	return f, nil
}

// Features lists a project's flags (archived ones when archived is true),
// or every project's when project is empty, ordered by creation.
func (q Q) Features(project string, archived bool) ([]Feature, error) {
	cond := `archived_at IS NULL`
	if archived {
		cond = `archived_at IS NOT NULL`
	}
	query := `SELECT ` + featureColumns + ` FROM features WHERE ` + cond
	var args []any
	if project != "" {
		query += ` AND project_id = $1`
		args = append(args, project)
	}
	return collect(q, scanFeature, query+` ORDER BY created_at, name`, args...)
}

// InsertFeature creates a flag, disabled in every environment of its project.
func (q Q) InsertFeature(f Feature) error {
	_, err := q.exec(`INSERT INTO features (`+featureColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8, $9, NULL)`,
		f.Name, f.Project, f.Type, nullableText(f.Description), f.Stale, false, f.ImpressionData,
		Millis(f.CreatedAt), nullableText(f.CreatedBy))
	if apierr.IsKind(err, apierr.KindConflict) {
		return apierr.Conflict("A flag with that name already exists")
	}
	if err != nil {
		return err
	}
	_, err = q.exec(`INSERT INTO feature_environments (feature_name, environment, enabled, variants)
		SELECT $1, environment_name, FALSE, '[]' FROM project_environments WHERE project_id = $2`, f.Name, f.Project)
	return err
}

// UpdateFeature stores a flag's type, description, stale and impression data.
func (q Q) UpdateFeature(f Feature) error {
	_, err := q.exec(`UPDATE features SET type = $2, description = $3, stale = $4, impression_data = $5, potentially_stale = $6 WHERE name = $1`,
		f.Name, f.Type, nullableText(f.Description), f.Stale, f.ImpressionData, f.PotentiallyStale)
	return err
}

// ArchiveFeature marks a flag archived.
func (q Q) ArchiveFeature(name string) error {
	_, err := q.exec(`UPDATE features SET archived_at = $2 WHERE name = $1`, name, q.now())
	return err
}

// ReviveFeature brings an archived flag back, switched off everywhere.
func (q Q) ReviveFeature(name string) error {
	if _, err := q.exec(`UPDATE features SET archived_at = NULL WHERE name = $1`, name); err != nil {
		return err
	}
	_, err := q.exec(`UPDATE feature_environments SET enabled = FALSE WHERE feature_name = $1`, name)
	return err
}

// DeleteFeature removes a flag and everything attached to it.
func (q Q) DeleteFeature(name string) error {
	_, err := q.exec(`DELETE FROM features WHERE name = $1`, name)
	return err
}

// FeatureEnvironments lists a flag's state in each environment, ordered
// like the environments.
func (q Q) FeatureEnvironments(feature string) ([]FeatureEnvironment, error) {
	return collect(q, scanFeatureEnvironment, `SELECT fe.feature_name, fe.environment, fe.enabled, fe.variants, fe.last_seen_at
		FROM feature_environments fe JOIN environments e ON e.name = fe.environment
		WHERE fe.feature_name = $1 ORDER BY e.sort_order, e.name`, feature)
}

// FeatureWithEnvironment returns a flag of project with its state in env
// in one query, with the errors of FeatureInProject and then
// FeatureEnvironment.
func (q Q) FeatureWithEnvironment(project, name, env string) (Feature, FeatureEnvironment, error) {
	var (
		fe        FeatureEnvironment
		feName    sql.NullString
		enabled   sql.NullBool
		variants  sql.NullString
		feSeen    sql.NullInt64
		featureSc = rowScanner{}
	)
	row := q.q.QueryRowContext(q.ctx, `SELECT f.name, f.project_id, f.type, f.description, f.stale, f.potentially_stale,
		f.impression_data, f.archived_at, f.created_at, f.created_by, f.last_seen_at,
		fe.feature_name, fe.enabled, fe.variants, fe.last_seen_at
		FROM features f LEFT JOIN feature_environments fe ON fe.feature_name = f.name AND fe.environment = $2
		WHERE f.name = $1`, name, env)
	featureSc.scan = func(dest ...any) error { return row.Scan(append(dest, &feName, &enabled, &variants, &feSeen)...) }
	f, err := scanFeature(featureSc)
	if err == sql.ErrNoRows {
		return f, fe, apierr.NotFound("There's no feature named \"%s\" in project \"%s\".", name, project)
	}
	if err != nil {
		return f, fe, q.s.translate(err)
	}
	if f.Project != project {
		return f, fe, apierr.NotFound("There's no feature named \"%s\" in project \"%s\", but there's a feature with that name in project \"%s\"", name, project, f.Project)
	}
	if !feName.Valid {
		return f, fe, apierr.NotFound("Could not find environment %s for feature: %s", env, name)
	}
	fe = FeatureEnvironment{FeatureName: name, Environment: env, Enabled: enabled.Bool, LastSeenAt: timePtr(feSeen), Variants: []engine.Variant{}}
	return f, fe, q.s.translate(decodeJSON(variants.String, &fe.Variants))
}

// rowScanner adapts a scan function to scanFeature's argument.
type rowScanner struct{ scan func(dest ...any) error }

func (r rowScanner) Scan(dest ...any) error { return r.scan(dest...) }

// FeatureEnvironmentDetail is a flag's state in one environment with the
// environment's own type and sort order.
type FeatureEnvironmentDetail struct {
	FeatureEnvironment
	Type      string
	SortOrder int
}

// FeatureEnvironmentDetails lists a flag's environments like
// FeatureEnvironments, with each environment's type and sort order, in one
// query.
func (q Q) FeatureEnvironmentDetails(feature string) ([]FeatureEnvironmentDetail, error) {
	return collect(q, func(row scanner) (FeatureEnvironmentDetail, error) {
		var (
			d        FeatureEnvironmentDetail
			variants string
			lastSeen sql.NullInt64
		)
		if err := row.Scan(&d.FeatureName, &d.Environment, &d.Enabled, &variants, &lastSeen, &d.Type, &d.SortOrder); err != nil {
			return d, err
		}
		d.LastSeenAt = timePtr(lastSeen)
		d.Variants = []engine.Variant{}
		return d, decodeJSON(variants, &d.Variants)
	}, `SELECT fe.feature_name, fe.environment, fe.enabled, fe.variants, fe.last_seen_at, e.type, e.sort_order
		FROM feature_environments fe JOIN environments e ON e.name = fe.environment
		WHERE fe.feature_name = $1 ORDER BY e.sort_order, e.name`, feature)
}

func scanFeatureEnvironment(sc interface{ Scan(...any) error }) (FeatureEnvironment, error) {
	var (
		fe       FeatureEnvironment
		variants string
		lastSeen sql.NullInt64
	)
	if err := sc.Scan(&fe.FeatureName, &fe.Environment, &fe.Enabled, &variants, &lastSeen); err != nil {
		return fe, err
	}
	fe.LastSeenAt = timePtr(lastSeen)
	fe.Variants = []engine.Variant{}
	return fe, decodeJSON(variants, &fe.Variants)
}

// FeatureEnvironment returns a flag's state in one environment, or the
// Unleash NotFound message when the flag is not in that environment.
func (q Q) FeatureEnvironment(feature, env string) (FeatureEnvironment, error) {
	fe, err := scanFeatureEnvironment(q.q.QueryRowContext(q.ctx, `SELECT feature_name, environment, enabled, variants, last_seen_at
		FROM feature_environments WHERE feature_name = $1 AND environment = $2`, feature, env))
	if err == sql.ErrNoRows {
		return fe, apierr.NotFound("Could not find environment %s for feature: %s", env, feature)
	}
	return fe, q.s.translate(err)
}

// SetFeatureEnvironmentEnabled switches a flag on or off in an environment
// and reports whether the stored state changed.
func (q Q) SetFeatureEnvironmentEnabled(feature, env string, enabled bool) (bool, error) {
	n, err := q.exec(`UPDATE feature_environments SET enabled = $3 WHERE feature_name = $1 AND environment = $2 AND enabled <> $3`,
		feature, env, enabled)
	return n > 0, err
}

// SetFeatureEnvironmentVariants stores a flag's variants in an environment.
func (q Q) SetFeatureEnvironmentVariants(feature, env string, variants []engine.Variant) error {
	if variants == nil {
		variants = []engine.Variant{}
	}
	_, err := q.exec(`UPDATE feature_environments SET variants = $3 WHERE feature_name = $1 AND environment = $2`,
		feature, env, encodeJSON(variants))
	return err
}
