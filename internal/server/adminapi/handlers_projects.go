package adminapi

import (
	"net/http"
	"time"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// projectView is a project in the project list.
type projectView struct {
	ID                           string     `json:"id"`
	Name                         string     `json:"name"`
	Description                  *string    `json:"description"`
	Health                       int        `json:"health"`
	FeatureCount                 int        `json:"featureCount"`
	StaleFeatureCount            int        `json:"staleFeatureCount"`
	PotentiallyStaleFeatureCount int        `json:"potentiallyStaleFeatureCount"`
	MemberCount                  int        `json:"memberCount"`
	CreatedAt                    time.Time  `json:"createdAt"`
	UpdatedAt                    *time.Time `json:"updatedAt"`
	Favorite                     bool       `json:"favorite"`
	Mode                         string     `json:"mode"`
	DefaultStickiness            string     `json:"defaultStickiness"`
	AvgTimeToProduction          int        `json:"avgTimeToProduction"`
}

func (s *API) listProjects(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	projects, err := q.Projects()
	if err != nil {
		return err
	}
	stats, err := q.ProjectStats()
	if err != nil {
		return err
	}
	caller := domain.PrincipalFrom(r.Context())
	out := make([]projectView, 0, len(projects))
	for _, p := range projects {
		if !caller.CanSeeProject(p.ID) {
			continue
		}
		st := stats[p.ID]
		out = append(out, projectView{
			ID: p.ID, Name: p.Name, Description: p.Description, Health: projectHealth(st.FeatureCount, st.StaleFeatureCount, st.PotentiallyStaleFeatureCount),
			FeatureCount: st.FeatureCount, StaleFeatureCount: st.StaleFeatureCount,
			PotentiallyStaleFeatureCount: st.PotentiallyStaleFeatureCount,
			CreatedAt:                    p.CreatedAt, UpdatedAt: p.UpdatedAt, Mode: p.Mode, DefaultStickiness: p.DefaultStickiness,
		})
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 1, "projects": out})
}

// projectHealth is 100 minus the share of stale and potentially stale flags.
func projectHealth(total, stale, potentiallyStale int) int {
	if total == 0 {
		return 100
	}
	h := 100 - float64(100*stale)/float64(total) - float64(100*potentiallyStale)/float64(total)
	return max(0, int(h+0.5))
}

func (s *API) createProject(w http.ResponseWriter, r *http.Request) error {
	proj, err := apply(s, r, domain.CreateProject)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusCreated, proj)
}

func (s *API) getProject(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	proj, err := q.Project(r.PathValue("projectId"))
	if err != nil {
		return err
	}
	envs, err := q.ProjectEnvironments(proj.ID)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"id": proj.ID, "name": proj.Name, "description": proj.Description,
		"mode": proj.Mode, "defaultStickiness": proj.DefaultStickiness, "health": proj.Health, "createdAt": proj.CreatedAt,
		"updatedAt": proj.UpdatedAt, "environments": envs})
}

func (s *API) updateProject(w http.ResponseWriter, r *http.Request) error {
	proj, err := apply(s, r, func(tx *store.Tx, p *domain.Principal, body domain.ProjectInput) (store.Project, error) {
		return domain.UpdateProject(tx, p, r.PathValue("projectId"), body)
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, proj)
}

func (s *API) updateProjectSettings(w http.ResponseWriter, r *http.Request) error {
	_, err := apply(s, r, func(tx *store.Tx, p *domain.Principal, body domain.ProjectSettingsInput) (struct{}, error) {
		return struct{}{}, domain.UpdateProjectSettings(tx, p, r.PathValue("projectId"), body)
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *API) deleteProject(w http.ResponseWriter, r *http.Request) error {
	id, p := r.PathValue("projectId"), domain.PrincipalFrom(r.Context())
	if err := s.store.Tx(r.Context(), func(tx *store.Tx) error { return domain.DeleteProject(tx, p, id) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}
