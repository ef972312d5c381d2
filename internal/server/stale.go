package server

import (
	"context"
	"net/http"
	"time"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// staleCheckInterval is how often flags are checked against their type's
// lifetime (Unleash checks every minute).
const staleCheckInterval = time.Minute

// runStaleChecks marks potentially stale flags once a tick until ctx ends.
// The first check waits for the first tick: a check at start would race
// with whatever the process does first (tests call CheckStaleness
// themselves), and lifetimes are counted in days.
func (s *Server) runStaleChecks(ctx context.Context) {
	t := time.NewTicker(staleCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := s.CheckStaleness(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("potentially-stale check failed", "err", err)
		}
	}
}

// CheckStaleness marks the flags that outlived their type's lifetime
// potentially stale (domain.CheckStaleness) and returns how many it marked.
func (s *Server) CheckStaleness(ctx context.Context) (int, error) {
	return domain.CheckStaleness(ctx, s.store)
}

// staleBody is the body of POST /api/admin/projects/:projectId/stale.
type staleBody struct {
	Features []string `json:"features"`
	Value    *bool    `json:"value"`
}

func (s *Server) markProjectFeaturesStale(w http.ResponseWriter, r *http.Request) error {
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

func (s *Server) staleOn(w http.ResponseWriter, r *http.Request) error {
	return s.setFeatureStale(w, r, true)
}
func (s *Server) staleOff(w http.ResponseWriter, r *http.Request) error {
	return s.setFeatureStale(w, r, false)
}

// setFeatureStale serves POST /api/admin/features/:featureName/stale/on|off
// and answers with the flag.
func (s *Server) setFeatureStale(w http.ResponseWriter, r *http.Request, stale bool) error {
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
