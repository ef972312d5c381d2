package store

import (
	"database/sql"

	"github.com/bunting-flags/bunting/internal/apierr"
)

const environmentColumns = `name, type, sort_order, enabled, protected`

// Environments lists every environment by sort order.
func (q Q) Environments() ([]Environment, error) {
	return collect(q, func(row scanner) (Environment, error) {
		var e Environment
		err := row.Scan(&e.Name, &e.Type, &e.SortOrder, &e.Enabled, &e.Protected)
		return e, err
	}, `SELECT `+environmentColumns+` FROM environments ORDER BY sort_order, name`)
}

// Environment returns one environment or a NotFound error.
func (q Q) Environment(name string) (Environment, error) {
	var e Environment
	err := q.q.QueryRowContext(q.ctx, `SELECT `+environmentColumns+` FROM environments WHERE name = $1`, name).
		Scan(&e.Name, &e.Type, &e.SortOrder, &e.Enabled, &e.Protected)
	if err == sql.ErrNoRows {
		return e, apierr.NotFound("Could not find environment with name: %s", name)
	}
	return e, q.s.translate(err)
}

// InsertEnvironment creates an environment.
func (q Q) InsertEnvironment(e Environment) error {
	_, err := q.exec(`INSERT INTO environments (`+environmentColumns+`, created_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		e.Name, e.Type, e.SortOrder, e.Enabled, e.Protected, q.now())
	if apierr.IsKind(err, apierr.KindConflict) {
		return apierr.Conflict("An environment with the name %s already exists", e.Name)
	}
	return err
}

// UpdateEnvironment stores an environment's type, sort order and enabled state.
func (q Q) UpdateEnvironment(e Environment) error {
	n, err := q.exec(`UPDATE environments SET type = $2, sort_order = $3, enabled = $4, protected = $5 WHERE name = $1`,
		e.Name, e.Type, e.SortOrder, e.Enabled, e.Protected)
	if err == nil && n == 0 {
		return apierr.NotFound("Could not find environment with name: %s", e.Name)
	}
	return err
}

// DeleteEnvironment removes an environment and every flag state in it.
func (q Q) DeleteEnvironment(name string) error {
	n, err := q.exec(`DELETE FROM environments WHERE name = $1`, name)
	if err == nil && n == 0 {
		return apierr.NotFound("Could not find environment with name: %s", name)
	}
	return err
}

// EnvironmentCounts are the usage counts of one environment.
type EnvironmentCounts struct {
	ProjectCount       int
	APITokenCount      int
	EnabledToggleCount int
}

// EnvironmentCounts counts projects, API tokens and enabled flags per environment.
func (q Q) EnvironmentCounts() (map[string]EnvironmentCounts, error) {
	out := map[string]EnvironmentCounts{}
	add := func(query string, set func(*EnvironmentCounts, int)) error {
		return q.eachRow(func(row scanner) error {
			var name string
			var n int
			if err := row.Scan(&name, &n); err != nil {
				return err
			}
			c := out[name]
			set(&c, n)
			out[name] = c
			return nil
		}, query)
	}
	if err := add(`SELECT environment_name, COUNT(*) FROM project_environments GROUP BY environment_name`,
		func(c *EnvironmentCounts, n int) { c.ProjectCount = n }); err != nil {
		return nil, err
	}
	if err := add(`SELECT environment, COUNT(*) FROM api_tokens GROUP BY environment`,
		func(c *EnvironmentCounts, n int) { c.APITokenCount = n }); err != nil {
		return nil, err
	}
	err := add(`SELECT fe.environment, COUNT(*) FROM feature_environments fe JOIN features f ON f.name = fe.feature_name
		WHERE fe.enabled AND f.archived_at IS NULL GROUP BY fe.environment`,
		func(c *EnvironmentCounts, n int) { c.EnabledToggleCount = n })
	return out, err
}
