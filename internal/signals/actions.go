package signals

import (
	"net/http"
	"strconv"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// ActionsConfig answers GET /api/admin/projects/{projectId}/actions/config.
func (s *Service) ActionsConfig(w http.ResponseWriter, r *http.Request) error {
	return httpjson.Write(w, http.StatusOK, domain.ActionDefinitions)
}

// actionSetLimits are the configured bounds of action sets.
func (s *Service) actionSetLimits() domain.ActionSetLimits {
	return domain.ActionSetLimits{PerProject: s.cfg.ActionSetsPerProjectLimit, Filters: s.cfg.FiltersLimit,
		FilterValues: s.cfg.FilterValuesLimit, Actions: s.cfg.ActionsLimit}
}

// ListActionSets answers GET /api/admin/projects/{projectId}/actions.
func (s *Service) ListActionSets(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	project := r.PathValue("projectId")
	if _, err := q.Project(project); err != nil {
		return err
	}
	sets, err := q.ActionSets(project)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"actions": sets})
}

// GetActionSet answers GET /api/admin/projects/{projectId}/actions/{id}.
func (s *Service) GetActionSet(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	a, err := s.store.Q(r.Context()).ActionSet(r.PathValue("projectId"), id)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, a)
}

// CreateActionSet answers POST /api/admin/projects/{projectId}/actions
// (domain.CreateActionSet).
func (s *Service) CreateActionSet(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("projectId")
	var in domain.ActionSetInput
	if err := httpjson.Decode(r, bodyLimit, &in); err != nil {
		return err
	}
	var a store.ActionSet
	err := s.store.Tx(r.Context(), func(tx *store.Tx) (err error) {
		a, err = domain.CreateActionSet(tx, domain.PrincipalFrom(r.Context()), project, s.actionSetLimits(), in)
		return err
	})
	if err != nil {
		return err
	}
	httpjson.SetLocation(w, "api/admin/projects/%s/actions/%s", project, strconv.FormatInt(a.ID, 10))
	return httpjson.Write(w, http.StatusCreated, a)
}

// UpdateActionSet answers PUT /api/admin/projects/{projectId}/actions/{id}
// (domain.UpdateActionSet).
func (s *Service) UpdateActionSet(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var in domain.ActionSetInput
	if err := httpjson.Decode(r, bodyLimit, &in); err != nil {
		return err
	}
	return s.changeActionSet(w, r, func(tx *store.Tx, p *domain.Principal, project string) (store.ActionSet, error) {
		return domain.UpdateActionSet(tx, p, project, id, s.actionSetLimits(), in)
	})
}

// EnableActionSet answers POST /api/admin/projects/{projectId}/actions/{id}/on.
func (s *Service) EnableActionSet(w http.ResponseWriter, r *http.Request) error {
	return s.setActionSetEnabled(w, r, true)
}

// DisableActionSet answers POST /api/admin/projects/{projectId}/actions/{id}/off.
func (s *Service) DisableActionSet(w http.ResponseWriter, r *http.Request) error {
	return s.setActionSetEnabled(w, r, false)
}

func (s *Service) setActionSetEnabled(w http.ResponseWriter, r *http.Request, enabled bool) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	return s.changeActionSet(w, r, func(tx *store.Tx, p *domain.Principal, project string) (store.ActionSet, error) {
		return domain.SetActionSetEnabled(tx, p, project, id, enabled)
	})
}

// changeActionSet runs change in a transaction as the caller, for the
// path's project, and answers the stored set.
func (s *Service) changeActionSet(w http.ResponseWriter, r *http.Request,
	change func(*store.Tx, *domain.Principal, string) (store.ActionSet, error)) error {
	var updated store.ActionSet
	err := s.store.Tx(r.Context(), func(tx *store.Tx) (err error) {
		updated, err = change(tx, domain.PrincipalFrom(r.Context()), r.PathValue("projectId"))
		return err
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, updated)
}

// DeleteActionSet answers DELETE /api/admin/projects/{projectId}/actions/{id}
// (domain.DeleteActionSet).
func (s *Service) DeleteActionSet(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	return s.answerOK(w, r, func(tx *store.Tx, p *domain.Principal) error {
		return domain.DeleteActionSet(tx, p, r.PathValue("projectId"), id)
	})
}

// ListActionSetEvents answers GET /api/admin/projects/{projectId}/actions/{id}/events:
// the set's runs, newest first.
func (s *Service) ListActionSetEvents(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	limit, offset, err := paging(r, 50, 1000)
	if err != nil {
		return err
	}
	q := s.store.Q(r.Context())
	if _, err := q.ActionSet(r.PathValue("projectId"), id); err != nil {
		return err
	}
	events, err := q.ActionSetEvents(id, limit, offset)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"actionSetEvents": events})
}
