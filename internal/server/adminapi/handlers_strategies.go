package adminapi

import (
	"net/http"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// The flag environment routes: on/off, strategies and variants. Each
// decodes its request, runs one domain operation in a transaction and
// writes the answer; the rules live in internal/domain.

// pathFeatureEnv names the project, flag and environment of the path.
func pathFeatureEnv(r *http.Request) (project, feature, env string) {
	return r.PathValue("projectId"), r.PathValue("featureName"), r.PathValue("environment")
}

// activateDisabledParam is the on routes' shouldActivateDisabledStrategies.
func activateDisabledParam(r *http.Request) bool {
	return r.URL.Query().Get("shouldActivateDisabledStrategies") == "true"
}

func (s *API) featureEnvironmentOn(w http.ResponseWriter, r *http.Request) error {
	return s.toggleEnvironment(w, r, true)
}

func (s *API) featureEnvironmentOff(w http.ResponseWriter, r *http.Request) error {
	return s.toggleEnvironment(w, r, false)
}

// toggleEnvironment turns a flag on or off in an environment and returns
// the flag (domain.SetEnabled).
func (s *API) toggleEnvironment(w http.ResponseWriter, r *http.Request, enabled bool) error {
	p := domain.PrincipalFrom(r.Context())
	project, feature, env := pathFeatureEnv(r)
	var view domain.FeatureView
	err := s.change(w, r, func(tx *store.Tx) error {
		f, strategies, err := domain.SetEnabled(tx, p, project, feature, env, enabled, activateDisabledParam(r))
		if err != nil {
			return err
		}
		// Read in the same transaction: the response shows exactly this
		// change, and costs no second connection checkout.
		view, err = domain.LoadFeatureViewWith(tx.Q, f, strategies)
		return err
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, view)
}

// bulkToggleBody is the body of the bulk on/off routes.
type bulkToggleBody struct {
	Features []string `json:"features"`
}

func (s *API) bulkEnvironmentOn(w http.ResponseWriter, r *http.Request) error {
	return s.bulkToggle(w, r, true)
}

func (s *API) bulkEnvironmentOff(w http.ResponseWriter, r *http.Request) error {
	return s.bulkToggle(w, r, false)
}

// bulkToggle switches several flags of a project in one environment, all
// or none (domain.SetEnabledBulk).
func (s *API) bulkToggle(w http.ResponseWriter, r *http.Request, enabled bool) error {
	var body bulkToggleBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		return domain.SetEnabledBulk(tx, p, r.PathValue("projectId"), r.PathValue("environment"), body.Features, enabled, activateDisabledParam(r))
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

// loadEnvStrategies reads the flag environment of the path and its
// strategies, for the read-only routes.
func (s *API) loadEnvStrategies(r *http.Request) (domain.FeatureEnv, []store.Strategy, error) {
	q := s.store.Q(r.Context())
	project, feature, env := pathFeatureEnv(r)
	sc, err := domain.LoadFeatureEnv(q, project, feature, env, true)
	if err != nil {
		return sc, nil, err
	}
	strategies, err := q.Strategies(sc.Feature, sc.Env)
	return sc, strategies, err
}

func (s *API) getFeatureEnvironment(w http.ResponseWriter, r *http.Request) error {
	sc, strategies, err := s.loadEnvStrategies(r)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"name": sc.Feature, "environment": sc.Env, "enabled": sc.FE.Enabled,
		"strategies": strategies, "variants": sc.FE.Variants})
}

func (s *API) listStrategies(w http.ResponseWriter, r *http.Request) error {
	_, strategies, err := s.loadEnvStrategies(r)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, strategies)
}

func (s *API) getStrategy(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	project, feature, env := pathFeatureEnv(r)
	sc, err := domain.LoadFeatureEnv(q, project, feature, env, true)
	if err != nil {
		return err
	}
	st, err := domain.StrategyIn(q, sc, r.PathValue("strategyId"))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, st)
}

func (s *API) addStrategy(w http.ResponseWriter, r *http.Request) error {
	var body domain.StrategyInput
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	project, feature, env := pathFeatureEnv(r)
	var created store.Strategy
	err := s.change(w, r, func(tx *store.Tx) (err error) {
		created, err = domain.AddStrategy(tx, p, project, feature, env, body)
		return err
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, created)
}

func (s *API) updateStrategy(w http.ResponseWriter, r *http.Request) error {
	var body domain.StrategyInput
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	project, feature, env := pathFeatureEnv(r)
	var updated store.Strategy
	err := s.change(w, r, func(tx *store.Tx) (err error) {
		updated, err = domain.UpdateStrategy(tx, p, project, feature, env, r.PathValue("strategyId"), body)
		return err
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, updated)
}

func (s *API) patchStrategy(w http.ResponseWriter, r *http.Request) error {
	var ops []domain.PatchOp
	if err := httpjson.Decode(r, 0, &ops); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	project, feature, env := pathFeatureEnv(r)
	var updated store.Strategy
	err := s.change(w, r, func(tx *store.Tx) (err error) {
		updated, err = domain.PatchStrategy(tx, p, project, feature, env, r.PathValue("strategyId"), ops)
		return err
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, updated)
}

func (s *API) deleteStrategy(w http.ResponseWriter, r *http.Request) error {
	p := domain.PrincipalFrom(r.Context())
	project, feature, env := pathFeatureEnv(r)
	err := s.change(w, r, func(tx *store.Tx) error {
		return domain.DeleteStrategy(tx, p, project, feature, env, r.PathValue("strategyId"))
	})
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *API) reorderStrategies(w http.ResponseWriter, r *http.Request) error {
	var body []domain.StrategyOrder
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	project, feature, env := pathFeatureEnv(r)
	err := s.change(w, r, func(tx *store.Tx) error {
		return domain.ReorderStrategies(tx, p, project, feature, env, body)
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *API) getEnvironmentVariants(w http.ResponseWriter, r *http.Request) error {
	project, feature, env := pathFeatureEnv(r)
	sc, err := domain.LoadFeatureEnv(s.store.Q(r.Context()), project, feature, env, true)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 1, "variants": sc.FE.Variants})
}

func (s *API) putEnvironmentVariants(w http.ResponseWriter, r *http.Request) error {
	var body []domain.VariantInput
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	project, feature, env := pathFeatureEnv(r)
	var variants any
	err := s.change(w, r, func(tx *store.Tx) error {
		vs, err := domain.SetVariants(tx, p, project, feature, env, body)
		variants = vs
		return err
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 1, "variants": variants})
}
