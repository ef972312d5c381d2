package adminapi

import (
	"encoding/json"
	"net/http"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

func (s *API) listStrategyTypes(w http.ResponseWriter, r *http.Request) error {
	types, err := s.store.Q(r.Context()).StrategyTypes()
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 1, "strategies": types})
}

func (s *API) getStrategyType(w http.ResponseWriter, r *http.Request) error {
	t, err := s.store.Q(r.Context()).StrategyType(r.PathValue("name"))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, t)
}

func (s *API) createStrategyType(w http.ResponseWriter, r *http.Request) error {
	t, err := apply(s, r, domain.CreateStrategyType)
	if err != nil {
		return err
	}
	httpjson.SetLocation(w, "strategies/%s", t.Name)
	return httpjson.Write(w, http.StatusCreated, t)
}

func (s *API) updateStrategyType(w http.ResponseWriter, r *http.Request) error {
	var body domain.StrategyTypeInput
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	return s.changeStrategyType(w, r, func(tx *store.Tx, p *domain.Principal, name string) error {
		return domain.UpdateStrategyType(tx, p, name, body)
	})
}

func (s *API) deprecateStrategyType(w http.ResponseWriter, r *http.Request) error {
	return s.changeStrategyType(w, r, func(tx *store.Tx, p *domain.Principal, name string) error {
		return domain.SetStrategyTypeDeprecated(tx, p, name, true)
	})
}

func (s *API) reactivateStrategyType(w http.ResponseWriter, r *http.Request) error {
	return s.changeStrategyType(w, r, func(tx *store.Tx, p *domain.Principal, name string) error {
		return domain.SetStrategyTypeDeprecated(tx, p, name, false)
	})
}

func (s *API) deleteStrategyType(w http.ResponseWriter, r *http.Request) error {
	return s.changeStrategyType(w, r, domain.DeleteStrategyType)
}

// changeStrategyType runs op on the path's strategy type in a transaction
// and answers 200.
func (s *API) changeStrategyType(w http.ResponseWriter, r *http.Request, op func(tx *store.Tx, p *domain.Principal, name string) error) error {
	p := domain.PrincipalFrom(r.Context())
	if err := s.store.Tx(r.Context(), func(tx *store.Tx) error { return op(tx, p, r.PathValue("name")) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

// featureTypeLifetimeBody is the body of PUT /api/admin/feature-types/:id/lifetime.
type featureTypeLifetimeBody struct {
	LifetimeDays json.RawMessage `json:"lifetimeDays"`
}

// updateFeatureTypeLifetime sets how many days a flag of this type lives
// before it is potentially stale (domain.SetFeatureTypeLifetime).
func (s *API) updateFeatureTypeLifetime(w http.ResponseWriter, r *http.Request) error {
	updated, err := apply(s, r, func(tx *store.Tx, p *domain.Principal, body featureTypeLifetimeBody) (store.FeatureType, error) {
		return domain.SetFeatureTypeLifetime(tx, p, r.PathValue("id"), body.LifetimeDays)
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, updated)
}
