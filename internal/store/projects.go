package store

import (
	"database/sql"

	"github.com/bunting-flags/bunting/internal/apierr"
)

const projectColumns = `id, name, description, mode, default_stickiness, health, created_at, updated_at`

func scanProject(sc interface{ Scan(...any) error }) (Project, error) {
	var (
		p       Project
		desc    sql.NullString
		created int64
		updated sql.NullInt64
	)
	err := sc.Scan(&p.ID, &p.Name, &desc, &p.Mode, &p.DefaultStickiness, &p.Health, &created, &updated)
	p.Description, p.CreatedAt, p.UpdatedAt = strPtr(desc), FromMillis(created), timePtr(updated)
	return p, err
}

// Projects lists every project, ordered by name.
func (q Q) Projects() ([]Project, error) {
	return collect(q, scanProject, `SELECT `+projectColumns+` FROM projects ORDER BY name, id`)
}

// Project returns one project or a NotFound error.
func (q Q) Project(id string) (Project, error) {
	p, err := scanProject(q.q.QueryRowContext(q.ctx, `SELECT `+projectColumns+` FROM projects WHERE id = $1`, id))
	if err == sql.ErrNoRows {
		return p, apierr.NotFound("Project %s does not exist", id)
	}
	return p, q.s.translate(err)
}

// InsertProject creates a project and connects it to the given environments.
func (q Q) InsertProject(p Project, environments []string) error {
	_, err := q.exec(`INSERT INTO projects (`+projectColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		p.ID, p.Name, nullableText(p.Description), p.Mode, p.DefaultStickiness, p.Health, Millis(p.CreatedAt), nil)
	if q.s.IsUniqueViolation(errCause(err)) {
		return apierr.Conflict("A project with this id already exists.")
	}
	if err != nil {
		return err
	}
	for _, env := range environments {
		if err := q.AddProjectEnvironment(p.ID, env); err != nil {
			return err
		}
	}
	return nil
}

// UpdateProject stores a project's name, description, mode and stickiness.
func (q Q) UpdateProject(p Project) error {
	n, err := q.exec(`UPDATE projects SET name = $2, description = $3, mode = $4, default_stickiness = $5, updated_at = $6 WHERE id = $1`,
		p.ID, p.Name, nullableText(p.Description), p.Mode, p.DefaultStickiness, q.now())
	if err == nil && n == 0 {
		return apierr.NotFound("Project %s does not exist", p.ID)
	}
	return err
}

// DeleteProject removes a project; its archived flags are removed with it.
func (q Q) DeleteProject(id string) error {
	if _, err := q.exec(`DELETE FROM features WHERE project_id = $1 AND archived_at IS NOT NULL`, id); err != nil {
		return err
	}
	n, err := q.exec(`DELETE FROM projects WHERE id = $1`, id)
	if err == nil && n == 0 {
		return apierr.NotFound("Project %s does not exist", id)
	}
	return err
}

// ProjectStats are the counts shown in the project list.
type ProjectStats struct {
	FeatureCount                 int
	StaleFeatureCount            int
	PotentiallyStaleFeatureCount int
}

// ProjectStats counts each project's active, stale and potentially stale flags.
func (q Q) ProjectStats() (map[string]ProjectStats, error) {
	out := map[string]ProjectStats{}
	err := q.eachRow(func(row scanner) error {
		var id string
		var st ProjectStats
		if err := row.Scan(&id, &st.FeatureCount, &st.StaleFeatureCount, &st.PotentiallyStaleFeatureCount); err != nil {
			return err
		}
		out[id] = st
		return nil
	}, `SELECT project_id, COUNT(*),
			SUM(CASE WHEN stale THEN 1 ELSE 0 END),
			SUM(CASE WHEN potentially_stale AND NOT stale THEN 1 ELSE 0 END)
		FROM features WHERE archived_at IS NULL GROUP BY project_id`)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ProjectEnvironments lists the environment names connected to a project.
func (q Q) ProjectEnvironments(project string) ([]string, error) {
	return collect(q, scanString, `SELECT pe.environment_name FROM project_environments pe
		JOIN environments e ON e.name = pe.environment_name
		WHERE pe.project_id = $1 ORDER BY e.sort_order, e.name`, project)
}

// AddProjectEnvironment connects an environment to a project; the project's
// flags get a (disabled) state in it.
func (q Q) AddProjectEnvironment(project, env string) error {
	if _, err := q.exec(`INSERT INTO project_environments (project_id, environment_name) VALUES ($1, $2)`, project, env); err != nil {
		if apierr.IsKind(err, apierr.KindConflict) {
			return apierr.Conflict("%s already has the environment %s enabled", project, env)
		}
		return err
	}
	_, err := q.exec(`INSERT INTO feature_environments (feature_name, environment, enabled, variants)
		SELECT name, $2, FALSE, '[]' FROM features WHERE project_id = $1
		ON CONFLICT (feature_name, environment) DO NOTHING`, project, env)
	return err
}

// RemoveProjectEnvironment disconnects an environment from a project and
// drops its flags' state there.
func (q Q) RemoveProjectEnvironment(project, env string) error {
	n, err := q.exec(`DELETE FROM project_environments WHERE project_id = $1 AND environment_name = $2`, project, env)
	if err != nil {
		return err
	}
	if n == 0 {
		return apierr.NotFound("Environment %s is not enabled in project %s", env, project)
	}
	_, err = q.exec(`DELETE FROM feature_environments WHERE environment = $2
		AND feature_name IN (SELECT name FROM features WHERE project_id = $1)`, project, env)
	return err
}

// errCause returns the wrapped driver error of a translated error.
func errCause(err error) error {
	if e, ok := err.(*apierr.Error); ok && e.Err != nil {
		return e.Err
	}
	return err
}
