package domain

import (
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// DependencyInput names a flag's parent: the child is on only when the
// parent is enabled (or, with Enabled false, disabled), and with Variants
// only when the parent's variant is one of them.
type DependencyInput struct {
	Feature  string   `json:"feature"`
	Enabled  *bool    `json:"enabled"`
	Variants []string `json:"variants"`
}

func invalidOperation(format string, args ...any) error {
	e := apierr.Forbidden(format, args...)
	e.Name = "InvalidOperationError"
	return e
}

// AddDependency gives child a parent as p, with its event. The parent must
// be an active flag of the same project, and dependencies are one level
// deep; the new dependency replaces the child's others (Unleash 8 keeps one
// parent per flag).
func AddDependency(tx *store.Tx, p *Principal, project, child string, in DependencyInput) error {
	if err := p.Require(PermUpdateFeatureDependency, project, ""); err != nil {
		return err
	}
	if err := gateChange(tx.Q, p, project); err != nil {
		return err
	}
	if in.Feature == "" {
		return apierr.Validation("The `feature` property is required. It was not present on the data you sent.")
	}
	dep := store.Dependency{Feature: in.Feature, Enabled: in.Enabled == nil || *in.Enabled}
	if dep.Enabled {
		dep.Variants = in.Variants
	}
	if _, err := tx.FeatureInProject(project, child); err != nil {
		return err
	}
	if in.Feature == child {
		return invalidOperation("A feature flag cannot depend on itself.")
	}
	parent, err := tx.Feature(in.Feature)
	if err != nil || parent.Archived {
		return invalidOperation("No active feature %s exists", in.Feature)
	}
	if parent.Project != project {
		return invalidOperation("Parent and child features should be in the same project")
	}
	if children, err := tx.Children(child); err != nil {
		return err
	} else if len(children) > 0 {
		return invalidOperation("Transitive dependency detected. Cannot add a dependency to the feature that other features depend on.")
	}
	if grand, err := tx.Dependencies(in.Feature); err != nil {
		return err
	} else if len(grand) > 0 {
		return invalidOperation("Transitive dependency detected. Cannot add a dependency to the feature that has parent dependency.")
	}
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
}

// DeleteDependency removes child's dependency on parent as p, with its
// event.
func DeleteDependency(tx *store.Tx, p *Principal, project, child, parent string) error {
	if err := p.Require(PermUpdateFeatureDependency, project, ""); err != nil {
		return err
	}
	if err := gateChange(tx.Q, p, project); err != nil {
		return err
	}
	if _, err := tx.FeatureInProject(project, child); err != nil {
		return err
	}
	if _, err := tx.DeleteDependency(child, parent); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: "feature-dependency-removed", Actor: p.Actor(), FeatureName: child, Project: project,
		Data: map[string]any{"feature": parent}})
}

// DeleteDependencies removes all of child's dependencies as p, with an
// event when it had any.
func DeleteDependencies(tx *store.Tx, p *Principal, project, child string) error {
	if err := p.Require(PermUpdateFeatureDependency, project, ""); err != nil {
		return err
	}
	if err := gateChange(tx.Q, p, project); err != nil {
		return err
	}
	if _, err := tx.FeatureInProject(project, child); err != nil {
		return err
	}
	had, err := tx.DeleteDependencies(child)
	if err != nil || !had {
		return err
	}
	return tx.Event(store.NewEvent{Type: "feature-dependencies-removed", Actor: p.Actor(), FeatureName: child, Project: project})
}
