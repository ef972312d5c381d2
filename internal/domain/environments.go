package domain

import (
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// EnvironmentInput is an environment as an admin call creates or updates
// it; absent properties keep their value (or default) on update.
type EnvironmentInput struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	SortOrder *int32 `json:"sortOrder"`
	Enabled   *bool  `json:"enabled"`
	Protected *bool  `json:"protected"`
}

func (b EnvironmentInput) apply(e *store.Environment) {
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

// CreateEnvironment creates an environment as p, with its event.
func CreateEnvironment(tx *store.Tx, p *Principal, in EnvironmentInput) (store.Environment, error) {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return store.Environment{}, err
	}
	if err := ValidateName("name", in.Name); err != nil {
		return store.Environment{}, err
	}
	if in.Type == "" {
		return store.Environment{}, apierr.Validation("The `type` property is required. It was not present on the data you sent.")
	}
	e := store.Environment{Name: in.Name, Enabled: true}
	in.apply(&e)
	if err := tx.InsertEnvironment(e); err != nil {
		return store.Environment{}, err
	}
	return e, tx.Event(store.NewEvent{Type: "environment-created", Actor: p.Actor(), Environment: e.Name, Data: e})
}

// UpdateEnvironment changes an environment as p, with its event.
func UpdateEnvironment(tx *store.Tx, p *Principal, name string, in EnvironmentInput) (store.Environment, error) {
	return changeEnvironment(tx, p, name, in.apply)
}

// SetEnvironmentEnabled turns a whole environment on or off as p, with its
// event.
func SetEnvironmentEnabled(tx *store.Tx, p *Principal, name string, enabled bool) error {
	_, err := changeEnvironment(tx, p, name, func(e *store.Environment) { e.Enabled = enabled })
	return err
}

func changeEnvironment(tx *store.Tx, p *Principal, name string, change func(*store.Environment)) (store.Environment, error) {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return store.Environment{}, err
	}
	old, err := tx.Environment(name)
	if err != nil {
		return store.Environment{}, err
	}
	e := old
	change(&e)
	if err := tx.UpdateEnvironment(e); err != nil {
		return store.Environment{}, err
	}
	return e, tx.Event(store.NewEvent{Type: "environment-updated", Actor: p.Actor(), Environment: e.Name, Data: e, PreData: old})
}

// DeleteEnvironment deletes an environment that is not protected as p,
// with its event.
func DeleteEnvironment(tx *store.Tx, p *Principal, name string) error {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return err
	}
	old, err := tx.Environment(name)
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
}

// AddProjectEnvironment enables an environment for a project as p, with
// its event.
func AddProjectEnvironment(tx *store.Tx, p *Principal, project, env string) error {
	if err := p.Require(PermUpdateProject, project, ""); err != nil {
		return err
	}
	if env == "" {
		return apierr.Validation("The `environment` property is required. It was not present on the data you sent.")
	}
	if _, err := tx.Project(project); err != nil {
		return err
	}
	if _, err := tx.Environment(env); err != nil {
		return err
	}
	if err := tx.AddProjectEnvironment(project, env); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: "project-environment-added", Actor: p.Actor(), Project: project, Environment: env})
}

// RemoveProjectEnvironment disables an environment for a project as p,
// with its event.
func RemoveProjectEnvironment(tx *store.Tx, p *Principal, project, env string) error {
	if err := p.Require(PermUpdateProject, project, ""); err != nil {
		return err
	}
	if _, err := tx.Project(project); err != nil {
		return err
	}
	if err := tx.RemoveProjectEnvironment(project, env); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: "project-environment-removed", Actor: p.Actor(), Project: project, Environment: env})
}
