package store

import (
	"database/sql"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// FeatureTypes lists the flag types in their built-in order.
func (q Q) FeatureTypes() ([]FeatureType, error) {
	return collect(q, func(row scanner) (FeatureType, error) {
		var t FeatureType
		var days sql.NullInt64
		err := row.Scan(&t.ID, &t.Name, &t.Description, &days)
		if days.Valid {
			d := int(days.Int64)
			t.LifetimeDays = &d
		}
		return t, err
	}, `SELECT id, name, description, lifetime_days FROM feature_types ORDER BY sort_order, id`)
}

// FeatureType returns one flag type or a NotFound error.
func (q Q) FeatureType(id string) (FeatureType, error) {
	types, err := q.FeatureTypes()
	if err != nil {
		return FeatureType{}, err
	}
	for _, t := range types {
		if t.ID == id {
			return t, nil
		}
	}
	return FeatureType{}, apierr.NotFound("The feature type you tried to update (\"%s\") does not exist.", id)
}

// SetFeatureTypeLifetime stores a type's lifetime (nil: never stale).
func (q Q) SetFeatureTypeLifetime(id string, days *int) error {
	_, err := q.exec(`UPDATE feature_types SET lifetime_days = $2 WHERE id = $1`, id, days)
	return err
}

const strategyTypeColumns = `name, display_name, title, description, built_in, deprecated, sort_order, parameters`

func scanStrategyType(sc interface{ Scan(...any) error }) (StrategyType, error) {
	var (
		t                           StrategyType
		display, title, description sql.NullString
		builtIn                     bool
		params                      string
	)
	if err := sc.Scan(&t.Name, &display, &title, &description, &builtIn, &t.Deprecated, &t.SortOrder, &params); err != nil {
		return t, err
	}
	t.DisplayName, t.Title, t.Description, t.Editable = strPtr(display), strPtr(title), strPtr(description), !builtIn
	t.Parameters = []StrategyParameter{}
	return t, decodeJSON(params, &t.Parameters)
}

// StrategyTypes lists the strategy definitions by sort order and name.
func (q Q) StrategyTypes() ([]StrategyType, error) {
	return collect(q, scanStrategyType, `SELECT `+strategyTypeColumns+` FROM strategy_types ORDER BY sort_order, name`)
}

// StrategyType returns one strategy definition or a NotFound error.
func (q Q) StrategyType(name string) (StrategyType, error) {
	t, err := scanStrategyType(q.q.QueryRowContext(q.ctx, `SELECT `+strategyTypeColumns+` FROM strategy_types WHERE name = $1`, name))
	if err == sql.ErrNoRows {
		return t, apierr.NotFound("No strategy found")
	}
	return t, q.s.translate(err)
}

// InsertStrategyType creates a custom strategy definition.
func (q Q) InsertStrategyType(t StrategyType) error {
	_, err := q.exec(`INSERT INTO strategy_types (`+strategyTypeColumns+`, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		t.Name, nullableText(t.DisplayName), nullableText(t.Title), nullableText(t.Description), !t.Editable, t.Deprecated,
		t.SortOrder, encodeJSON(nonNil(t.Parameters)), q.now())
	if apierr.IsKind(err, apierr.KindConflict) {
		return apierr.Conflict("Strategy with name %s already exist!", t.Name)
	}
	return err
}

// UpdateStrategyType stores a strategy definition's mutable fields.
func (q Q) UpdateStrategyType(t StrategyType) error {
	_, err := q.exec(`UPDATE strategy_types SET display_name = $2, title = $3, description = $4, deprecated = $5, parameters = $6 WHERE name = $1`,
		t.Name, nullableText(t.DisplayName), nullableText(t.Title), nullableText(t.Description), t.Deprecated, encodeJSON(nonNil(t.Parameters)))
	return err
}

// DeleteStrategyType removes a strategy definition.
func (q Q) DeleteStrategyType(name string) error {
	_, err := q.exec(`DELETE FROM strategy_types WHERE name = $1`, name)
	return err
}
