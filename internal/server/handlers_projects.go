package server

import (
	"cmp"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
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

func (s *Server) listProjects(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	projects, err := q.Projects()
	if err != nil {
		return err
	}
	stats, err := q.ProjectStats()
	if err != nil {
		return err
	}
	out := make([]projectView, 0, len(projects))
	for _, p := range projects {
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

// projectBody is the body of project create and update.
type projectBody struct {
	ID                string   `json:"id"`
	Name              string   `json:"name"`
	Description       *string  `json:"description"`
	Mode              string   `json:"mode"`
	DefaultStickiness string   `json:"defaultStickiness"`
	Environments      []string `json:"environments"`
}

func (b projectBody) validate() error {
	if strings.TrimSpace(b.Name) == "" {
		return apierr.Validation("The `name` property is required. It was not present on the data you sent.")
	}
	switch b.Mode {
	case "", "open", "protected", "private":
	default:
		return apierr.Validation("The `mode` property must be one of open, protected, private. You provided %q.", b.Mode)
	}
	return nil
}

// slugUnsafe matches the runs of characters a project id may not have; it
// is compiled on first use rather than at start-up.
var slugUnsafe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^a-z0-9_.-]+`) })

func slugify(name string) string {
	s := strings.Trim(slugUnsafe().ReplaceAllString(strings.ToLower(name), "-"), "-")
	if s == "" {
		s = "project"
	}
	return s
}

func (s *Server) createProject(w http.ResponseWriter, r *http.Request) error {
	var body projectBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	if err := body.validate(); err != nil {
		return err
	}
	if body.ID == "" {
		body.ID = slugify(body.Name)
	}
	if err := domain.ValidateName("id", body.ID); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	proj := store.Project{ID: body.ID, Name: body.Name, Description: body.Description, Mode: cmp.Or(body.Mode, "open"),
		DefaultStickiness: cmp.Or(body.DefaultStickiness, "default"), Health: 100}
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		envs := body.Environments
		if envs == nil {
			all, err := tx.Environments()
			if err != nil {
				return err
			}
			for _, e := range all {
				if e.Enabled {
					envs = append(envs, e.Name)
				}
			}
		}
		var missing []string
		for _, e := range envs {
			if _, err := tx.Environment(e); err != nil {
				missing = append(missing, "'"+e+"'")
			}
		}
		if len(missing) > 0 {
			return apierr.Validation("These environments do not exist: %s.", strings.Join(missing, ", "))
		}
		proj.CreatedAt = tx.Now()
		if err := tx.InsertProject(proj, envs); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "project-created", Actor: p.Actor(), Project: proj.ID,
			Data: map[string]any{"id": proj.ID, "name": proj.Name, "description": proj.Description, "mode": proj.Mode,
				"defaultStickiness": proj.DefaultStickiness, "environments": envs}})
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusCreated, proj)
}

func (s *Server) getProject(w http.ResponseWriter, r *http.Request) error {
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

func (s *Server) updateProject(w http.ResponseWriter, r *http.Request) error {
	var body projectBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	if err := body.validate(); err != nil {
		return err
	}
	id, p := r.PathValue("projectId"), domain.PrincipalFrom(r.Context())
	if body.ID != "" && body.ID != id {
		return apierr.Validation("The `id` property cannot change a project's id.")
	}
	var proj store.Project
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.Project(id)
		if err != nil {
			return err
		}
		proj = old
		proj.Name, proj.Description = body.Name, body.Description
		proj.Mode, proj.DefaultStickiness = cmp.Or(body.Mode, old.Mode), cmp.Or(body.DefaultStickiness, old.DefaultStickiness)
		if err := tx.UpdateProject(proj); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "project-updated", Actor: p.Actor(), Project: id, Data: projectEventData(proj), PreData: projectEventData(old)})
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, proj)
}

func projectEventData(p store.Project) map[string]any {
	return map[string]any{"id": p.ID, "name": p.Name, "description": p.Description, "mode": p.Mode, "defaultStickiness": p.DefaultStickiness}
}

func (s *Server) deleteProject(w http.ResponseWriter, r *http.Request) error {
	id, p := r.PathValue("projectId"), domain.PrincipalFrom(r.Context())
	if id == "default" {
		return apierr.Forbidden("You can not delete the default project!")
	}
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.Project(id)
		if err != nil {
			return err
		}
		active, err := tx.Features(id, false)
		if err != nil {
			return err
		}
		if len(active) > 0 {
			return apierr.Forbidden("You can not delete a project with active feature flags")
		}
		if err := tx.DeleteProject(id); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "project-deleted", Actor: p.Actor(), Project: id, PreData: projectEventData(old)})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}
