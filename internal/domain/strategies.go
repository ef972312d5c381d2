package domain

import (
	"cmp"
	"encoding/json"
	"slices"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// StrategyInput is a strategy as an admin call adds or replaces it.
type StrategyInput struct {
	Name        string            `json:"name"`
	Title       *string           `json:"title"`
	Disabled    *bool             `json:"disabled"`
	SortOrder   *int32            `json:"sortOrder"` // an INTEGER column: int32 bounds it
	Constraints []ConstraintInput `json:"constraints"`
	Parameters  engine.Parameters `json:"parameters"`
	Variants    []VariantInput    `json:"variants"`
	Segments    []int             `json:"segments"`
}

// toStrategy validates the input and fills defaults: a flexibleRollout
// gets a rollout of 100, the project's default stickiness and the flag's
// name as groupId when they are missing; other strategies keep their
// parameters as given.
func (b StrategyInput) toStrategy(q store.Q, sc FeatureEnv) (store.Strategy, error) {
	if b.Name == "" {
		return store.Strategy{}, apierr.Validation("The `name` property is required. It was not present on the data you sent.")
	}
	if _, err := q.StrategyType(b.Name); err != nil {
		return store.Strategy{}, apierr.Validation("Could not find strategy type with name %s", b.Name)
	}
	if err := ValidateConstraints("constraints", b.Constraints); err != nil {
		return store.Strategy{}, err
	}
	variants, err := NormalizeVariants("variants", b.Variants, StrategyVariants)
	if err != nil {
		return store.Strategy{}, err
	}
	if len(b.Segments) > maxSegmentsPerStrat {
		return store.Strategy{}, apierr.Validation("The `segments` property may hold at most %d segments.", maxSegmentsPerStrat)
	}
	for _, id := range b.Segments {
		if _, err := q.Segment(id); err != nil {
			return store.Strategy{}, err
		}
	}
	params := map[string]string{}
	for k, v := range b.Parameters {
		params[k] = v
	}
	if b.Name == "flexibleRollout" {
		if _, ok := params["rollout"]; !ok {
			params["rollout"] = "100"
		}
		if params["stickiness"] == "" {
			proj, err := q.Project(sc.Project)
			if err != nil {
				return store.Strategy{}, err
			}
			params["stickiness"] = cmp.Or(proj.DefaultStickiness, "default")
		}
		if params["groupId"] == "" {
			params["groupId"] = sc.Feature
		}
	}
	st := store.Strategy{Name: b.Name, Title: b.Title, FeatureName: sc.Feature, Environment: sc.Env, Parameters: params,
		Constraints: NonNil(EngineConstraints(b.Constraints)), Variants: variants, Segments: NonNil(b.Segments)}
	if b.Disabled != nil {
		st.Disabled = *b.Disabled
	}
	slices.Sort(st.Segments)
	st.Segments = slices.Compact(st.Segments)
	return st, nil
}

// NonNil returns s, or an empty slice for nil (so it encodes as []).
func NonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// StrategyIn loads a strategy that belongs to the flag environment sc.
func StrategyIn(q store.Q, sc FeatureEnv, id string) (store.Strategy, error) {
	st, err := q.Strategy(id)
	if err != nil {
		return st, err
	}
	if st.FeatureName != sc.Feature || st.Environment != sc.Env {
		return st, apierr.NotFound("Could not find strategy with id: %s", id)
	}
	return st, nil
}

// AddStrategy adds a strategy to a flag environment as p, with its event.
func AddStrategy(tx *store.Tx, p *Principal, project, feature, env string, in StrategyInput) (store.Strategy, error) {
	if err := p.Require(PermCreateFeatureStrategy, project, env); err != nil {
		return store.Strategy{}, err
	}
	if err := gateChange(tx.Q, p, project, env); err != nil {
		return store.Strategy{}, err
	}
	sc, err := LoadFeatureEnv(tx.Q, project, feature, env, false)
	if err != nil {
		return store.Strategy{}, err
	}
	st, err := in.toStrategy(tx.Q, sc)
	if err != nil {
		return store.Strategy{}, err
	}
	existing, err := tx.Strategies(sc.Feature, sc.Env)
	if err != nil {
		return store.Strategy{}, err
	}
	if len(existing) >= maxStrategies {
		return store.Strategy{}, apierr.Validation("A flag may have at most %d strategies per environment.", maxStrategies)
	}
	st.ID, st.CreatedAt = uuid.NewString(), tx.Now()
	if in.SortOrder != nil {
		st.SortOrder = int(*in.SortOrder)
	} else if st.SortOrder, err = tx.NextStrategySortOrder(sc.Feature, sc.Env); err != nil {
		return store.Strategy{}, err
	}
	if err := tx.InsertStrategy(st); err != nil {
		return store.Strategy{}, err
	}
	return st, tx.Event(sc.event("feature-strategy-add", p, st, nil))
}

// UpdateStrategy replaces a strategy as p, with its events; the flag
// environment is turned off when no active strategy is left.
func UpdateStrategy(tx *store.Tx, p *Principal, project, feature, env, id string, in StrategyInput) (store.Strategy, error) {
	sc, old, err := strategyToChange(tx, p, PermUpdateFeatureStrategy, project, feature, env, id)
	if err != nil {
		return store.Strategy{}, err
	}
	return updateStrategy(tx, p, sc, old, in)
}

// strategyToChange checks that p holds perm in the flag environment and
// loads it with the strategy id, for a change to that strategy.
func strategyToChange(tx *store.Tx, p *Principal, perm, project, feature, env, id string) (FeatureEnv, store.Strategy, error) {
	if err := p.Require(perm, project, env); err != nil {
		return FeatureEnv{}, store.Strategy{}, err
	}
	if err := gateChange(tx.Q, p, project, env); err != nil {
		return FeatureEnv{}, store.Strategy{}, err
	}
	sc, err := LoadFeatureEnv(tx.Q, project, feature, env, false)
	if err != nil {
		return FeatureEnv{}, store.Strategy{}, err
	}
	old, err := StrategyIn(tx.Q, sc, id)
	return sc, old, err
}

func updateStrategy(tx *store.Tx, p *Principal, sc FeatureEnv, old store.Strategy, in StrategyInput) (store.Strategy, error) {
	st, err := in.toStrategy(tx.Q, sc)
	if err != nil {
		return store.Strategy{}, err
	}
	// As on Unleash: the sort order changes only through set-sort-order,
	// and a missing (or null) title, disabled or segments keeps the
	// strategy's own.
	st.ID, st.CreatedAt, st.SortOrder = old.ID, old.CreatedAt, old.SortOrder
	if in.Disabled == nil {
		st.Disabled = old.Disabled
	}
	if in.Title == nil {
		st.Title = old.Title
	}
	if in.Segments == nil {
		st.Segments = old.Segments
	}
	if err := tx.UpdateStrategy(st); err != nil {
		return store.Strategy{}, err
	}
	if err := tx.Event(sc.event("feature-strategy-update", p, st, old)); err != nil {
		return store.Strategy{}, err
	}
	return st, disableWhenNoActiveStrategy(tx, sc, p)
}

// PatchStrategy applies JSON Patch operations to a strategy's input form
// (name, title, disabled, sortOrder, constraints, parameters, variants,
// segments) and stores the result as UpdateStrategy does.
func PatchStrategy(tx *store.Tx, p *Principal, project, feature, env, id string, ops []PatchOp) (store.Strategy, error) {
	sc, old, err := strategyToChange(tx, p, PermUpdateFeatureStrategy, project, feature, env, id)
	if err != nil {
		return store.Strategy{}, err
	}
	order := int32(old.SortOrder)
	doc, _ := json.Marshal(StrategyInput{Name: old.Name, Title: old.Title, Disabled: &old.Disabled, SortOrder: &order,
		Constraints: ConstraintInputs(old.Constraints), Parameters: engine.Parameters(old.Parameters), Variants: VariantInputs(old.Variants), Segments: old.Segments})
	patched, err := ApplyPatch(doc, ops)
	if err != nil {
		return store.Strategy{}, err
	}
	var in StrategyInput
	if err := httpjson.Unmarshal(patched, &in); err != nil {
		return store.Strategy{}, err
	}
	return updateStrategy(tx, p, sc, old, in)
}

// DeleteStrategy removes a strategy as p, with its event; the flag
// environment is turned off when no active strategy is left.
func DeleteStrategy(tx *store.Tx, p *Principal, project, feature, env, id string) error {
	sc, old, err := strategyToChange(tx, p, PermDeleteFeatureStrategy, project, feature, env, id)
	if err != nil {
		return err
	}
	if err := tx.DeleteStrategy(old.ID); err != nil {
		return err
	}
	if err := disableWhenNoActiveStrategy(tx, sc, p); err != nil {
		return err
	}
	return tx.Event(sc.event("feature-strategy-remove", p, nil, old))
}

// StrategyOrder is one strategy's new place (set-sort-order).
type StrategyOrder struct {
	ID        string `json:"id"`
	SortOrder *int32 `json:"sortOrder"`
}

// ReorderStrategies sets the sort order of a flag environment's strategies
// as p, with one strategy-order-changed event.
func ReorderStrategies(tx *store.Tx, p *Principal, project, feature, env string, orders []StrategyOrder) error {
	if err := p.Require(PermUpdateFeatureStrategy, project, env); err != nil {
		return err
	}
	if err := gateChange(tx.Q, p, project, env); err != nil {
		return err
	}
	for i, o := range orders {
		if o.ID == "" || o.SortOrder == nil {
			return apierr.Validation("The `[%d]` item needs both `id` and `sortOrder`.", i)
		}
	}
	sc, err := LoadFeatureEnv(tx.Q, project, feature, env, false)
	if err != nil {
		return err
	}
	before, err := tx.Strategies(sc.Feature, sc.Env)
	if err != nil {
		return err
	}
	ids := store.SortedIDs(before)
	for _, o := range orders {
		if !slices.Contains(ids, o.ID) {
			return apierr.Validation("Strategy %s does not belong to flag %s in environment %s.", o.ID, sc.Feature, sc.Env)
		}
		if err := tx.SetStrategySortOrder(o.ID, int(*o.SortOrder)); err != nil {
			return err
		}
	}
	after, err := tx.Strategies(sc.Feature, sc.Env)
	if err != nil {
		return err
	}
	return tx.Event(sc.event("strategy-order-changed", p,
		map[string]any{"strategyIds": store.SortedIDs(after)}, map[string]any{"strategyIds": ids}))
}
