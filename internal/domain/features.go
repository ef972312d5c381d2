package domain

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// FeatureEnvView is one environment of a flag as the admin API shows it.
type FeatureEnvView struct {
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

// FeatureView is a flag as the admin API shows it.
type FeatureView struct {
	store.Feature
	Enabled      bool               `json:"enabled"`
	Favorite     bool               `json:"favorite"`
	Environments []FeatureEnvView   `json:"environments"`
	Variants     []engine.Variant   `json:"variants"`
	Strategies   []store.Strategy   `json:"strategies"`
	Tags         []any              `json:"tags"`
	Children     []string           `json:"children"`
	Dependencies []store.Dependency `json:"dependencies"`
}

// LoadFeatureView assembles a flag with its environments, strategies and
// dependencies in a fixed number of queries, however many environments and
// strategies the flag has.
func LoadFeatureView(q store.Q, f store.Feature) (FeatureView, error) {
	return LoadFeatureViewWith(q, f, nil)
}

// LoadFeatureViewWith is LoadFeatureView with the flag's strategies in
// every environment already read (nil: read them).
func LoadFeatureViewWith(q store.Q, f store.Feature, strategies []store.Strategy) (FeatureView, error) {
	v := FeatureView{Feature: f, Variants: []engine.Variant{}, Strategies: []store.Strategy{}, Environments: []FeatureEnvView{}}
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
		ev := FeatureEnvView{Name: fe.Environment, FeatureName: f.Name, Environment: fe.Environment, Type: fe.Type,
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

// CreateFeatureInput is a new flag.
type CreateFeatureInput struct {
	Name           string  `json:"name"`
	Type           string  `json:"type"`
	Description    *string `json:"description"`
	ImpressionData bool    `json:"impressionData"`
}

// CreateFeature creates a flag in project as p, with its event.
func CreateFeature(tx *store.Tx, p *Principal, project string, in CreateFeatureInput) (store.Feature, error) {
	if err := p.Require(PermCreateFeature, project, ""); err != nil {
		return store.Feature{}, err
	}
	if err := ValidateName("name", in.Name); err != nil {
		return store.Feature{}, err
	}
	if in.Type == "" {
		in.Type = "release"
	}
	if _, err := tx.Project(project); err != nil {
		return store.Feature{}, apierr.NotFound("Active project with id %s does not exist", project)
	}
	if _, err := tx.FeatureType(in.Type); err != nil {
		return store.Feature{}, apierr.Validation("The `type` property must be an existing feature type. You provided %q.", in.Type)
	}
	creator := p.Name
	f := store.Feature{Name: in.Name, Project: project, Type: in.Type, Description: in.Description,
		ImpressionData: in.ImpressionData, CreatedAt: tx.Now(), CreatedBy: &creator}
	if err := tx.InsertFeature(f); err != nil {
		return store.Feature{}, err
	}
	return f, tx.Event(store.NewEvent{Type: "feature-created", Actor: p.Actor(), FeatureName: f.Name, Project: project, Data: featureEventData(f)})
}

// deref is the value p points to, or the zero value for nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// UpdateFeatureInput is a flag's new metadata. It replaces the metadata,
// as on Unleash: what it leaves out takes its default (type release, no
// description, no impression data, not stale).
type UpdateFeatureInput struct {
	Name           *string `json:"name"`
	Type           *string `json:"type"`
	Description    *string `json:"description"`
	ImpressionData *bool   `json:"impressionData"`
	Stale          *bool   `json:"stale"`
}

// UpdateFeature stores a flag's new metadata as p, with its events (and a
// stale on/off event when staleness changed).
func UpdateFeature(tx *store.Tx, p *Principal, project, name string, in UpdateFeatureInput) error {
	if err := p.Require(PermUpdateFeature, project, ""); err != nil {
		return err
	}
	if in.Name != nil && *in.Name != name {
		return apierr.Validation("The `name` property cannot change the name of a flag.")
	}
	old, err := tx.FeatureInProject(project, name)
	if err != nil {
		return err
	}
	if old.Archived {
		return ArchivedError()
	}
	f := old
	f.Type = "release"
	if in.Type != nil {
		f.Type = *in.Type
	}
	if _, err := tx.FeatureType(f.Type); err != nil {
		return apierr.Validation("The `type` property must be an existing feature type. You provided %q.", f.Type)
	}
	f.Description = in.Description
	if deref(in.Description) == "" {
		f.Description = nil
	}
	f.ImpressionData, f.Stale = deref(in.ImpressionData), deref(in.Stale)
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
}

// PatchFeature applies JSON Patch operations to a flag's metadata (name,
// type, description, stale, impressionData) and stores the result as
// UpdateFeature does. Variants cannot be patched here.
func PatchFeature(tx *store.Tx, p *Principal, project, name string, ops []PatchOp) error {
	if err := p.Require(PermUpdateFeature, project, ""); err != nil {
		return err
	}
	for _, op := range ops {
		if strings.HasPrefix(op.Path, "/variants") {
			return apierr.Forbidden("Changing variants through a flag patch is not supported; use the environment variants.")
		}
	}
	f, err := tx.FeatureInProject(project, name)
	if err != nil {
		return err
	}
	doc, _ := json.Marshal(map[string]any{"name": f.Name, "type": f.Type, "description": f.Description, "stale": f.Stale, "impressionData": f.ImpressionData})
	patched, err := ApplyPatch(doc, ops)
	if err != nil {
		return err
	}
	var in UpdateFeatureInput
	if err := httpjson.Unmarshal(patched, &in); err != nil {
		return err
	}
	return UpdateFeature(tx, p, project, name, in)
}

// ArchiveFeature archives a flag as p (refused while other flags depend on
// it), removing its own dependencies, with its events.
func ArchiveFeature(tx *store.Tx, p *Principal, project, name string) error {
	if err := p.Require(PermDeleteFeature, project, ""); err != nil {
		return err
	}
	if _, err := tx.FeatureInProject(project, name); err != nil {
		return err
	}
	if err := gateChange(tx.Q, p, project); err != nil {
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
}

// ReviveFeature brings an archived flag back as p, with its event.
func ReviveFeature(tx *store.Tx, p *Principal, name string) error {
	if _, err := p.RequireOnFlag(tx.Q, PermUpdateFeature, name); err != nil {
		return err
	}
	f, err := archivedFeature(tx.Q, name)
	if err != nil {
		return err
	}
	if err := tx.ReviveFeature(name); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: "feature-revived", Actor: p.Actor(), FeatureName: name, Project: f.Project})
}

// DeleteFeature deletes an archived flag for good as p, with its event.
func DeleteFeature(tx *store.Tx, p *Principal, name string) error {
	if _, err := p.RequireOnFlag(tx.Q, PermDeleteFeature, name); err != nil {
		return err
	}
	f, err := archivedFeature(tx.Q, name)
	if err != nil {
		return err
	}
	view, err := LoadFeatureView(tx.Q, f)
	if err != nil {
		return err
	}
	// The event is written first so that it still carries the flag's tags.
	if err := tx.Event(store.NewEvent{Type: "feature-deleted", Actor: p.Actor(), FeatureName: name, Project: f.Project, PreData: view}); err != nil {
		return err
	}
	return tx.DeleteFeature(name)
}

// archivedFeature loads an archived flag: 404 when the flag does not
// exist, 400 when it is not archived.
func archivedFeature(q store.Q, name string) (store.Feature, error) {
	f, err := q.Feature(name)
	if err != nil {
		return f, apierr.NotFound("Feature %s does not exist", name)
	}
	if !f.Archived {
		return f, apierr.Validation("Feature %s is not archived; archive it first.", name)
	}
	return f, nil
}

// CloneFeatureInput names a flag's copy.
type CloneFeatureInput struct {
	Name           string `json:"name"`
	ReplaceGroupID *bool  `json:"replaceGroupId"`
}

// CloneFeature copies a flag's metadata, strategies and variants into a
// new flag of the same project as p, with their events; the copy starts
// switched off everywhere. Strategies whose groupId is the source's name
// get the copy's unless ReplaceGroupID is false.
func CloneFeature(tx *store.Tx, p *Principal, project, source string, in CloneFeatureInput) (store.Feature, error) {
	if err := p.Require(PermCreateFeature, project, ""); err != nil {
		return store.Feature{}, err
	}
	if err := ValidateName("name", in.Name); err != nil {
		return store.Feature{}, err
	}
	replaceGroup := in.ReplaceGroupID == nil || *in.ReplaceGroupID
	src, err := tx.FeatureInProject(project, source)
	if err != nil {
		return store.Feature{}, err
	}
	creator := p.Name
	clone := store.Feature{Name: in.Name, Project: project, Type: src.Type, Description: src.Description,
		ImpressionData: src.ImpressionData, CreatedAt: tx.Now(), CreatedBy: &creator}
	if err := tx.InsertFeature(clone); err != nil {
		return store.Feature{}, err
	}
	if err := tx.Event(store.NewEvent{Type: "feature-created", Actor: p.Actor(), FeatureName: clone.Name, Project: project, Data: featureEventData(clone)}); err != nil {
		return store.Feature{}, err
	}
	return clone, copyFeatureConfiguration(tx, p, src.Name, clone.Name, project, replaceGroup)
}

// copyFeatureConfiguration copies strategies and variants with their events.
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
