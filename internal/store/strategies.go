package store

import (
	"cmp"
	"database/sql"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
)

const strategyColumns = `id, feature_name, environment, strategy_name, title, disabled, sort_order, parameters, constraints, variants, created_at`

// strategyRow is a feature_strategies row as stored, before its JSON
// columns are decoded.
type strategyRow struct {
	st                            Strategy
	title                         sql.NullString
	params, constraints, variants string
	created                       int64
}

func (r *strategyRow) dest() []any {
	return []any{&r.st.ID, &r.st.FeatureName, &r.st.Environment, &r.st.Name, &r.title, &r.st.Disabled, &r.st.SortOrder,
		&r.params, &r.constraints, &r.variants, &r.created}
}

// decode turns the stored row into a Strategy (without segment links).
func (r *strategyRow) decode() (Strategy, error) {
	st := r.st
	st.Title, st.CreatedAt = strPtr(r.title), FromMillis(r.created)
	st.Parameters, st.Constraints, st.Variants, st.Segments = map[string]string{}, []engine.Constraint{}, []engine.Variant{}, []int{}
	if err := decodeJSON(r.params, &st.Parameters); err != nil {
		return st, err
	}
	if err := decodeJSON(r.constraints, &st.Constraints); err != nil {
		return st, err
	}
	return st, decodeJSON(r.variants, &st.Variants)
}

func scanStrategy(sc interface{ Scan(...any) error }) (Strategy, error) {
	var r strategyRow
	if err := sc.Scan(r.dest()...); err != nil {
		return r.st, err
	}
	return r.decode()
}

// Strategies lists a flag's strategies in an environment by sort order
// (ties by creation), with their segment ids.
func (q Q) Strategies(feature, env string) ([]Strategy, error) {
	return q.strategiesWhere(`fs.feature_name = $1 AND fs.environment = $2`, feature, env)
}

// FeatureStrategies lists a flag's strategies in every environment.
func (q Q) FeatureStrategies(feature string) ([]Strategy, error) {
	return q.strategiesWhere(`fs.feature_name = $1`, feature)
}

// AllStrategies lists every strategy of every flag.
func (q Q) AllStrategies() ([]Strategy, error) { return q.strategiesWhere(`1 = 1`) }

// strategyWithSegmentsQuery reads strategies with their segment links in
// one query: one row per (strategy, segment), or one row with a NULL
// segment for a strategy without any.
const strategyWithSegmentsQuery = `SELECT fs.id, fs.feature_name, fs.environment, fs.strategy_name, fs.title, fs.disabled,
	fs.sort_order, fs.parameters, fs.constraints, fs.variants, fs.created_at, fss.segment_id
	FROM feature_strategies fs LEFT JOIN feature_strategy_segments fss ON fss.strategy_id = fs.id WHERE `

func (q Q) strategiesWhere(cond string, args ...any) ([]Strategy, error) {
	// The rows are read in batches; other goroutines decode their JSON
	// columns (most of the cost of reading every strategy at start-up)
	// while the next batch is read.
	var (
		batches []*[]Strategy
		raw     []strategyRow
		segs    [][]int
		wg      sync.WaitGroup
		errMu   sync.Mutex
		decErr  error
		workers = make(chan struct{}, runtime.GOMAXPROCS(0))
	)
	flush := func() {
		if len(raw) == 0 {
			return
		}
		decoded := new([]Strategy)
		batches = append(batches, decoded)
		rows, rowSegs := raw, segs
		raw, segs = nil, nil
		workers <- struct{}{}
		wg.Go(func() {
			defer func() { <-workers }()
			out := make([]Strategy, len(rows))
			for j := range rows {
				st, err := rows[j].decode()
				if err != nil {
					errMu.Lock()
					decErr = err
					errMu.Unlock()
					return
				}
				st.Segments = append(st.Segments, rowSegs[j]...)
				out[j] = st
			}
			*decoded = out
		})
	}
	err := q.eachRow(func(row scanner) error {
		var (
			r   strategyRow
			seg sql.NullInt64
		)
		if err := row.Scan(append(r.dest(), &seg)...); err != nil {
			return err
		}
		if n := len(raw); n == 0 || raw[n-1].st.ID != r.st.ID {
			if n >= strategyBatch {
				flush()
			}
			raw, segs = append(raw, r), append(segs, nil)
		}
		if seg.Valid {
			segs[len(segs)-1] = append(segs[len(segs)-1], int(seg.Int64))
		}
		return nil
	}, strategyWithSegmentsQuery+cond+` ORDER BY fs.sort_order, fs.created_at, fs.id, fss.segment_id`, args...)
	flush()
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if decErr != nil {
		return nil, decErr
	}
	out := []Strategy{}
	for _, b := range batches {
		out = append(out, *b...)
	}
	return out, nil
}

// strategyBatch is how many strategies are decoded together.
const strategyBatch = 512

// Strategy returns one strategy by id or a NotFound error.
func (q Q) Strategy(id string) (Strategy, error) {
	st, err := scanStrategy(q.q.QueryRowContext(q.ctx, `SELECT `+strategyColumns+` FROM feature_strategies WHERE id = $1`, id))
	if err == sql.ErrNoRows {
		return st, apierr.NotFound("Could not find strategy with id: %s", id)
	}
	if err != nil {
		return st, q.s.translate(err)
	}
	segs, err := collect(q, scanInt, `SELECT segment_id FROM feature_strategy_segments WHERE strategy_id = $1 ORDER BY segment_id`, id)
	st.Segments = append(st.Segments, segs...)
	return st, err
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

// NextStrategySortOrder is one past the highest sort order in a flag
// environment, at most the largest the INTEGER column holds.
func (q Q) NextStrategySortOrder(feature, env string) (int, error) {
	var n sql.NullInt64
	err := q.row([]any{&n}, `SELECT MAX(sort_order) FROM feature_strategies WHERE feature_name = $1 AND environment = $2`, feature, env)
	if !n.Valid {
		return 0, err
	}
	return int(min(n.Int64+1, math.MaxInt32)), err
}

// StrategyUsesContextField reports whether any strategy or segment
// constraint names the context field (a field in use cannot be deleted).
func (q Q) StrategyUsesContextField(name string) (bool, error) {
	var n int
	needle := "%\"contextName\":" + jsonQuote(name) + "%"
	err := q.row([]any{&n}, `SELECT (SELECT COUNT(*) FROM feature_strategies WHERE constraints LIKE $1)
		+ (SELECT COUNT(*) FROM segments WHERE constraints LIKE $1)`, needle)
	return n > 0, err
}

// ContextFieldUse is a strategy whose constraints name a context field,
// as Unleash's GET /api/admin/context/{name}/strategies lists it.
type ContextFieldUse struct {
	ID           string `json:"id"`
	ProjectID    string `json:"projectId"`
	FeatureName  string `json:"featureName"`
	StrategyName string `json:"strategyName"`
	Environment  string `json:"environment"`
}

// StrategiesUsingContextField lists the strategies of flags not archived
// with a constraint on the context field, by flag and environment (as
// Unleash lists them; an archived flag's strategies are not shown).
func (q Q) StrategiesUsingContextField(name string) ([]ContextFieldUse, error) {
	sts, err := q.strategiesWhere(`fs.constraints LIKE $1`, "%\"contextName\":"+jsonQuote(name)+"%")
	if err != nil {
		return nil, err
	}
	out := []ContextFieldUse{}
	projects := map[string]string{}
	for _, st := range sts {
		if !slices.ContainsFunc(st.Constraints, func(c engine.Constraint) bool { return c.ContextName == name }) {
			continue
		}
		project, ok := projects[st.FeatureName]
		if !ok {
			f, err := q.Feature(st.FeatureName)
			if err != nil {
				return nil, err
			}
			project = f.Project
			if f.Archived {
				project = "" // skipped below
			}
			projects[st.FeatureName] = project
		}
		if project == "" {
			continue
		}
		out = append(out, ContextFieldUse{ID: st.ID, ProjectID: project, FeatureName: st.FeatureName, StrategyName: st.Name, Environment: st.Environment})
	}
	slices.SortFunc(out, func(a, b ContextFieldUse) int {
		return cmp.Or(cmp.Compare(a.FeatureName, b.FeatureName), cmp.Compare(a.Environment, b.Environment), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
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
