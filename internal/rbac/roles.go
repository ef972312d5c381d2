// Package rbac changes who may do what: custom roles, groups and project
// access, in Unleash's API shape. Each operation takes the transaction and
// the acting principal, checks its permission, validates, changes rows and
// writes its event (role-*, group-*, project-access-*) in the same
// transaction. What each role allows, and every permission decision, is
// internal/access's; this package never decides a permission itself.
package rbac

import (
	"slices"
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/internal/access"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// PermissionView is a permission as the roles and permissions routes show
// it (Unleash's adminPermissionSchema).
type PermissionView struct {
	ID          int     `json:"id"`
	Name        string  `json:"name"`
	DisplayName string  `json:"displayName"`
	Type        string  `json:"type"`
	Environment *string `json:"environment"`
	// Category groups permissions on the roles screen (not in Unleash's
	// answer; its clients ignore it).
	Category string `json:"category,omitempty"`
}

// adminPermission is ADMIN as the Admin role lists it.
var adminPermission = PermissionView{ID: 100, Name: access.Admin, DisplayName: "Everything (admin)", Type: access.TypeRoot}

func viewPermission(p access.Permission, env string) PermissionView {
	v := PermissionView{ID: p.ID, Name: p.Name, DisplayName: p.DisplayName, Type: p.Type, Category: p.Category}
	if env != "" {
		v.Environment = &env
	}
	return v
}

// PermissionsView is GET /api/admin/permissions (Unleash's
// adminPermissionsSchema): root and project permissions, and the
// environment permissions once per environment.
type PermissionsView struct {
	Version     int `json:"version"`
	Permissions struct {
		Root         []PermissionView         `json:"root"`
		Project      []PermissionView         `json:"project"`
		Environments []EnvironmentPermissions `json:"environments"`
	} `json:"permissions"`
}

// EnvironmentPermissions are the environment permissions of one
// environment.
type EnvironmentPermissions struct {
	Name        string           `json:"name"`
	Permissions []PermissionView `json:"permissions"`
}

// Permissions lists every permission a role may hold.
func Permissions(q store.Q) (PermissionsView, error) {
	var v PermissionsView
	v.Version = 1
	v.Permissions.Root, v.Permissions.Project, v.Permissions.Environments = []PermissionView{}, []PermissionView{}, []EnvironmentPermissions{}
	envs, err := q.Environments()
	if err != nil {
		return v, err
	}
	for _, p := range access.Permissions {
		switch p.Type {
		case access.TypeRoot:
			v.Permissions.Root = append(v.Permissions.Root, viewPermission(p, ""))
		case access.TypeProject:
			v.Permissions.Project = append(v.Permissions.Project, viewPermission(p, ""))
		}
	}
	for _, e := range envs {
		ep := EnvironmentPermissions{Name: e.Name, Permissions: []PermissionView{}}
		for _, p := range access.Permissions {
			if p.Type == access.TypeEnvironment {
				ep.Permissions = append(ep.Permissions, viewPermission(p, e.Name))
			}
		}
		v.Permissions.Environments = append(v.Permissions.Environments, ep)
	}
	return v, nil
}

// RoleWithPermissions is one role with what it holds (Unleash's
// roleWithPermissionsSchema). An environment permission without an
// environment is held in every environment.
type RoleWithPermissions struct {
	ID          int64            `json:"id"`
	Type        string           `json:"type"`
	Name        string           `json:"name"`
	Description string           `json:"description"`
	Permissions []PermissionView `json:"permissions"`
}

// Roles lists every role, predefined then custom, by id.
func Roles(q store.Q) ([]domain.RootRole, error) {
	roles, err := q.Roles()
	if err != nil {
		return nil, err
	}
	out := make([]domain.RootRole, 0, len(roles))
	for _, r := range roles {
		out = append(out, domain.ViewRole(r))
	}
	return out, nil
}

// ProjectRoles lists the roles a project grants (Owner, Member and the
// custom project roles), by id.
func ProjectRoles(q store.Q) ([]domain.RootRole, error) {
	all, err := Roles(q)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(r domain.RootRole) bool { return access.IsRootType(r.Type) }), nil
}

// Role returns one role with its permissions.
func Role(q store.Q, id int64) (RoleWithPermissions, error) {
	r, err := q.Role(id)
	if err != nil {
		return RoleWithPermissions{}, err
	}
	out := RoleWithPermissions{ID: r.ID, Type: r.Type, Name: r.Name, Description: r.Description, Permissions: []PermissionView{}}
	if !access.IsCustomType(r.Type) {
		for _, g := range access.PredefinedPermissions(r.ID) {
			if g.Permission == access.Admin {
				out.Permissions = append(out.Permissions, adminPermission)
			} else if p, ok := access.Lookup(g.Permission); ok {
				out.Permissions = append(out.Permissions, viewPermission(p, g.Environment))
			}
		}
		return out, nil
	}
	perms, err := rolePermissions(q, id)
	if err != nil {
		return out, err
	}
	for _, rp := range perms {
		if p, ok := access.Lookup(rp.Name); ok {
			out.Permissions = append(out.Permissions, viewPermission(p, rp.Environment))
		}
	}
	return out, nil
}

func rolePermissions(q store.Q, id int64) ([]store.RolePermission, error) {
	all, err := q.RolePermissions()
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(p store.RolePermission) bool { return p.RoleID != id }), nil
}

// PermissionRef names a permission of a role being written, by name or by
// id, in one environment (environment permissions) or in all of them.
type PermissionRef struct {
	ID          *int    `json:"id"`
	Name        string  `json:"name"`
	Environment *string `json:"environment"`
}

// RoleInput is a custom role as POST and PUT /api/admin/roles write it
// (Unleash's createRoleWithPermissionsSchema). Type is custom (a project
// role, the default) or root-custom.
type RoleInput struct {
	Name        string          `json:"name"`
	Description *string         `json:"description"`
	Type        string          `json:"type"`
	Permissions []PermissionRef `json:"permissions"`
}

// roleEventData is what role events record.
func roleEventData(r store.Role, perms []store.RolePermission) map[string]any {
	list := make([]map[string]any, 0, len(perms))
	for _, p := range perms {
		e := map[string]any{"name": p.Name}
		if p.Environment != "" {
			e["environment"] = p.Environment
		}
		list = append(list, e)
	}
	return map[string]any{"id": r.ID, "name": r.Name, "description": r.Description, "type": r.Type, "permissions": list}
}

// validate checks a role's name, type and permissions and returns them as
// stored.
func (in RoleInput) validate(q store.Q) (store.Role, []store.RolePermission, error) {
	r := store.Role{Name: strings.TrimSpace(in.Name), Type: in.Type}
	if r.Name == "" || len(r.Name) > 100 {
		return r, nil, apierr.Validation("The `name` property is required: 1 to 100 characters.")
	}
	if in.Description != nil {
		r.Description = *in.Description
	}
	switch r.Type {
	case "":
		r.Type = access.RoleTypeCustomProject
	case access.RoleTypeCustomProject, access.RoleTypeCustomRoot:
	default:
		return r, nil, apierr.Validation("The `type` property must be custom (a project role) or root-custom (a root role). You sent %q.", in.Type)
	}
	envs, err := q.Environments()
	if err != nil {
		return r, nil, err
	}
	var perms []store.RolePermission
	var unknown []string
	for _, ref := range in.Permissions {
		name := ref.Name
		if name == "" && ref.ID != nil {
			for _, p := range access.Permissions {
				if p.ID == *ref.ID {
					name = p.Name
				}
			}
		}
		p, ok := access.Lookup(name)
		if !ok {
			if name == "" && ref.ID != nil {
				name = "permission with ID: " + strconv.Itoa(*ref.ID)
			}
			unknown = append(unknown, name)
			continue
		}
		env := ""
		if ref.Environment != nil {
			env = *ref.Environment
		}
		switch {
		case r.Type == access.RoleTypeCustomRoot && p.Type != access.TypeRoot:
			return r, nil, apierr.Validation("A custom root role holds root permissions only; %s is a %s permission (give it through a custom project role).", p.Name, p.Type)
		case r.Type == access.RoleTypeCustomProject && p.Type == access.TypeRoot:
			return r, nil, apierr.Validation("A custom project role holds project and environment permissions only; %s is a root permission (give it through a custom root role).", p.Name)
		case env != "" && p.Type != access.TypeEnvironment:
			return r, nil, apierr.Validation("%s is not an environment permission: leave out its `environment`.", p.Name)
		case env != "" && !slices.ContainsFunc(envs, func(e store.Environment) bool { return e.Name == env }):
			return r, nil, apierr.Validation("The environment %q of %s does not exist.", env, p.Name)
		}
		rp := store.RolePermission{Name: p.Name, Environment: env}
		if !slices.Contains(perms, rp) {
			perms = append(perms, rp)
		}
	}
	if len(unknown) > 0 {
		return r, nil, apierr.Validation("Invalid permissions supplied. The following permissions don't exist: %s.", strings.Join(unknown, ", "))
	}
	return r, perms, nil
}

// CreateRole creates a custom role as p (ADMIN), with its event.
func CreateRole(tx *store.Tx, p *domain.Principal, in RoleInput) (domain.RootRole, error) {
	if err := p.Require(domain.PermAdmin, "", ""); err != nil {
		return domain.RootRole{}, err
	}
	r, perms, err := in.validate(tx.Q)
	if err != nil {
		return domain.RootRole{}, err
	}
	by := p.Actor().Name
	r.CreatedAt, r.CreatedBy = tx.Now(), &by
	if r.ID, err = tx.InsertRole(r); err != nil {
		return domain.RootRole{}, err
	}
	if err := tx.SetRolePermissions(r.ID, perms); err != nil {
		return domain.RootRole{}, err
	}
	return domain.ViewRole(r), tx.Event(store.NewEvent{Type: "role-created", Actor: p.Actor(), Data: roleEventData(r, perms)})
}

// customRole loads a role that an admin may change: built-in roles are
// refused.
func customRole(q store.Q, id int64) (store.Role, error) {
	r, err := q.Role(id)
	if err != nil {
		return r, err
	}
	if !access.IsCustomType(r.Type) {
		e := apierr.Validation("You cannot change built in roles.")
		e.Name = "InvalidOperationError"
		return r, e
	}
	return r, nil
}

// UpdateRole replaces a custom role's name, description, type and
// permissions as p (ADMIN), with its event. A role in use keeps its kind
// (root or project).
func UpdateRole(tx *store.Tx, p *domain.Principal, id int64, in RoleInput) (domain.RootRole, error) {
	if err := p.Require(domain.PermAdmin, "", ""); err != nil {
		return domain.RootRole{}, err
	}
	old, err := customRole(tx.Q, id)
	if err != nil {
		return domain.RootRole{}, err
	}
	r, perms, err := in.validate(tx.Q)
	if err != nil {
		return domain.RootRole{}, err
	}
	r.ID, r.CreatedAt, r.CreatedBy = id, old.CreatedAt, old.CreatedBy
	if r.Type != old.Type {
		users, groups, err := tx.RoleUse(id)
		if err != nil {
			return domain.RootRole{}, err
		}
		if users+groups > 0 {
			return domain.RootRole{}, apierr.Validation("The role is in use by users (%d) or groups (%d); it cannot change from %s to %s.", users, groups, old.Type, r.Type)
		}
	}
	oldPerms, err := rolePermissions(tx.Q, id)
	if err != nil {
		return domain.RootRole{}, err
	}
	if err := tx.UpdateRole(r); err != nil {
		return domain.RootRole{}, err
	}
	if err := tx.SetRolePermissions(id, perms); err != nil {
		return domain.RootRole{}, err
	}
	return domain.ViewRole(r), tx.Event(store.NewEvent{Type: "role-updated", Actor: p.Actor(), Data: roleEventData(r, perms), PreData: roleEventData(old, oldPerms)})
}

// DeleteRole deletes a custom role as p (ADMIN), with its event. A custom
// root role that people or groups hold as their root role is refused (they
// would be left without one); a custom project role is taken away from
// everyone who holds it in a project, and the event's preData lists where
// (Unleash refuses both; Terraform destroys a role before the people its
// project access named, so it could never be destroyed).
func DeleteRole(tx *store.Tx, p *domain.Principal, id int64) error {
	if err := p.Require(domain.PermAdmin, "", ""); err != nil {
		return err
	}
	old, err := customRole(tx.Q, id)
	if err != nil {
		return err
	}
	users, groups, err := tx.RootRoleUse(id)
	if err != nil {
		return err
	}
	if users+groups > 0 {
		e := apierr.Validation("Role is in use by users(%d) or groups(%d) as their root role. You cannot delete it without first giving them another root role.", users, groups)
		e.Name = "RoleInUseError"
		return e
	}
	oldPerms, err := rolePermissions(tx.Q, id)
	if err != nil {
		return err
	}
	pre := roleEventData(old, oldPerms)
	if !access.IsRootType(old.Type) {
		used, err := tx.RoleProjects(id)
		if err != nil {
			return err
		}
		pre["projects"] = used
		if err := tx.RemoveRoleFromProjects(id); err != nil {
			return err
		}
	}
	if err := tx.DeleteRole(id); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: "role-deleted", Actor: p.Actor(), PreData: pre})
}

// ValidateRoleName is POST /api/admin/roles/validate: nil when name is free
// (or is the name of role except), a 409 when another role has it.
func ValidateRoleName(q store.Q, name string, except int64) error {
	name = strings.TrimSpace(name)
	if name == "" {
		return apierr.Validation("The `name` property is required.")
	}
	r, err := q.RoleByName(name)
	if apierr.IsKind(err, apierr.KindNotFound) || (err == nil && r.ID == except) {
		return nil
	}
	if err != nil {
		return err
	}
	return apierr.Conflict("There already exists a role with the name %s", name)
}
