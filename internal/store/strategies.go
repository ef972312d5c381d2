package store

import (
	"database/sql"
	"strings"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
)

const strategyColumns = `id, feature_name, environment, strategy_name, title, disabled, sort_order, parameters, constraints, variants, created_at`

func scanStrategy(sc interface{ Scan(...any) error }) (Strategy, error) {
	var (
		st                            Strategy
		title                         sql.NullString
		params, constraints, variants string
		created                       int64
	)
	if err := sc.Scan(&st.ID, &st.FeatureName, &st.Environment, &st.Name, &title, &st.Disabled, &st.SortOrder,
		&params, &constraints, &variants, &created); err != nil {
		return st, err
	}
	st.Title, st.CreatedAt = strPtr(title), FromMillis(created)
	st.Parameters, st.Constraints, st.Variants, st.Segments = map[string]string{}, []engine.Constraint{}, []engine.Variant{}, []int{}
	if err := decodeJSON(params, &st.Parameters); err != nil {
		return st, err
	}
	if err := decodeJSON(constraints, &st.Constraints); err != nil {
		return st, err
	}
	return st, decodeJSON(variants, &st.Variants)
}

// Strategies lists a flag's strategies in an environment by sort order
// (ties by creation), with their segment ids.
func (q Q) Strategies(feature, env string) ([]Strategy, error) {
	return q.strategiesWhere(`feature_name = $1 AND environment = $2`, feature, env)
}

// FeatureStrategies lists a flag's strategies in every environment.
func (q Q) FeatureStrategies(feature string) ([]Strategy, error) {
	return q.strategiesWhere(`feature_name = $1`, feature)
}

// AllStrategies lists every strategy of every flag.
func (q Q) AllStrategies() ([]Strategy, error) { return q.strategiesWhere(`1 = 1`) }

func (q Q) strategiesWhere(cond string, args ...any) ([]Strategy, error) {
	rows, err := q.query(`SELECT `+strategyColumns+` FROM feature_strategies WHERE `+cond+` ORDER BY sort_order, created_at, id`, args...)
	if err != nil {
		return nil, err
	}
	var out []Strategy
	index := map[string]int{}
	func() {
		defer rows.Close()
		for rows.Next() {
			var st Strategy
			if st, err = scanStrategy(rows); err != nil {
				return
			}
			index[st.ID] = len(out)
			out = append(out, st)
		}
		err = rows.Err()
	}()
	if err != nil {
		return nil, q.s.translate(err)
	}
	if len(out) == 0 {
		return []Strategy{}, nil
	}
	segs, err := q.query(`SELECT fss.strategy_id, fss.segment_id FROM feature_strategy_segments fss
		JOIN feature_strategies fs ON fs.id = fss.strategy_id WHERE `+strings.ReplaceAll(cond, "feature_name", "fs.feature_name")+
		` ORDER BY fss.segment_id`, args...)
	if err != nil {
		return nil, err
	}
	defer segs.Close()
	for segs.Next() {
		var id string
		var seg int
		if err := segs.Scan(&id, &seg); err != nil {
			return nil, q.s.translate(err)
		}
		if i, ok := index[id]; ok {
			out[i].Segments = append(out[i].Segments, seg)
		}
	}
	return out, q.s.translate(segs.Err())
}

// Strategy returns one strategy by id or a NotFound error.
func (q Q) Strategy(id string) (Strategy, error) {
	st, err := scanStrategy(q.q.QueryRowContext(q.ctx, `SELECT `+strategyColumns+` FROM feature_strategies WHERE id = $1`, id))
	if err == sql.ErrNoRows {
		return st, apierr.NotFound("Could not find strategy with id: %s", id)
	}
	if err != nil {
		return st, q.s.translate(err)
	}
	rows, err := q.query(`SELECT segment_id FROM feature_strategy_segments WHERE strategy_id = $1 ORDER BY segment_id`, id)
	if err != nil {
		return st, err
	}
	defer rows.Close()
	for rows.Next() {
		var seg int
		if err := rows.Scan(&seg); err != nil {
			return st, q.s.translate(err)
		}
		st.Segments = append(st.Segments, seg)
	}
	return st, q.s.translate(rows.Err())
}

// InsertStrategy stores a new strategy and its segment links.
func (q Q) InsertStrategy(st Strategy) error {
	_, err := q.exec(`INSERT INTO feature_strategies (`+strategyColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		st.ID, st.FeatureName, st.Environment, st.Name, nullableText(st.Title), st.Disabled, st.SortOrder,
		encodeJSON(nonNilParams(st.Parameters)), encodeJSON(nonNil(st.Constraints)), encodeJSON(nonNil(st.Variants)), Millis(st.CreatedAt))
	if err != nil {
		return err
	}
	return q.setStrategySegments(st.ID, st.Segments)
}

// UpdateStrategy replaces a strategy's definition and segment links.
func (q Q) UpdateStrategy(st Strategy) error {
	_, err := q.exec(`UPDATE feature_strategies SET strategy_name = $2, title = $3, disabled = $4, sort_order = $5,
		parameters = $6, constraints = $7, variants = $8 WHERE id = $1`,
		st.ID, st.Name, nullableText(st.Title), st.Disabled, st.SortOrder,
		encodeJSON(nonNilParams(st.Parameters)), encodeJSON(nonNil(st.Constraints)), encodeJSON(nonNil(st.Variants)))
	if err != nil {
		return err
	}
	if _, err := q.exec(`DELETE FROM feature_strategy_segments WHERE strategy_id = $1`, st.ID); err != nil {
		return err
	}
	return q.setStrategySegments(st.ID, st.Segments)
}

func (q Q) setStrategySegments(id string, segments []int) error {
	seen := map[int]bool{}
	for _, seg := range segments {
		if seen[seg] {
			continue
		}
		seen[seg] = true
		_, err := q.exec(`INSERT INTO feature_strategy_segments (strategy_id, segment_id) VALUES ($1, $2)`, id, seg)
		if apierr.IsKind(err, apierr.KindConflict) {
			return apierr.NotFound("No segment exists with ID \"%d\"", seg)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// DeleteStrategy removes a strategy.
func (q Q) DeleteStrategy(id string) error {
	_, err := q.exec(`DELETE FROM feature_strategies WHERE id = $1`, id)
	return err
}

// SetStrategySortOrder stores one strategy's position.
func (q Q) SetStrategySortOrder(id string, order int) error {
	_, err := q.exec(`UPDATE feature_strategies SET sort_order = $2 WHERE id = $1`, id, order)
	return err
}

// NextStrategySortOrder is one past the highest sort order in a flag environment.
func (q Q) NextStrategySortOrder(feature, env string) (int, error) {
	var n sql.NullInt64
	err := q.row([]any{&n}, `SELECT MAX(sort_order) FROM feature_strategies WHERE feature_name = $1 AND environment = $2`, feature, env)
	if !n.Valid {
		return 0, err
	}
	return int(n.Int64) + 1, err
}

// StrategyUsesContextField reports whether any strategy or segment
// constraint names the context field (used by the extras part).
func (q Q) StrategyUsesContextField(name string) (bool, error) {
	var n int
	needle := "%\"contextName\":" + jsonQuote(name) + "%"
	err := q.row([]any{&n}, `SELECT (SELECT COUNT(*) FROM feature_strategies WHERE constraints LIKE $1)
		+ (SELECT COUNT(*) FROM segments WHERE constraints LIKE $1)`, needle)
	return n > 0, err
}

func jsonQuote(s string) string { return encodeJSON(s) }

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilParams(p map[string]string) map[string]string {
	if p == nil {
		return map[string]string{}
	}
	return p
}

// SortedIDs returns the strategies' ids in their order.
func SortedIDs(sts []Strategy) []string {
	ids := make([]string, len(sts))
	for i, st := range sts {
		ids[i] = st.ID
	}
	return ids
}
