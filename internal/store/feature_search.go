package store

import (
	"fmt"
	"strings"
)

// FeatureSearch filters and pages flags across projects. Empty fields do
// not filter.
type FeatureSearch struct {
	// Text matches the name or description, ignoring case.
	Text    string
	Project string
	Type    string
	// TagType and TagValue select flags carrying that tag.
	TagType, TagValue string
	Stale             *bool
	Archived          bool
	// Environment and Enabled select flags switched on (or off) there.
	Environment string
	Enabled     *bool
	Offset      int
	Limit       int
	// HiddenProjects' flags are left out (projects the caller may not see).
	HiddenProjects []string
}

// FeatureSearchHit is one flag found, with its switches and tags.
type FeatureSearchHit struct {
	Feature
	Environments []FeatureSwitch `json:"environments"`
	Tags         []Tag           `json:"tags"`
}

// FeatureSwitch is a flag's switch in one environment, and whether the
// environment has strategies (enabled ones): switching a flag on where it
// has no enabled strategy adds one, which needs another permission.
type FeatureSwitch struct {
	Name                 string `json:"name"`
	Enabled              bool   `json:"enabled"`
	HasStrategies        bool   `json:"hasStrategies"`
	HasEnabledStrategies bool   `json:"hasEnabledStrategies"`
}

// SearchFeatures returns one page of the flags that match, sorted by name,
// and how many match in all. Only the page's switches and tags are read.
func (q Q) SearchFeatures(s FeatureSearch) ([]FeatureSearchHit, int, error) {
	var (
		where []string
		args  []any
	)
	arg := func(v any) string { args = append(args, v); return fmt.Sprintf("$%d", len(args)) }
	if s.Archived {
		where = append(where, `f.archived_at IS NOT NULL`)
	} else {
		where = append(where, `f.archived_at IS NULL`)
	}
	if s.Text != "" {
		p := arg("%" + likeEscape(strings.ToLower(s.Text)) + "%")
		where = append(where, `(lower(f.name) LIKE `+p+` ESCAPE '\' OR lower(COALESCE(f.description, '')) LIKE `+p+` ESCAPE '\')`)
	}
	if s.Project != "" {
		where = append(where, `f.project_id = `+arg(s.Project))
	}
	if c := hiddenCond("f.project_id", s.HiddenProjects, false, arg); c != "" {
		where = append(where, c)
	}
	if s.Type != "" {
		where = append(where, `f.type = `+arg(s.Type))
	}
	if s.Stale != nil {
		where = append(where, `f.stale = `+arg(*s.Stale))
	}
	if s.TagType != "" {
		where = append(where, `EXISTS (SELECT 1 FROM feature_tags t WHERE t.feature_name = f.name AND t.tag_type = `+arg(s.TagType)+` AND t.tag_value = `+arg(s.TagValue)+`)`)
	}
	if s.Environment != "" && s.Enabled != nil {
		where = append(where, `EXISTS (SELECT 1 FROM feature_environments e WHERE e.feature_name = f.name AND e.environment = `+arg(s.Environment)+` AND e.enabled = `+arg(*s.Enabled)+`)`)
	}
	cond := strings.Join(where, " AND ")
	var total int
	if err := q.row([]any{&total}, `SELECT COUNT(*) FROM features f WHERE `+cond, args...); err != nil {
		return nil, 0, err
	}
	limit := s.Limit
	if limit <= 0 {
		limit = 50
	}
	rows, err := q.query(`SELECT `+prefixed("f.", featureColumns)+` FROM features f WHERE `+cond+
		fmt.Sprintf(` ORDER BY f.name LIMIT %d OFFSET %d`, limit, max(s.Offset, 0)), args...)
	if err != nil {
		return nil, 0, err
	}
	hits := []FeatureSearchHit{}
	index := map[string]int{}
	for rows.Next() {
		f, err := scanFeature(rows)
		if err != nil {
			rows.Close()
			return nil, 0, q.s.translate(err)
		}
		index[f.Name] = len(hits)
		hits = append(hits, FeatureSearchHit{Feature: f, Environments: []FeatureSwitch{}, Tags: []Tag{}})
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(hits) == 0 {
		return hits, total, q.s.translate(err)
	}
	names := make([]any, 0, len(hits))
	marks := make([]string, 0, len(hits))
	for i, h := range hits {
		names = append(names, h.Name)
		marks = append(marks, fmt.Sprintf("$%d", i+1))
	}
	in := `(` + strings.Join(marks, ", ") + `)`
	rows, err = q.query(`SELECT fe.feature_name, fe.environment, fe.enabled,
		EXISTS (SELECT 1 FROM feature_strategies s WHERE s.feature_name = fe.feature_name AND s.environment = fe.environment),
		EXISTS (SELECT 1 FROM feature_strategies s WHERE s.feature_name = fe.feature_name AND s.environment = fe.environment AND NOT s.disabled)
		FROM feature_environments fe
		JOIN environments env ON env.name = fe.environment
		WHERE fe.feature_name IN `+in+` ORDER BY env.sort_order, env.name`, names...)
	if err != nil {
		return nil, 0, err
	}
	for rows.Next() {
		var name string
		var sw FeatureSwitch
		if err := rows.Scan(&name, &sw.Name, &sw.Enabled, &sw.HasStrategies, &sw.HasEnabledStrategies); err != nil {
			rows.Close()
			return nil, 0, q.s.translate(err)
		}
		h := &hits[index[name]]
		h.Environments = append(h.Environments, sw)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, 0, q.s.translate(err)
	}
	rows, err = q.query(`SELECT feature_name, tag_type, tag_value FROM feature_tags WHERE feature_name IN `+in+` ORDER BY tag_type, tag_value`, names...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var t Tag
		if err := rows.Scan(&name, &t.Type, &t.Value); err != nil {
			return nil, 0, q.s.translate(err)
		}
		h := &hits[index[name]]
		h.Tags = append(h.Tags, t)
	}
	return hits, total, q.s.translate(rows.Err())
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

func prefixed(prefix, columns string) string {
	parts := strings.Split(columns, ", ")
	for i, p := range parts {
		parts[i] = prefix + p
	}
	return strings.Join(parts, ", ")
}
