package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// featureEnvView is one environment of a flag in admin responses.
type featureEnvView struct {
	Name                 string           `json:"name"`
	FeatureName          string           `json:"featureName"`
	Environment          string           `json:"environment"`
	Type                 string           `json:"type"`
	Enabled              bool             `json:"enabled"`
	SortOrder            int              `json:"sortOrder"`
	VariantCount         int              `json:"variantCount"`
	Strategies           []store.Strategy `json:"strategies"`
	Variants             []engine.Variant `json:"variants"`
	LastSeenAt           *time.Time       `json:"lastSeenAt"`
	HasStrategies        bool             `json:"hasStrategies"`
	HasEnabledStrategies bool             `json:"hasEnabledStrategies"`
}

// featureView is a flag in admin responses.
type featureView struct {
	store.Feature
	Enabled      bool               `json:"enabled"`
	Favorite     bool               `json:"favorite"`
	Environments []featureEnvView   `json:"environments"`
	Variants     []engine.Variant   `json:"variants"`
	Strategies   []store.Strategy   `json:"strategies"`
	Tags         []any              `json:"tags"`
	Children     []string           `json:"children"`
	Dependencies []store.Dependency `json:"dependencies"`
}

// loadFeatureView assembles a flag with its environments, strategies and
// dependencies in a fixed number of queries, however many environments and
// strategies the flag has.
func loadFeatureView(q store.Q, f store.Feature) (featureView, error) {
	return loadFeatureViewWith(q, f, nil)
}

// loadFeatureViewWith is loadFeatureView with the flag's strategies in
// every environment already read (nil: read them).
func loadFeatureViewWith(q store.Q, f store.Feature, strategies []store.Strategy) (featureView, error) {
	v := featureView{Feature: f, Variants: []engine.Variant{}, Strategies: []store.Strategy{}, Environments: []featureEnvView{}}
	fes, err := q.FeatureEnvironmentDetails(f.Name)
	if err != nil {
		return v, err
	}
	if strategies == nil {
		if strategies, err = q.FeatureStrategies(f.Name); err != nil {
			return v, err
		}
	}
	for _, fe := range fes {
		ev := featureEnvView{Name: fe.Environment, FeatureName: f.Name, Environment: fe.Environment, Type: fe.Type,
			Enabled: fe.Enabled, SortOrder: fe.SortOrder, VariantCount: len(fe.Variants),
			Variants: fe.Variants, LastSeenAt: fe.LastSeenAt, Strategies: []store.Strategy{}}
		for _, st := range strategies {
			if st.Environment == fe.Environment {
				ev.Strategies = append(ev.Strategies, st)
				ev.HasStrategies = true
				ev.HasEnabledStrategies = ev.HasEnabledStrategies || !st.Disabled
			}
		}
		v.Enabled = v.Enabled || fe.Enabled
		v.Environments = append(v.Environments, ev)
	}
	v.Dependencies, v.Children, err = q.DependencyLinks(f.Name)
	return v, err
}

// featureEventData is the flag as recorded in feature-created and
// feature-metadata-updated events.
func featureEventData(f store.Feature) map[string]any {
	return map[string]any{"name": f.Name, "description": f.Description, "type": f.Type, "project": f.Project,
		"stale": f.Stale, "createdAt": f.CreatedAt, "impressionData": f.ImpressionData, "archived": f.Archived}
}

// createFeatureBody is the body of POST /projects/{projectId}/features.
type createFeatureBody struct {
	Name           string  `json:"name"`
	Type           string  `json:"type"`
	Description    *string `json:"description"`
	ImpressionData bool    `json:"impressionData"`
}

func (s *Server) createFeature(w http.ResponseWriter, r *http.Request) error {
	var body createFeatureBody
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	if err := validateName("name", body.Name); err != nil {
		return err
	}
	if body.Type == "" {
		body.Type = "release"
	}
	project, p := r.PathValue("projectId"), PrincipalFrom(r.Context())
	var created store.Feature
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if _, err := tx.Project(project); err != nil {
			return apierr.NotFound("Active project with id %s does not exist", project)
		}
		if _, err := tx.FeatureType(body.Type); err != nil {
			return apierr.Validation("The `type` property must be an existing feature type. You provided %q.", body.Type)
		}
		creator := p.Name
		created = store.Feature{Name: body.Name, Project: project, Type: body.Type, Description: body.Description,
			ImpressionData: body.ImpressionData, CreatedAt: tx.Now(), CreatedBy: &creator}
		if err := tx.InsertFeature(created); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "feature-created", Actor: p.Actor(), FeatureName: created.Name, Project: project, Data: featureEventData(created)})
	})
	if err != nil {
		return err
	}
	return s.respondFeature(w, r, http.StatusCreated, created.Name)
}

// respondFeature sends the flag's full view.
func (s *Server) respondFeature(w http.ResponseWriter, r *http.Request, status int, name string) error {
	q := s.store.Q(r.Context())
	f, err := q.Feature(name)
	if err != nil {
		return err
	}
	v, err := loadFeatureView(q, f)
	if err != nil {
		return err
	}
	return writeJSON(w, status, v)
}

func (s *Server) getFeature(w http.ResponseWriter, r *http.Request) error {
	project, name := r.PathValue("projectId"), r.PathValue("featureName")
	f, err := s.store.Q(r.Context()).FeatureInProject(project, name)
	if err != nil {
		return err
	}
	if f.Archived {
		// As on Unleash: the archive lists archived flags, this path does not.
		return apierr.NotFound("There's no feature named \"%s\" in project \"%s\"; it is archived.", name, project)
	}
	return s.respondFeature(w, r, http.StatusOK, name)
}

func (s *Server) listProjectFeatures(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	features, err := q.Features(r.PathValue("projectId"), false)
	if err != nil {
		return err
	}
	out := make([]featureView, 0, len(features))
	for _, f := range features {
		v, err := loadFeatureView(q, f)
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	return writeJSON(w, http.StatusOK, map[string]any{"version": 2, "features": out})
}

// deref is the value p points to, or the zero value for nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// updateFeatureBody is the body of PUT /projects/{projectId}/features/{featureName}.
type updateFeatureBody struct {
	Name           *string `json:"name"`
	Type           *string `json:"type"`
	Description    *string `json:"description"`
	ImpressionData *bool   `json:"impressionData"`
	Stale          *bool   `json:"stale"`
}

func (s *Server) updateFeature(w http.ResponseWriter, r *http.Request) error {
	var body updateFeatureBody
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	return s.applyFeatureUpdate(w, r, body)
}

// applyFeatureUpdate stores a flag's new metadata with its events.
func (s *Server) applyFeatureUpdate(w http.ResponseWriter, r *http.Request, body updateFeatureBody) error {
	project, name, p := r.PathValue("projectId"), r.PathValue("featureName"), PrincipalFrom(r.Context())
	if body.Name != nil && *body.Name != name {
		return apierr.Validation("The `name` property cannot change the name of a flag.")
	}
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.FeatureInProject(project, name)
		if err != nil {
			return err
		}
		if old.Archived {
			return archivedError()
		}
		// The body replaces the metadata, as on Unleash: what it leaves
		// out takes its default (type release, no description, no
		// impression data, not stale).
		f := old
		f.Type = "release"
		if body.Type != nil {
			f.Type = *body.Type
		}
		if _, err := tx.FeatureType(f.Type); err != nil {
			return apierr.Validation("The `type` property must be an existing feature type. You provided %q.", f.Type)
		}
		f.Description = body.Description
		if deref(body.Description) == "" {
			f.Description = nil
		}
		f.ImpressionData, f.Stale = deref(body.ImpressionData), deref(body.Stale)
		if err := tx.UpdateFeature(f); err != nil {
			return err
		}
		if err := tx.Event(store.NewEvent{Type: "feature-metadata-updated", Actor: p.Actor(), FeatureName: name, Project: project,
			Data: featureEventData(f), PreData: featureEventData(old)}); err != nil {
			return err
		}
		if f.Stale != old.Stale {
			typ := map[bool]string{true: "feature-stale-on", false: "feature-stale-off"}[f.Stale]
			return tx.Event(store.NewEvent{Type: typ, Actor: p.Actor(), FeatureName: name, Project: project})
		}
		return nil
	})
	if err != nil {
		return err
	}
	return s.respondFeature(w, r, http.StatusOK, name)
}

func archivedError() error {
	return &apierr.Error{Kind: apierr.KindValidation, Name: "ArchivedFeatureError", Message: "Cannot perform this operation on archived features"}
}

func (s *Server) archiveFeature(w http.ResponseWriter, r *http.Request) error {
	project, name, p := r.PathValue("projectId"), r.PathValue("featureName"), PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if _, err := tx.FeatureInProject(project, name); err != nil {
			return err
		}
		children, err := tx.Children(name)
		if err != nil {
			return err
		}
		if len(children) > 0 {
			return apierr.Forbidden("You can not archive/delete this feature since other features depend on it.")
		}
		if err := tx.ArchiveFeature(name); err != nil {
			return err
		}
		if had, err := tx.DeleteDependencies(name); err != nil {
			return err
		} else if had {
			if err := tx.Event(store.NewEvent{Type: "feature-dependencies-removed", Actor: p.Actor(), FeatureName: name, Project: project}); err != nil {
				return err
			}
		}
		return tx.Event(store.NewEvent{Type: "feature-archived", Actor: p.Actor(), FeatureName: name, Project: project})
	})
	if err != nil {
		return err
	}
	return writeEmpty(w, http.StatusAccepted)
}

func (s *Server) reviveFeature(w http.ResponseWriter, r *http.Request) error {
	name, p := r.PathValue("featureName"), PrincipalFrom(r.Context())
	return s.archivedFeatureOp(w, r, name, func(tx *store.Tx, f store.Feature) error {
		if err := tx.ReviveFeature(name); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "feature-revived", Actor: p.Actor(), FeatureName: name, Project: f.Project})
	})
}

func (s *Server) deleteFeature(w http.ResponseWriter, r *http.Request) error {
	name, p := r.PathValue("featureName"), PrincipalFrom(r.Context())
	return s.archivedFeatureOp(w, r, name, func(tx *store.Tx, f store.Feature) error {
		view, err := loadFeatureView(tx.Q, f)
		if err != nil {
			return err
		}
		// The event is written first so that it still carries the flag's tags.
		if err := tx.Event(store.NewEvent{Type: "feature-deleted", Actor: p.Actor(), FeatureName: name, Project: f.Project, PreData: view}); err != nil {
			return err
		}
		return tx.DeleteFeature(name)
	})
}

// archivedFeatureOp runs op on an archived flag: 404 when the flag does not
// exist, 400 when it is not archived.
func (s *Server) archivedFeatureOp(w http.ResponseWriter, r *http.Request, name string, op func(*store.Tx, store.Feature) error) error {
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		f, err := tx.Feature(name)
		if err != nil {
			return apierr.NotFound("Feature %s does not exist", name)
		}
		if !f.Archived {
			return apierr.Validation("Feature %s is not archived; archive it first.", name)
		}
		return op(tx, f)
	})
	if err != nil {
		return err
	}
	return writeEmpty(w, http.StatusOK)
}

func (s *Server) listArchivedFeatures(w http.ResponseWriter, r *http.Request) error {
	features, err := s.store.Q(r.Context()).Features(r.PathValue("projectId"), true)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"version": 2, "features": features})
}

func (s *Server) patchFeature(w http.ResponseWriter, r *http.Request) error {
	var ops []patchOp
	if err := decodeJSON(r, &ops); err != nil {
		return err
	}
	for _, op := range ops {
		if strings.HasPrefix(op.Path, "/variants") {
			return apierr.Forbidden("Changing variants through a flag patch is not supported; use the environment variants.")
		}
	}
	q := s.store.Q(r.Context())
	f, err := q.FeatureInProject(r.PathValue("projectId"), r.PathValue("featureName"))
	if err != nil {
		return err
	}
	doc, _ := json.Marshal(map[string]any{"name": f.Name, "type": f.Type, "description": f.Description, "stale": f.Stale, "impressionData": f.ImpressionData})
	patched, err := applyPatch(doc, ops)
	if err != nil {
		return err
	}
	var body updateFeatureBody
	if err := unmarshalBody(patched, &body); err != nil {
		return err
	}
	return s.applyFeatureUpdate(w, r, body)
}

// cloneFeatureBody is the body of POST …/features/{featureName}/clone.
type cloneFeatureBody struct {
	Name           string `json:"name"`
	ReplaceGroupID *bool  `json:"replaceGroupId"`
}

// cloneFeature copies a flag's metadata, strategies and variants into a
// new flag of the same project; the copy starts switched off everywhere.
func (s *Server) cloneFeature(w http.ResponseWriter, r *http.Request) error {
	var body cloneFeatureBody
	if err := decodeJSON(r, &body); err != nil {
		return err
	}
	if err := validateName("name", body.Name); err != nil {
		return err
	}
	replaceGroup := body.ReplaceGroupID == nil || *body.ReplaceGroupID
	project, source, p := r.PathValue("projectId"), r.PathValue("featureName"), PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		src, err := tx.FeatureInProject(project, source)
		if err != nil {
			return err
		}
		creator := p.Name
		clone := store.Feature{Name: body.Name, Project: project, Type: src.Type, Description: src.Description,
			ImpressionData: src.ImpressionData, CreatedAt: tx.Now(), CreatedBy: &creator}
		if err := tx.InsertFeature(clone); err != nil {
			return err
		}
		if err := tx.Event(store.NewEvent{Type: "feature-created", Actor: p.Actor(), FeatureName: clone.Name, Project: project, Data: featureEventData(clone)}); err != nil {
			return err
		}
		return copyFeatureConfiguration(tx, p, src.Name, clone.Name, project, replaceGroup)
	})
	if err != nil {
		return err
	}
	return s.respondFeature(w, r, http.StatusCreated, body.Name)
}

func copyFeatureConfiguration(tx *store.Tx, p *Principal, from, to, project string, replaceGroup bool) error {
	strategies, err := tx.FeatureStrategies(from)
	if err != nil {
		return err
	}
	for _, st := range strategies {
		st.ID, st.FeatureName, st.CreatedAt = uuid.NewString(), to, tx.Now()
		params := map[string]string{}
		for k, v := range st.Parameters {
			params[k] = v
		}
		if replaceGroup && params["groupId"] == from {
			params["groupId"] = to
		}
		st.Parameters = params
		if err := tx.InsertStrategy(st); err != nil {
			return err
		}
		if err := tx.Event(store.NewEvent{Type: "feature-strategy-add", Actor: p.Actor(), FeatureName: to, Project: project, Environment: st.Environment, Data: st}); err != nil {
			return err
		}
	}
	envs, err := tx.FeatureEnvironments(from)
	if err != nil {
		return err
	}
	for _, fe := range envs {
		if len(fe.Variants) == 0 {
			continue
		}
		if err := tx.SetFeatureEnvironmentVariants(to, fe.Environment, fe.Variants); err != nil {
			return err
		}
		if err := tx.Event(store.NewEvent{Type: "feature-environment-variants-updated", Actor: p.Actor(), FeatureName: to, Project: project,
			Environment: fe.Environment, Data: map[string]any{"variants": fe.Variants}, PreData: map[string]any{"variants": []any{}}}); err != nil {
			return err
		}
	}
	return nil
}

func (s *Server) listAllArchivedFeatures(w http.ResponseWriter, r *http.Request) error {
	features, err := s.store.Q(r.Context()).Features("", true)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, map[string]any{"version": 2, "features": features})
}
