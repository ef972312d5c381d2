package server

import (
	"context"
	"net/http"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// staleCheckInterval is how often flags are checked against their type's
// lifetime (Unleash checks every minute).
const staleCheckInterval = time.Minute

// runStaleChecks marks potentially stale flags until ctx ends.
func (s *Server) runStaleChecks(ctx context.Context) {
	t := time.NewTicker(staleCheckInterval)
	defer t.Stop()
	for {
		if _, err := s.CheckStaleness(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("potentially-stale check failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CheckStaleness compares every live, non-stale flag's age with its type's
// lifetime and stores the result. Flags that become potentially stale get a
// feature-potentially-stale-on event (written by the system user, in the
// same transaction); flags that stop being potentially stale (their type's
// lifetime grew) are unmarked without an event, as in Unleash. It returns
// how many flags were newly marked.
func (s *Server) CheckStaleness(ctx context.Context) (int, error) {
	changes, err := s.store.Q(ctx).PotentiallyStaleChanges(s.store.Now())
	if err != nil || len(changes) == 0 {
		return 0, err
	}
	marked := 0
	err = s.store.Tx(ctx, func(tx *store.Tx) error {
		marked = 0 // the store may run this function again (a PostgreSQL deadlock)
		for _, c := range changes {
			if !c.PotentiallyStale {
				continue
			}
			changed, err := tx.SetPotentiallyStale(c.Name, true)
			if err != nil {
				return err
			}
			if !changed {
				continue // another instance marked it
			}
			marked++
			if err := tx.Event(store.NewEvent{Type: "feature-potentially-stale-on", Actor: systemActor, FeatureName: c.Name, Project: c.Project}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, c := range changes {
		if !c.PotentiallyStale {
			// A derived mark, not a change anyone made: stored outside the
			// event log, like Unleash's scheduler does.
			if _, err := s.store.Q(ctx).SetPotentiallyStale(c.Name, false); err != nil {
				return marked, err
			}
		}
	}
	return marked, nil
}

// setStale marks a flag stale or not and writes feature-stale-on/off when
// the mark changes.
func setStale(tx *store.Tx, p *domain.Principal, f store.Feature, stale bool) error {
	if f.Archived {
		return &apierr.Error{Kind: apierr.KindValidation, Name: "ArchivedFeatureError", Message: "Cannot perform this operation on archived features"}
	}
	changed, err := tx.SetStale(f.Name, stale)
	if err != nil || !changed {
		return err
	}
	event := "feature-stale-off"
	if stale {
		event = "feature-stale-on"
	}
	return tx.Event(store.NewEvent{Type: event, Actor: p.Actor(), FeatureName: f.Name, Project: f.Project})
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
	if body.Value == nil {
		return apierr.Validation("The `value` property is required. It was not present on the data you sent.")
	}
	if len(body.Features) == 0 {
		return apierr.Validation("The `features` property must list at least one flag.")
	}
	p := domain.PrincipalFrom(r.Context())
	project := r.PathValue("projectId")
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		for _, name := range body.Features {
			f, err := tx.FeatureInProject(project, name)
			if err != nil {
				return err
			}
			if err := setStale(tx, p, f, *body.Value); err != nil {
				return err
			}
		}
		return nil
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
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		var err error
		if f, err = tx.Feature(r.PathValue("featureName")); err != nil {
			return err
		}
		if err := setStale(tx, p, f, stale); err != nil {
			return err
		}
		f, err = tx.Feature(f.Name)
		return err
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, f)
}
