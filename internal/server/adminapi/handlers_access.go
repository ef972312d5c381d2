package adminapi

import (
	"net/http"
	"strconv"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/rbac"
	"github.com/bunting-flags/bunting/internal/store"
)

// The answers of the access routes, named for the OpenAPI document.
type (
	roleList struct {
		Version int               `json:"version"`
		Roles   []domain.RootRole `json:"roles"`
	}
	roleWritten struct {
		Version int             `json:"version"`
		Roles   domain.RootRole `json:"roles"`
	}
	groupList struct {
		Groups []rbac.GroupView `json:"groups"`
	}
	roleNameCheck struct {
		Name   string `json:"name"`
		RoleID int64  `json:"roleId"`
	}
	usersAndGroups struct {
		Users  []baseUser  `json:"users"`
		Groups []baseGroup `json:"groups"`
	}
	baseUser struct {
		ID          int64   `json:"id"`
		Name        *string `json:"name,omitempty"`
		Username    *string `json:"username,omitempty"`
		Email       *string `json:"email,omitempty"`
		AccountType string  `json:"accountType"`
	}
	baseGroup struct {
		ID        int64  `json:"id"`
		Name      string `json:"name"`
		UserCount int    `json:"userCount"`
		RootRole  *int64 `json:"rootRole"`
	}
)

func (s *API) listPermissions(w http.ResponseWriter, r *http.Request) error {
	v, err := rbac.Permissions(s.store.Q(r.Context()))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, v)
}

func (s *API) listRoles(w http.ResponseWriter, r *http.Request) error {
	roles, err := rbac.Roles(s.store.Q(r.Context()))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, roleList{Version: 1, Roles: roles})
}

func (s *API) getRole(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "roleId")
	if err != nil {
		return err
	}
	role, err := rbac.Role(s.store.Q(r.Context()), id)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, role)
}

// createRole answers 200 (as Unleash does) with the new role.
func (s *API) createRole(w http.ResponseWriter, r *http.Request) error {
	role, err := apply(s, r, rbac.CreateRole)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "roles/"+strconv.FormatInt(role.ID, 10))
	return httpjson.Write(w, http.StatusOK, roleWritten{Version: 1, Roles: role})
}

func (s *API) updateRole(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "roleId")
	if err != nil {
		return err
	}
	role, err := apply(s, r, func(tx *store.Tx, p *domain.Principal, in rbac.RoleInput) (domain.RootRole, error) {
		return rbac.UpdateRole(tx, p, id, in)
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, roleWritten{Version: 1, Roles: role})
}

func (s *API) deleteRole(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "roleId")
	if err != nil {
		return err
	}
	return s.accessChange(w, r, func(tx *store.Tx, p *domain.Principal) error { return rbac.DeleteRole(tx, p, id) })
}

// validateRole answers 200 when the name is free (or the role's own), 409
// when another role has it.
func (s *API) validateRole(w http.ResponseWriter, r *http.Request) error {
	var in roleNameCheck
	if err := httpjson.Decode(r, 0, &in); err != nil {
		return err
	}
	if err := rbac.ValidateRoleName(s.store.Q(r.Context()), in.Name, in.RoleID); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *API) listGroups(w http.ResponseWriter, r *http.Request) error {
	groups, err := rbac.Groups(s.store.Q(r.Context()))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, groupList{Groups: groups})
}

func (s *API) getGroup(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "groupId")
	if err != nil {
		return err
	}
	g, err := rbac.Group(s.store.Q(r.Context()), id)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, g)
}

func (s *API) createGroup(w http.ResponseWriter, r *http.Request) error {
	g, err := apply(s, r, rbac.CreateGroup)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "groups/"+strconv.FormatInt(g.ID, 10))
	return httpjson.Write(w, http.StatusCreated, g)
}

func (s *API) updateGroup(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "groupId")
	if err != nil {
		return err
	}
	g, err := apply(s, r, func(tx *store.Tx, p *domain.Principal, in rbac.GroupInput) (rbac.GroupView, error) {
		return rbac.UpdateGroup(tx, p, id, in)
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, g)
}

func (s *API) deleteGroup(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "groupId")
	if err != nil {
		return err
	}
	return s.accessChange(w, r, func(tx *store.Tx, p *domain.Principal) error { return rbac.DeleteGroup(tx, p, id) })
}

// usersAndGroups answers GET /api/admin/user-admin/access: every person
// and group in brief, to pick whom a project gives a role to.
func (s *API) usersAndGroups(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	accts, err := q.Accounts()
	if err != nil {
		return err
	}
	sas, err := q.ServiceAccounts()
	if err != nil {
		return err
	}
	out := usersAndGroups{Users: []baseUser{}, Groups: []baseGroup{}}
	for _, a := range accts {
		out.Users = append(out.Users, baseUser{ID: a.ID, Name: a.Name, Username: a.Username, Email: a.Email, AccountType: "User"})
	}
	for _, u := range sas {
		out.Users = append(out.Users, baseUser{ID: u.ID, Name: u.Name, Username: u.Username, AccountType: "Service Account"})
	}
	groups, err := rbac.Groups(q)
	if err != nil {
		return err
	}
	for _, g := range groups {
		out.Groups = append(out.Groups, baseGroup{ID: g.ID, Name: g.Name, UserCount: g.UserCount, RootRole: g.RootRole})
	}
	return httpjson.Write(w, http.StatusOK, out)
}

func (s *API) getProjectAccess(w http.ResponseWriter, r *http.Request) error {
	v, err := rbac.ProjectAccess(s.store.Q(r.Context()), r.PathValue("projectId"))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, v)
}

// callerProjectRoles answers GET /api/admin/projects/{projectId}/roles: the
// roles the caller holds in the project, directly or through groups.
func (s *API) callerProjectRoles(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	if _, err := q.Project(r.PathValue("projectId")); err != nil {
		return err
	}
	held := domain.PrincipalFrom(r.Context()).Grants().RolesIn(r.PathValue("projectId"))
	all, err := rbac.ProjectRoles(q)
	if err != nil {
		return err
	}
	out := roleList{Version: 1, Roles: []domain.RootRole{}}
	for _, role := range all {
		for _, id := range held {
			if role.ID == id {
				out.Roles = append(out.Roles, role)
				break
			}
		}
	}
	return httpjson.Write(w, http.StatusOK, out)
}

func (s *API) setProjectAccess(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("projectId")
	var in rbac.AccessConfiguration
	if err := httpjson.Decode(r, 0, &in); err != nil {
		return err
	}
	return s.accessChange(w, r, func(tx *store.Tx, p *domain.Principal) error { return rbac.SetProjectAccess(tx, p, project, in) })
}

func (s *API) addProjectAccess(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("projectId")
	var in rbac.AccessAddition
	if err := httpjson.Decode(r, 0, &in); err != nil {
		return err
	}
	return s.accessChange(w, r, func(tx *store.Tx, p *domain.Principal) error { return rbac.AddProjectAccess(tx, p, project, in) })
}

// memberRoles sets (body {roles}) or, with remove, takes away the roles of
// the path's person ({userId}) or group ({groupId}) in the project.
func (s *API) memberRoles(group, remove bool) func(w http.ResponseWriter, r *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		project := r.PathValue("projectId")
		name := "userId"
		if group {
			name = "groupId"
		}
		id, err := pathID(r, name)
		if err != nil {
			return err
		}
		var in rbac.RolesInput
		if !remove {
			if err := httpjson.Decode(r, 0, &in); err != nil {
				return err
			}
			if in.Roles == nil {
				return apierr.Validation("The `roles` property is required: the ids of the project roles to hold (an empty list removes them all).")
			}
		}
		return s.accessChange(w, r, func(tx *store.Tx, p *domain.Principal) error {
			switch {
			case group && remove:
				return rbac.RemoveGroupProjectAccess(tx, p, project, id)
			case group:
				return rbac.SetGroupProjectRoles(tx, p, project, id, in.Roles)
			case remove:
				return rbac.RemoveUserProjectAccess(tx, p, project, id)
			}
			return rbac.SetUserProjectRoles(tx, p, project, id, in.Roles)
		})
	}
}

// accessChange runs op in a transaction as the caller and answers 200
// with an empty body.
func (s *API) accessChange(w http.ResponseWriter, r *http.Request, op func(*store.Tx, *domain.Principal) error) error {
	if err := s.store.Tx(r.Context(), func(tx *store.Tx) error { return op(tx, domain.PrincipalFrom(r.Context())) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}
