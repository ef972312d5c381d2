package adminapi

import (
	"net/http"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// staleBody is the body of POST /api/admin/projects/:projectId/stale.
type staleBody struct {
	Features []string `json:"features"`
	Value    *bool    `json:"value"`
}

func (s *API) markProjectFeaturesStale(w http.ResponseWriter, r *http.Request) error {
	var body staleBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		return domain.MarkStale(tx, p, r.PathValue("projectId"), body.Features, body.Value)
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusAccepted)
}

func (s *API) staleOn(w http.ResponseWriter, r *http.Request) error {
	return s.setFeatureStale(w, r, true)
}
func (s *API) staleOff(w http.ResponseWriter, r *http.Request) error {
	return s.setFeatureStale(w, r, false)
}

// setFeatureStale serves POST /api/admin/features/:featureName/stale/on|off
// and answers with the flag.
func (s *API) setFeatureStale(w http.ResponseWriter, r *http.Request, stale bool) error {
	p := domain.PrincipalFrom(r.Context())
	var f store.Feature
	err := s.change(w, r, func(tx *store.Tx) (err error) {
		f, err = domain.SetFeatureStale(tx, p, r.PathValue("featureName"), stale)
		return err
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, f)
}
