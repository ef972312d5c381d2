package server

import (
	"net/http"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// environmentView is an environment with its usage counts.
type environmentView struct {
	store.Environment
	ProjectCount       int `json:"projectCount"`
	APITokenCount      int `json:"apiTokenCount"`
	EnabledToggleCount int `json:"enabledToggleCount"`
}

func (s *Server) listEnvironments(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	envs, err := q.Environments()
	if err != nil {
		return err
	}
	counts, err := q.EnvironmentCounts()
	if err != nil {
		return err
	}
	out := make([]environmentView, 0, len(envs))
	for _, e := range envs {
		c := counts[e.Name]
		out = append(out, environmentView{Environment: e, ProjectCount: c.ProjectCount, APITokenCount: c.APITokenCount, EnabledToggleCount: c.EnabledToggleCount})
	}
	return writeJSON(w, http.StatusOK, map[string]any{"version": 1, "environments": out})
}

func (s *Server) getEnvironment(w http.ResponseWriter, r *http.Request) error {
	e, err := s.store.Q(r.Context()).Environment(r.PathValue("name"))
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, e)
}

// environmentBody is the body of environment create and update.
type environmentBody struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	SortOrder *int32 `json:"sortOrder"`
	Enabled   *bool  `json:"enabled"`
	Protected *bool  `json:"protected"`
}

func (b environmentBody) apply(e *store.Environment) {
	if b.Type != "" {
		e.Type = b.Type
	}
	if b.SortOrder != nil {
		e.SortOrder = int(*b.SortOrder)
	}
	if b.Enabled != nil {
		e.Enabled = *b.Enabled
	}
	if b.Protected != nil {
		e.Protected = *b.Protected
	}
}

func (s *Server) createEnvironment(w http.ResponseWriter, r *http.Request) error {
	var body environmentBody
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	if err := validateName("name", body.Name); err != nil {
		return err
	}
	if body.Type == "" {
		return apierr.Validation("The `type` property is required. It was not present on the data you sent.")
	}
	e := store.Environment{Name: body.Name, Enabled: true}
	body.apply(&e)
	p := PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if err := tx.InsertEnvironment(e); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "environment-created", Actor: p.Actor(), Environment: e.Name, Data: e})
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusCreated, e)
}

func (s *Server) updateEnvironment(w http.ResponseWriter, r *http.Request) error {
	var body environmentBody
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	return s.changeEnvironment(w, r, func(e *store.Environment) { body.apply(e) }, http.StatusOK)
}

func (s *Server) environmentOn(w http.ResponseWriter, r *http.Request) error {
	return s.changeEnvironment(w, r, func(e *store.Environment) { e.Enabled = true }, http.StatusNoContent)
}

func (s *Server) environmentOff(w http.ResponseWriter, r *http.Request) error {
	return s.changeEnvironment(w, r, func(e *store.Environment) { e.Enabled = false }, http.StatusNoContent)
}

func (s *Server) changeEnvironment(w http.ResponseWriter, r *http.Request, change func(*store.Environment), status int) error {
	p := PrincipalFrom(r.Context())
	var e store.Environment
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.Environment(r.PathValue("name"))
		if err != nil {
			return err
		}
		e = old
		change(&e)
		if err := tx.UpdateEnvironment(e); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "environment-updated", Actor: p.Actor(), Environment: e.Name, Data: e, PreData: old})
	})
	if err != nil {
		return err
	}
	if status == http.StatusNoContent {
		return writeEmpty(w, status)
	}
	return writeJSON(w, status, e)
}

func (s *Server) deleteEnvironment(w http.ResponseWriter, r *http.Request) error {
	p := PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.Environment(r.PathValue("name"))
		if err != nil {
			return err
		}
		if old.Protected {
			return apierr.Forbidden("You cannot delete a protected environment.")
		}
		if err := tx.DeleteEnvironment(old.Name); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "environment-deleted", Actor: p.Actor(), Environment: old.Name, PreData: old})
	})
	if err != nil {
		return err
	}
	return writeEmpty(w, http.StatusOK)
}

// projectEnvironmentBody is the body of POST /projects/{projectId}/environments.
type projectEnvironmentBody struct {
	Environment string `json:"environment"`
}

func (s *Server) addProjectEnvironment(w http.ResponseWriter, r *http.Request) error {
	var body projectEnvironmentBody
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	if body.Environment == "" {
		return apierr.Validation("The `environment` property is required. It was not present on the data you sent.")
	}
	project, p := r.PathValue("projectId"), PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if _, err := tx.Project(project); err != nil {
			return err
		}
		if _, err := tx.Environment(body.Environment); err != nil {
			return err
		}
		if err := tx.AddProjectEnvironment(project, body.Environment); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "project-environment-added", Actor: p.Actor(), Project: project, Environment: body.Environment})
	})
	if err != nil {
		return err
	}
	return writeEmpty(w, http.StatusOK)
}

func (s *Server) removeProjectEnvironment(w http.ResponseWriter, r *http.Request) error {
	project, env, p := r.PathValue("projectId"), r.PathValue("environment"), PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if _, err := tx.Project(project); err != nil {
			return err
		}
		if err := tx.RemoveProjectEnvironment(project, env); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "project-environment-removed", Actor: p.Actor(), Project: project, Environment: env})
	})
	if err != nil {
		return err
	}
	return writeEmpty(w, http.StatusOK)
}
