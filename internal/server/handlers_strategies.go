package server

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// featureEnvScope is the flag and environment named by a route's path,
// checked to exist and not be archived.
type featureEnvScope struct {
	project, feature, env string
	f                     store.Feature
	fe                    store.FeatureEnvironment
}

func loadFeatureEnv(q store.Q, r *http.Request, allowArchived bool) (featureEnvScope, error) {
	return loadScope(q, r.PathValue("projectId"), r.PathValue("featureName"), r.PathValue("environment"), allowArchived)
}

func loadScope(q store.Q, project, feature, env string, allowArchived bool) (featureEnvScope, error) {
	sc := featureEnvScope{project: project, feature: feature, env: env}
	var err error
	if sc.f, sc.fe, err = q.FeatureWithEnvironment(sc.project, sc.feature, sc.env); err != nil {
		return sc, err
	}
	if sc.f.Archived && !allowArchived {
		return sc, archivedError()
	}
	return sc, nil
}

func (sc featureEnvScope) event(typ string, p *Principal, data, pre any) store.NewEvent {
	return store.NewEvent{Type: typ, Actor: p.Actor(), FeatureName: sc.feature, Project: sc.project, Environment: sc.env, Data: data, PreData: pre}
}

// setEnvironmentEnabled writes the state and, when it changed, its event.
func setEnvironmentEnabled(tx *store.Tx, sc featureEnvScope, p *Principal, enabled bool) error {
	changed, err := tx.SetFeatureEnvironmentEnabled(sc.feature, sc.env, enabled)
	if err != nil || !changed {
		return err
	}
	typ := map[bool]string{true: "feature-environment-enabled", false: "feature-environment-disabled"}[enabled]
	return tx.Event(sc.event(typ, p, nil, nil))
}

func (s *Server) featureEnvironmentOn(w http.ResponseWriter, r *http.Request) error {
	return s.toggleEnvironment(w, r, true)
}

func (s *Server) featureEnvironmentOff(w http.ResponseWriter, r *http.Request) error {
	return s.toggleEnvironment(w, r, false)
}

// toggleEnvironment turns a flag on or off in an environment and returns
// the flag. Turning a flag on first gives the environment an active
// strategy when it has none, and with shouldActivateDisabledStrategies=true
// re-enables its disabled strategies (see ensureActiveStrategyLoaded).
func (s *Server) toggleEnvironment(w http.ResponseWriter, r *http.Request, enabled bool) error {
	p := PrincipalFrom(r.Context())
	activateDisabled := r.URL.Query().Get("shouldActivateDisabledStrategies") == "true"
	var view featureView
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		f, strategies, err := toggleInTx(tx, p, r.PathValue("projectId"), r.PathValue("featureName"), r.PathValue("environment"), enabled, activateDisabled)
		if err != nil {
			return err
		}
		// Read in the same transaction: the response shows exactly this
		// change, and costs no second connection checkout.
		view, err = loadFeatureViewWith(tx.Q, f, strategies)
		return err
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, view)
}

// SetFeatureEnabled turns a flag on or off in an environment on behalf of
// p, checking p's permission first, and writes the events. It is the seam
// for callers inside the process (for example signal actions run as a
// service account).
func (s *Server) SetFeatureEnabled(ctx context.Context, p *Principal, project, feature, env string, enabled bool) error {
	if !p.Can(PermUpdateFeatureEnvironment, project, env) {
		return forbidden(PermUpdateFeatureEnvironment, env)
	}
	return s.store.Tx(ctx, func(tx *store.Tx) error {
		_, _, err := toggleInTx(tx, p, project, feature, env, enabled, false)
		return err
	})
}

// toggleInTx switches one flag in one environment, with its events, and
// returns the flag and, when it read them and left them unchanged, its
// strategies in every environment (nil otherwise).
func toggleInTx(tx *store.Tx, p *Principal, project, feature, env string, enabled, activateDisabled bool) (store.Feature, []store.Strategy, error) {
	sc, err := loadScope(tx.Q, project, feature, env, false)
	if err != nil {
		return sc.f, nil, err
	}
	var strategies []store.Strategy
	if enabled {
		if strategies, err = ensureActiveStrategyLoaded(tx, sc, p, activateDisabled); err != nil {
			return sc.f, nil, err
		}
	}
	return sc.f, strategies, setEnvironmentEnabled(tx, sc, p, enabled)
}

// bulkToggleBody is the body of the bulk on/off routes.
type bulkToggleBody struct {
	Features []string `json:"features"`
}

func (s *Server) bulkEnvironmentOn(w http.ResponseWriter, r *http.Request) error {
	return s.bulkToggle(w, r, true)
}

func (s *Server) bulkEnvironmentOff(w http.ResponseWriter, r *http.Request) error {
	return s.bulkToggle(w, r, false)
}

// bulkToggle switches several flags of a project in one environment, all
// or none.
func (s *Server) bulkToggle(w http.ResponseWriter, r *http.Request, enabled bool) error {
	var body bulkToggleBody
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	if len(body.Features) == 0 {
		return apierr.Validation("The `features` property must list at least one flag.")
	}
	p := PrincipalFrom(r.Context())
	activateDisabled := r.URL.Query().Get("shouldActivateDisabledStrategies") == "true"
	// A fixed order keeps concurrent bulk calls from locking rows in
	// opposite orders.
	names := slices.Compact(slices.Sorted(slices.Values(body.Features)))
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		for _, name := range names {
			if _, _, err := toggleInTx(tx, p, r.PathValue("projectId"), name, r.PathValue("environment"), enabled, activateDisabled); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return writeEmpty(w, http.StatusOK)
}

func ensureActiveStrategy(tx *store.Tx, sc featureEnvScope, p *Principal, activateDisabled bool) error {
	_, err := ensureActiveStrategyLoaded(tx, sc, p, activateDisabled)
	return err
}

// ensureActiveStrategyLoaded prepares a flag environment for being turned
// on, as Unleash does: with activateDisabled and any disabled strategy,
// every strategy of the environment is stored enabled (a
// feature-strategy-update for each that changed, also when the flag is
// already on); an
// environment without strategies, or with only disabled ones that are not
// re-activated, gets a 100% gradual rollout. It returns the flag's
// strategies in every environment when it changed none of them (nil when
// it did), so the caller can build the flag's view without reading them
// again.
func ensureActiveStrategyLoaded(tx *store.Tx, sc featureEnvScope, p *Principal, activateDisabled bool) ([]store.Strategy, error) {
	all, err := tx.FeatureStrategies(sc.feature)
	if err != nil {
		return nil, err
	}
	var strategies []store.Strategy
	for _, st := range all {
		if st.Environment == sc.env {
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
func activateStrategies(tx *store.Tx, sc featureEnvScope, p *Principal, strategies []store.Strategy) error {
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
func addDefaultStrategy(tx *store.Tx, sc featureEnvScope, p *Principal) error {
	if !p.Can(PermCreateFeatureStrategy, sc.project, sc.env) {
		return forbidden(PermCreateFeatureStrategy, sc.env)
	}
	order, err := tx.NextStrategySortOrder(sc.feature, sc.env)
	if err != nil {
		return err
	}
	st := store.Strategy{ID: uuid.NewString(), Name: "flexibleRollout", FeatureName: sc.feature, Environment: sc.env, SortOrder: order,
		Parameters:  map[string]string{"rollout": "100", "stickiness": "default", "groupId": sc.feature},
		Constraints: []engine.Constraint{}, Variants: []engine.Variant{}, Segments: []int{}, CreatedAt: tx.Now()}
	if err := tx.InsertStrategy(st); err != nil {
		return err
	}
	return tx.Event(sc.event("feature-strategy-add", p, st, nil))
}

// loadEnvStrategies reads the flag environment of the path and its
// strategies, for the read-only routes.
func (s *Server) loadEnvStrategies(r *http.Request) (featureEnvScope, []store.Strategy, error) {
	q := s.store.Q(r.Context())
	sc, err := loadFeatureEnv(q, r, true)
	if err != nil {
		return sc, nil, err
	}
	strategies, err := q.Strategies(sc.feature, sc.env)
	return sc, strategies, err
}

func (s *Server) getFeatureEnvironment(w http.ResponseWriter, r *http.Request) error {
	sc, strategies, err := s.loadEnvStrategies(r)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"name": sc.feature, "environment": sc.env, "enabled": sc.fe.Enabled,
		"strategies": strategies, "variants": sc.fe.Variants})
}

func (s *Server) listStrategies(w http.ResponseWriter, r *http.Request) error {
	_, strategies, err := s.loadEnvStrategies(r)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, strategies)
}

func (s *Server) getStrategy(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	sc, err := loadFeatureEnv(q, r, true)
	if err != nil {
		return err
	}
	st, err := strategyIn(q, sc, r.PathValue("strategyId"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, st)
}

// strategyIn loads a strategy that belongs to the scope's flag environment.
func strategyIn(q store.Q, sc featureEnvScope, id string) (store.Strategy, error) {
	st, err := q.Strategy(id)
	if err != nil {
		return st, err
	}
	if st.FeatureName != sc.feature || st.Environment != sc.env {
		return st, apierr.NotFound("Could not find strategy with id: %s", id)
	}
	return st, nil
}

// strategyBody is the body of strategy add and update.
type strategyBody struct {
	Name        string            `json:"name"`
	Title       *string           `json:"title"`
	Disabled    *bool             `json:"disabled"`
	SortOrder   *int32            `json:"sortOrder"` // an INTEGER column: int32 bounds it
	Constraints []constraintInput `json:"constraints"`
	Parameters  engine.Parameters `json:"parameters"`
	Variants    []variantInput    `json:"variants"`
	Segments    []int             `json:"segments"`
}

// toStrategy validates the body and fills defaults: a flexibleRollout
// gets a rollout of 100, the project's default stickiness and the flag's
// name as groupId when they are missing; other strategies keep their
// parameters as given.
func (b strategyBody) toStrategy(q store.Q, sc featureEnvScope) (store.Strategy, error) {
	if b.Name == "" {
		return store.Strategy{}, apierr.Validation("The `name` property is required. It was not present on the data you sent.")
	}
	if _, err := q.StrategyType(b.Name); err != nil {
		return store.Strategy{}, apierr.Validation("Could not find strategy type with name %s", b.Name)
	}
	if err := validateConstraints("constraints", b.Constraints); err != nil {
		return store.Strategy{}, err
	}
	variants, err := normalizeVariants("variants", b.Variants, strategyVariants)
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
			proj, err := q.Project(sc.project)
			if err != nil {
				return store.Strategy{}, err
			}
			params["stickiness"] = cmp.Or(proj.DefaultStickiness, "default")
		}
		if params["groupId"] == "" {
			params["groupId"] = sc.feature
		}
	}
	st := store.Strategy{Name: b.Name, Title: b.Title, FeatureName: sc.feature, Environment: sc.env, Parameters: params,
		Constraints: nonNilSlice(engineConstraints(b.Constraints)), Variants: variants, Segments: nonNilSlice(b.Segments)}
	if b.Disabled != nil {
		st.Disabled = *b.Disabled
	}
	slices.Sort(st.Segments)
	st.Segments = slices.Compact(st.Segments)
	return st, nil
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (s *Server) addStrategy(w http.ResponseWriter, r *http.Request) error {
	var body strategyBody
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	p := PrincipalFrom(r.Context())
	var created store.Strategy
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		sc, err := loadFeatureEnv(tx.Q, r, false)
		if err != nil {
			return err
		}
		st, err := body.toStrategy(tx.Q, sc)
		if err != nil {
			return err
		}
		existing, err := tx.Strategies(sc.feature, sc.env)
		if err != nil {
			return err
		}
		if len(existing) >= maxStrategies {
			return apierr.Validation("A flag may have at most %d strategies per environment.", maxStrategies)
		}
		st.ID, st.CreatedAt = uuid.NewString(), tx.Now()
		if body.SortOrder != nil {
			st.SortOrder = int(*body.SortOrder)
		} else if st.SortOrder, err = tx.NextStrategySortOrder(sc.feature, sc.env); err != nil {
			return err
		}
		if err := tx.InsertStrategy(st); err != nil {
			return err
		}
		created = st
		return tx.Event(sc.event("feature-strategy-add", p, st, nil))
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, created)
}

func (s *Server) updateStrategy(w http.ResponseWriter, r *http.Request) error {
	var body strategyBody
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	return s.applyStrategyUpdate(w, r, body)
}

// applyStrategyUpdate replaces a strategy with its events.
func (s *Server) applyStrategyUpdate(w http.ResponseWriter, r *http.Request, body strategyBody) error {
	p := PrincipalFrom(r.Context())
	var updated store.Strategy
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		sc, err := loadFeatureEnv(tx.Q, r, false)
		if err != nil {
			return err
		}
		old, err := strategyIn(tx.Q, sc, r.PathValue("strategyId"))
		if err != nil {
			return err
		}
		st, err := body.toStrategy(tx.Q, sc)
		if err != nil {
			return err
		}
		// As on Unleash: the sort order changes only through
		// set-sort-order, and a missing (or null) title, disabled or
		// segments keeps the strategy's own.
		st.ID, st.CreatedAt, st.SortOrder = old.ID, old.CreatedAt, old.SortOrder
		if body.Disabled == nil {
			st.Disabled = old.Disabled
		}
		if body.Title == nil {
			st.Title = old.Title
		}
		if body.Segments == nil {
			st.Segments = old.Segments
		}
		if err := tx.UpdateStrategy(st); err != nil {
			return err
		}
		updated = st
		if err := tx.Event(sc.event("feature-strategy-update", p, st, old)); err != nil {
			return err
		}
		return disableWhenNoActiveStrategy(tx, sc, p)
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, updated)
}

// disableWhenNoActiveStrategy turns the environment off when its last
// active strategy was disabled or removed.
func disableWhenNoActiveStrategy(tx *store.Tx, sc featureEnvScope, p *Principal) error {
	strategies, err := tx.Strategies(sc.feature, sc.env)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(strategies, func(st store.Strategy) bool { return !st.Disabled }) {
		return nil
	}
	return setEnvironmentEnabled(tx, sc, p, false)
}

func (s *Server) deleteStrategy(w http.ResponseWriter, r *http.Request) error {
	p := PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		sc, err := loadFeatureEnv(tx.Q, r, false)
		if err != nil {
			return err
		}
		old, err := strategyIn(tx.Q, sc, r.PathValue("strategyId"))
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
	})
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	return writeEmpty(w, http.StatusOK)
}

// strategyOrder is one element of the set-sort-order body.
type strategyOrder struct {
	ID        string `json:"id"`
	SortOrder *int32 `json:"sortOrder"`
}

func (s *Server) reorderStrategies(w http.ResponseWriter, r *http.Request) error {
	var body []strategyOrder
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	for i, o := range body {
		if o.ID == "" || o.SortOrder == nil {
			return apierr.Validation("The `[%d]` item needs both `id` and `sortOrder`.", i)
		}
	}
	p := PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		sc, err := loadFeatureEnv(tx.Q, r, false)
		if err != nil {
			return err
		}
		before, err := tx.Strategies(sc.feature, sc.env)
		if err != nil {
			return err
		}
		ids := store.SortedIDs(before)
		for _, o := range body {
			if !slices.Contains(ids, o.ID) {
				return apierr.Validation("Strategy %s does not belong to flag %s in environment %s.", o.ID, sc.feature, sc.env)
			}
			if err := tx.SetStrategySortOrder(o.ID, int(*o.SortOrder)); err != nil {
				return err
			}
		}
		after, err := tx.Strategies(sc.feature, sc.env)
		if err != nil {
			return err
		}
		return tx.Event(sc.event("strategy-order-changed", p,
			map[string]any{"strategyIds": store.SortedIDs(after)}, map[string]any{"strategyIds": ids}))
	})
	if err != nil {
		return err
	}
	return writeEmpty(w, http.StatusOK)
}

func (s *Server) getEnvironmentVariants(w http.ResponseWriter, r *http.Request) error {
	sc, err := loadFeatureEnv(s.store.Q(r.Context()), r, true)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"version": 1, "variants": sc.fe.Variants})
}

func (s *Server) putEnvironmentVariants(w http.ResponseWriter, r *http.Request) error {
	var body []variantInput
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	variants, err := normalizeVariants("variants", body, defaultedVariants)
	if err != nil {
		return err
	}
	p := PrincipalFrom(r.Context())
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
		sc, err := loadFeatureEnv(tx.Q, r, false)
		if err != nil {
			return err
		}
		if err := tx.SetFeatureEnvironmentVariants(sc.feature, sc.env, variants); err != nil {
			return err
		}
		return tx.Event(sc.event("feature-environment-variants-updated", p,
			map[string]any{"variants": variants}, map[string]any{"variants": sc.fe.Variants}))
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"version": 1, "variants": variants})
}

func (s *Server) patchStrategy(w http.ResponseWriter, r *http.Request) error {
	var ops []patchOp
	if err := decodeJSON(r, &ops); err != nil {
		return err
	}
	q := s.store.Q(r.Context())
	sc, err := loadFeatureEnv(q, r, false)
	if err != nil {
		return err
	}
	st, err := strategyIn(q, sc, r.PathValue("strategyId"))
	if err != nil {
		return err
	}
	order := int32(st.SortOrder)
	doc, _ := json.Marshal(strategyBody{Name: st.Name, Title: st.Title, Disabled: &st.Disabled, SortOrder: &order,
		Constraints: constraintInputs(st.Constraints), Parameters: engine.Parameters(st.Parameters), Variants: variantInputs(st.Variants), Segments: st.Segments})
	patched, err := applyPatch(doc, ops)
	if err != nil {
		return err
	}
	var body strategyBody
	if err := unmarshalBody(patched, &body); err != nil {
		return err
	}
	return s.applyStrategyUpdate(w, r, body)
}
