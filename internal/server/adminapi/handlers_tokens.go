package adminapi

import (
	"net/http"
	"time"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

func (s *API) listAPITokens(w http.ResponseWriter, r *http.Request) error {
	out, err := domain.ListAPITokens(s.store.Q(r.Context()), domain.PrincipalFrom(r.Context()))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"tokens": out})
}

func (s *API) createAPIToken(w http.ResponseWriter, r *http.Request) error {
	t, err := apply(s, r, domain.CreateAPIToken)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "api-tokens")
	return httpjson.Write(w, http.StatusCreated, t)
}

func (s *API) deleteAPIToken(w http.ResponseWriter, r *http.Request) error {
	p := domain.PrincipalFrom(r.Context())
	if err := s.store.Tx(r.Context(), func(tx *store.Tx) error { return domain.DeleteAPIToken(tx, p, r.PathValue("token")) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

// updateTokenBody is the body of PUT /api/admin/api-tokens/{token}.
type updateTokenBody struct {
	ExpiresAt *time.Time `json:"expiresAt"`
}

func (s *API) updateAPIToken(w http.ResponseWriter, r *http.Request) error {
	var body updateTokenBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		return domain.SetAPITokenExpiry(tx, p, r.PathValue("token"), body.ExpiresAt)
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}
