package adminapi

import (
	"net/http"
	"slices"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// environmentView is an environment with its usage counts.
type environmentView struct {
	store.Environment
	ProjectCount       int `json:"projectCount"`
	APITokenCount      int `json:"apiTokenCount"`
	EnabledToggleCount int `json:"enabledToggleCount"`
}

func (s *API) listEnvironments(w http.ResponseWriter, r *http.Request) error {
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
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 1, "environments": out})
}

// projectEnvironmentList is the answer of GET /api/admin/environments/project/{projectId}.
type projectEnvironmentList struct {
	Version      int                 `json:"version"`
	Environments []store.Environment `json:"environments"`
}

// listProjectEnvironments answers the environments enabled in a project,
// in Unleash's shape (Unleash's Terraform provider reads whether an
// environment is in a project from it).
func (s *API) listProjectEnvironments(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	proj, err := q.Project(r.PathValue("projectId"))
	if err != nil {
		return err
	}
	names, err := q.ProjectEnvironments(proj.ID)
	if err != nil {
		return err
	}
	envs, err := q.Environments()
	if err != nil {
		return err
	}
	out := projectEnvironmentList{Version: 1, Environments: []store.Environment{}}
	for _, e := range envs {
		if slices.Contains(names, e.Name) {
			out.Environments = append(out.Environments, e)
		}
	}
	return httpjson.Write(w, http.StatusOK, out)
}

func (s *API) getEnvironment(w http.ResponseWriter, r *http.Request) error {
	e, err := s.store.Q(r.Context()).Environment(r.PathValue("name"))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, e)
}

func (s *API) createEnvironment(w http.ResponseWriter, r *http.Request) error {
	e, err := apply(s, r, domain.CreateEnvironment)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusCreated, e)
}

func (s *API) updateEnvironment(w http.ResponseWriter, r *http.Request) error {
	e, err := apply(s, r, func(tx *store.Tx, p *domain.Principal, body domain.EnvironmentInput) (store.Environment, error) {
		return domain.UpdateEnvironment(tx, p, r.PathValue("name"), body)
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, e)
}

func (s *API) environmentOn(w http.ResponseWriter, r *http.Request) error {
	return s.setEnvironmentEnabled(w, r, true)
}

func (s *API) environmentOff(w http.ResponseWriter, r *http.Request) error {
	return s.setEnvironmentEnabled(w, r, false)
}

func (s *API) setEnvironmentEnabled(w http.ResponseWriter, r *http.Request, enabled bool) error {
	p := domain.PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		return domain.SetEnvironmentEnabled(tx, p, r.PathValue("name"), enabled)
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusNoContent)
}

func (s *API) deleteEnvironment(w http.ResponseWriter, r *http.Request) error {
	p := domain.PrincipalFrom(r.Context())
	if err := s.store.Tx(r.Context(), func(tx *store.Tx) error { return domain.DeleteEnvironment(tx, p, r.PathValue("name")) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

// projectEnvironmentBody is the body of POST /projects/{projectId}/environments.
type projectEnvironmentBody struct {
	Environment string `json:"environment"`
}

func (s *API) addProjectEnvironment(w http.ResponseWriter, r *http.Request) error {
	var body projectEnvironmentBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	project, p := r.PathValue("projectId"), domain.PrincipalFrom(r.Context())
	if err := s.store.Tx(r.Context(), func(tx *store.Tx) error { return domain.AddProjectEnvironment(tx, p, project, body.Environment) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *API) removeProjectEnvironment(w http.ResponseWriter, r *http.Request) error {
	project, env, p := r.PathValue("projectId"), r.PathValue("environment"), domain.PrincipalFrom(r.Context())
	if err := s.store.Tx(r.Context(), func(tx *store.Tx) error { return domain.RemoveProjectEnvironment(tx, p, project, env) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}
