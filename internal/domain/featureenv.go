package domain

import (
	"slices"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// FeatureEnv is one flag in one environment, loaded and checked to exist.
type FeatureEnv struct {
	Project, Feature, Env string
	F                     store.Feature
	FE                    store.FeatureEnvironment
}

// LoadFeatureEnv loads a flag of project with its environment env: 404
// when either is missing, and 400 ArchivedFeatureError for an archived
// flag unless allowArchived.
func LoadFeatureEnv(q store.Q, project, feature, env string, allowArchived bool) (FeatureEnv, error) {
	sc := FeatureEnv{Project: project, Feature: feature, Env: env}
	var err error
	if sc.F, sc.FE, err = q.FeatureWithEnvironment(project, feature, env); err != nil {
		return sc, err
	}
	if sc.F.Archived && !allowArchived {
		return sc, ArchivedError()
	}
	return sc, nil
}

// ArchivedError is the answer to a change of an archived flag.
func ArchivedError() error {
	return &apierr.Error{Kind: apierr.KindValidation, Name: "ArchivedFeatureError", Message: "Cannot perform this operation on archived features"}
}

// event is an event about the flag environment, by p.
func (sc FeatureEnv) event(typ string, p *Principal, data, pre any) store.NewEvent {
	return store.NewEvent{Type: typ, Actor: p.Actor(), FeatureName: sc.Feature, Project: sc.Project, Environment: sc.Env, Data: data, PreData: pre}
}

// SetEnabled turns a flag on or off in an environment as p, with its
// events, after checking p's permission. Turning a flag on first gives the
// environment an active strategy when it has none and, with
// activateDisabled, re-enables its disabled strategies (see
// ensureActiveStrategy). It returns the flag and, when it read them and
// left them unchanged, its strategies in every environment (nil
// otherwise), so a caller can show the flag without reading them again.
//
// The admin on/off routes, the bulk routes and signal actions all switch
// flags through here.
func SetEnabled(tx *store.Tx, p *Principal, project, feature, env string, enabled, activateDisabled bool) (store.Feature, []store.Strategy, error) {
	if err := p.Require(PermUpdateFeatureEnvironment, project, env); err != nil {
		return store.Feature{}, nil, err
	}
	if err := gateChange(tx.Q, p, project, env); err != nil {
		return store.Feature{}, nil, err
	}
	sc, err := LoadFeatureEnv(tx.Q, project, feature, env, false)
	if err != nil {
		return sc.F, nil, err
	}
	var strategies []store.Strategy
	if enabled {
		if strategies, err = ensureActiveStrategy(tx, sc, p, activateDisabled); err != nil {
			return sc.F, nil, err
		}
	}
	return sc.F, strategies, setEnvironmentEnabled(tx, sc, p, enabled)
}

// SetEnabledBulk switches several flags of a project in one environment,
// all or none (the caller's transaction).
func SetEnabledBulk(tx *store.Tx, p *Principal, project, env string, features []string, enabled, activateDisabled bool) error {
	if len(features) == 0 {
		return apierr.Validation("The `features` property must list at least one flag.")
	}
	// A fixed order keeps concurrent bulk calls from locking rows in
	// opposite orders.
	for _, name := range slices.Compact(slices.Sorted(slices.Values(features))) {
		if _, _, err := SetEnabled(tx, p, project, name, env, enabled, activateDisabled); err != nil {
			return err
		}
	}
	return nil
}

// setEnvironmentEnabled writes the state and, when it changed, its event.
func setEnvironmentEnabled(tx *store.Tx, sc FeatureEnv, p *Principal, enabled bool) error {
	changed, err := tx.SetFeatureEnvironmentEnabled(sc.Feature, sc.Env, enabled)
	if err != nil || !changed {
		return err
	}
	typ := map[bool]string{true: "feature-environment-enabled", false: "feature-environment-disabled"}[enabled]
	return tx.Event(sc.event(typ, p, nil, nil))
}

// ensureActiveStrategy prepares a flag environment for being turned on, as
// Unleash does: with activateDisabled and any disabled strategy, every
// strategy of the environment is stored enabled (a feature-strategy-update
// for each that changed, also when the flag is already on); an environment
// without strategies, or with only disabled ones that are not re-activated,
// gets a 100% gradual rollout. It returns the flag's strategies in every
// environment when it changed none of them (nil when it did).
func ensureActiveStrategy(tx *store.Tx, sc FeatureEnv, p *Principal, activateDisabled bool) ([]store.Strategy, error) {
	all, err := tx.FeatureStrategies(sc.Feature)
	if err != nil {
		return nil, err
	}
	var strategies []store.Strategy
	for _, st := range all {
		if st.Environment == sc.Env {
			strategies = append(strategies, st)
		}
	}
	disabled := func(st store.Strategy) bool { return st.Disabled }
	onlyDisabled := !slices.ContainsFunc(strategies, func(st store.Strategy) bool { return !st.Disabled })
	changed := false
	if activateDisabled && slices.ContainsFunc(strategies, disabled) {
		if err := activateStrategies(tx, sc, p, strategies); err != nil {
			return nil, err
		}
		changed = true
	}
	if len(strategies) == 0 || (onlyDisabled && !activateDisabled) {
		if err := addDefaultStrategy(tx, sc, p); err != nil {
			return nil, err
		}
		changed = true
	}
	if changed {
		return nil, nil
	}
	return all, nil
}

// activateStrategies stores each strategy enabled, with its event. As on
// Unleash, which saves every strategy again, the variants' weights are
// spread anew over the stored (name-sorted) order, so the remainder moves
// to the first variable variants by name.
func activateStrategies(tx *store.Tx, sc FeatureEnv, p *Principal, strategies []store.Strategy) error {
	for _, old := range strategies {
		st := old
		st.Disabled = false
		st.Variants = slices.Clone(old.Variants)
		spreadWeights(st.Variants)
		if err := tx.UpdateStrategy(st); err != nil {
			return err
		}
		if err := tx.Event(sc.event("feature-strategy-update", p, st, old)); err != nil {
			return err
		}
	}
	return nil
}

// addDefaultStrategy gives a flag environment a 100% gradual rollout.
func addDefaultStrategy(tx *store.Tx, sc FeatureEnv, p *Principal) error {
	if err := p.Require(PermCreateFeatureStrategy, sc.Project, sc.Env); err != nil {
		return err
	}
	order, err := tx.NextStrategySortOrder(sc.Feature, sc.Env)
	if err != nil {
		return err
	}
	st := store.Strategy{ID: uuid.NewString(), Name: "flexibleRollout", FeatureName: sc.Feature, Environment: sc.Env, SortOrder: order,
		Parameters:  map[string]string{"rollout": "100", "stickiness": "default", "groupId": sc.Feature},
		Constraints: []engine.Constraint{}, Variants: []engine.Variant{}, Segments: []int{}, CreatedAt: tx.Now()}
	if err := tx.InsertStrategy(st); err != nil {
		return err
	}
	return tx.Event(sc.event("feature-strategy-add", p, st, nil))
}

// disableWhenNoActiveStrategy turns the environment off when its last
// active strategy was disabled or removed.
func disableWhenNoActiveStrategy(tx *store.Tx, sc FeatureEnv, p *Principal) error {
	strategies, err := tx.Strategies(sc.Feature, sc.Env)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(strategies, func(st store.Strategy) bool { return !st.Disabled }) {
		return nil
	}
	return setEnvironmentEnabled(tx, sc, p, false)
}

// SetVariants replaces a flag environment's (legacy) variants as p, with
// its event, and returns them normalized.
func SetVariants(tx *store.Tx, p *Principal, project, feature, env string, in []VariantInput) ([]engine.Variant, error) {
	if err := p.Require(PermUpdateEnvVariants, project, env); err != nil {
		return nil, err
	}
	if err := gateChange(tx.Q, p, project, env); err != nil {
		return nil, err
	}
	variants, err := NormalizeVariants("variants", in, DefaultedVariants)
	if err != nil {
		return nil, err
	}
	sc, err := LoadFeatureEnv(tx.Q, project, feature, env, false)
	if err != nil {
		return nil, err
	}
	if err := tx.SetFeatureEnvironmentVariants(sc.Feature, sc.Env, variants); err != nil {
		return nil, err
	}
	return variants, tx.Event(sc.event("feature-environment-variants-updated", p,
		map[string]any{"variants": variants}, map[string]any{"variants": sc.FE.Variants}))
}
