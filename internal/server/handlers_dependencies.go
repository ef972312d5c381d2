package server

import (
	"net/http"
	"slices"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// dependencyBody is the body of POST …/features/{child}/dependencies.
type dependencyBody struct {
	Feature  string   `json:"feature"`
	Enabled  *bool    `json:"enabled"`
	Variants []string `json:"variants"`
}

func invalidOperation(format string, args ...any) error {
	e := apierr.Forbidden(format, args...)
	e.Name = "InvalidOperationError"
	return e
}

func (s *Server) addDependency(w http.ResponseWriter, r *http.Request) error {
	var body dependencyBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	if body.Feature == "" {
		return apierr.Validation("The `feature` property is required. It was not present on the data you sent.")
	}
	project, child, p := r.PathValue("projectId"), r.PathValue("featureName"), domain.PrincipalFrom(r.Context())
	dep := store.Dependency{Feature: body.Feature, Enabled: body.Enabled == nil || *body.Enabled}
	if dep.Enabled {
		dep.Variants = body.Variants
	}
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if _, err := tx.FeatureInProject(project, child); err != nil {
			return err
		}
		if body.Feature == child {
			return invalidOperation("A feature flag cannot depend on itself.")
		}
		parent, err := tx.Feature(body.Feature)
		if err != nil || parent.Archived {
			return invalidOperation("No active feature %s exists", body.Feature)
		}
		if parent.Project != project {
			return invalidOperation("Parent and child features should be in the same project")
		}
		if children, err := tx.Children(child); err != nil {
			return err
		} else if len(children) > 0 {
			return invalidOperation("Transitive dependency detected. Cannot add a dependency to the feature that other features depend on.")
		}
		if grand, err := tx.Dependencies(body.Feature); err != nil {
			return err
		} else if len(grand) > 0 {
			return invalidOperation("Transitive dependency detected. Cannot add a dependency to the feature that has parent dependency.")
		}
		// The new dependency replaces the child's others: Unleash 8 keeps
		// one parent per flag.
		if _, err := tx.DeleteDependencies(child); err != nil {
			return err
		}
		if err := tx.UpsertDependency(child, dep); err != nil {
			return err
		}
		data := map[string]any{"feature": dep.Feature, "enabled": dep.Enabled}
		if len(dep.Variants) > 0 {
			data["variants"] = dep.Variants
		}
		return tx.Event(store.NewEvent{Type: "feature-dependency-added", Actor: p.Actor(), FeatureName: child, Project: project, Data: data})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *Server) deleteDependency(w http.ResponseWriter, r *http.Request) error {
	project, child, parent, p := r.PathValue("projectId"), r.PathValue("featureName"), r.PathValue("parent"), domain.PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if _, err := tx.FeatureInProject(project, child); err != nil {
			return err
		}
		if _, err := tx.DeleteDependency(child, parent); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "feature-dependency-removed", Actor: p.Actor(), FeatureName: child, Project: project,
			Data: map[string]any{"feature": parent}})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *Server) deleteDependencies(w http.ResponseWriter, r *http.Request) error {
	project, child, p := r.PathValue("projectId"), r.PathValue("featureName"), domain.PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if _, err := tx.FeatureInProject(project, child); err != nil {
			return err
		}
		had, err := tx.DeleteDependencies(child)
		if err != nil || !had {
			return err
		}
		return tx.Event(store.NewEvent{Type: "feature-dependencies-removed", Actor: p.Actor(), FeatureName: child, Project: project})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

// listParents answers which flags may become parents of a child: the
// active flags of the child's project other than the child itself and
// other than flags that already have a parent, sorted by name.
func (s *Server) listParents(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	child, err := q.Feature(r.PathValue("featureName"))
	if apierr.IsKind(err, apierr.KindNotFound) {
		return httpjson.Write(w, http.StatusOK, []string{})
	}
	if err != nil {
		return err
	}
	features, err := q.Features(child.Project, false)
	if err != nil {
		return err
	}
	deps, err := q.Dependencies("")
	if err != nil {
		return err
	}
	hasParent := map[string]bool{}
	for _, d := range deps {
		hasParent[d.Child] = true
	}
	out := []string{}
	for _, f := range features {
		if f.Name != child.Name && !hasParent[f.Name] {
			out = append(out, f.Name)
		}
	}
	slices.Sort(out)
	return httpjson.Write(w, http.StatusOK, out)
}
