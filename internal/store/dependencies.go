package store

// Dependencies lists the parents of child (every child's when child is "").
func (q Q) Dependencies(child string) ([]Dependency, error) {
	query := `SELECT child, parent, enabled, variants FROM feature_dependencies`
	var args []any
	if child != "" {
		query += ` WHERE child = $1`
		args = append(args, child)
	}
	return collect(q, scanDependency, query+` ORDER BY child, parent`, args...)
}

// scanDependency reads a row of child, parent, enabled, variants.
func scanDependency(row scanner) (Dependency, error) {
	var d Dependency
	var variants string
	if err := row.Scan(&d.Child, &d.Feature, &d.Enabled, &variants); err != nil {
		return d, err
	}
	return d, decodeJSON(variants, &d.Variants)
}

// Children lists the flags that depend on parent.
func (q Q) Children(parent string) ([]string, error) {
	return collect(q, scanString, `SELECT child FROM feature_dependencies WHERE parent = $1 ORDER BY child`, parent)
}

// DependencyLinks returns, in one query, the flags feature depends on (as
// Dependencies would) and the flags that depend on it (as Children would).
func (q Q) DependencyLinks(feature string) (deps []Dependency, children []string, err error) {
	deps, children = []Dependency{}, []string{}
	err = q.eachRow(func(row scanner) error {
		var d Dependency
		var variants string
		if err := row.Scan(&d.Child, &d.Feature, &d.Enabled, &variants); err != nil {
			return err
		}
		if d.Feature == feature {
			children = append(children, d.Child)
		}
		if d.Child != feature {
			return nil
		}
		if err := decodeJSON(variants, &d.Variants); err != nil {
			return err
		}
		deps = append(deps, d)
		return nil
	}, `SELECT child, parent, enabled, variants FROM feature_dependencies
		WHERE child = $1 OR parent = $1 ORDER BY child, parent`, feature)
	if err != nil {
		return nil, nil, err
	}
	return deps, children, nil
}

// UpsertDependency adds or replaces child's dependency on d.Feature.
func (q Q) UpsertDependency(child string, d Dependency) error {
	_, err := q.exec(`INSERT INTO feature_dependencies (child, parent, enabled, variants) VALUES ($1, $2, $3, $4)
		ON CONFLICT (child, parent) DO UPDATE SET enabled = excluded.enabled, variants = excluded.variants`,
		child, d.Feature, d.Enabled, encodeJSON(nonNil(d.Variants)))
	return err
}

// DeleteDependency removes child's dependency on parent and reports whether one existed.
func (q Q) DeleteDependency(child, parent string) (bool, error) {
	n, err := q.exec(`DELETE FROM feature_dependencies WHERE child = $1 AND parent = $2`, child, parent)
	return n > 0, err
}

// DeleteDependencies removes all of child's dependencies and reports whether any existed.
func (q Q) DeleteDependencies(child string) (bool, error) {
	n, err := q.exec(`DELETE FROM feature_dependencies WHERE child = $1`, child)
	return n > 0, err
}
