package domain

import (
	"cmp"
	"regexp"
	"strings"
	"sync"

	"github.com/bunting-flags/bunting/internal/access"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// ProjectInput is a project as an admin call creates or updates it.
type ProjectInput struct {
	ID                string   `json:"id"`
	Name              string   `json:"name"`
	Description       *string  `json:"description"`
	Mode              string   `json:"mode"`
	DefaultStickiness string   `json:"defaultStickiness"`
	Environments      []string `json:"environments"`
}

func (b ProjectInput) validate() error {
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

// CreateProject creates a project as p, with its event. Without an id the
// name's slug is used; without environments it gets every enabled one. A
// person (or service account) who creates a project owns it (the Owner
// project role), as in Unleash.
func CreateProject(tx *store.Tx, p *Principal, in ProjectInput) (store.Project, error) {
	if err := p.Require(PermCreateProject, "", ""); err != nil {
		return store.Project{}, err
	}
	if err := in.validate(); err != nil {
		return store.Project{}, err
	}
	if in.ID == "" {
		in.ID = slugify(in.Name)
	}
	if err := ValidateName("id", in.ID); err != nil {
		return store.Project{}, err
	}
	proj := store.Project{ID: in.ID, Name: in.Name, Description: in.Description, Mode: cmp.Or(in.Mode, "open"),
		DefaultStickiness: cmp.Or(in.DefaultStickiness, "default"), Health: 100}
	envs := in.Environments
	if envs == nil {
		all, err := tx.Environments()
		if err != nil {
			return store.Project{}, err
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
		return store.Project{}, apierr.Validation("These environments do not exist: %s.", strings.Join(missing, ", "))
	}
	proj.CreatedAt = tx.Now()
	if err := tx.InsertProject(proj, envs); err != nil {
		return store.Project{}, err
	}
	if p.Kind == KindUser && p.UserID != nil {
		if err := tx.SetProjectUserRoles(proj.ID, *p.UserID, []int64{access.RoleOwner}, tx.Now()); err != nil {
			return store.Project{}, err
		}
	}
	return proj, tx.Event(store.NewEvent{Type: "project-created", Actor: p.Actor(), Project: proj.ID,
		Data: map[string]any{"id": proj.ID, "name": proj.Name, "description": proj.Description, "mode": proj.Mode,
			"defaultStickiness": proj.DefaultStickiness, "environments": envs}})
}

// UpdateProject changes a project's name, description, mode and default
// stickiness as p, with its event; the id cannot change.
func UpdateProject(tx *store.Tx, p *Principal, id string, in ProjectInput) (store.Project, error) {
	if err := p.Require(PermUpdateProject, id, ""); err != nil {
		return store.Project{}, err
	}
	if err := in.validate(); err != nil {
		return store.Project{}, err
	}
	if in.ID != "" && in.ID != id {
		return store.Project{}, apierr.Validation("The `id` property cannot change a project's id.")
	}
	old, err := tx.Project(id)
	if err != nil {
		return store.Project{}, err
	}
	proj := old
	proj.Name, proj.Description = in.Name, in.Description
	proj.Mode, proj.DefaultStickiness = cmp.Or(in.Mode, old.Mode), cmp.Or(in.DefaultStickiness, old.DefaultStickiness)
	if err := tx.UpdateProject(proj); err != nil {
		return store.Project{}, err
	}
	return proj, tx.Event(store.NewEvent{Type: "project-updated", Actor: p.Actor(), Project: id, Data: projectEventData(proj), PreData: projectEventData(old)})
}

func projectEventData(p store.Project) map[string]any {
	return map[string]any{"id": p.ID, "name": p.Name, "description": p.Description, "mode": p.Mode, "defaultStickiness": p.DefaultStickiness}
}

// DeleteProject deletes a project without active flags (never the default
// project) as p, with its event.
func DeleteProject(tx *store.Tx, p *Principal, id string) error {
	if err := p.Require(PermDeleteProject, id, ""); err != nil {
		return err
	}
	if id == "default" {
		return apierr.Forbidden("You can not delete the default project!")
	}
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
}
