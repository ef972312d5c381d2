package adminapi

import (
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/rbac"
	"github.com/bunting-flags/bunting/internal/server/route"
)

// RegisterAccess registers roles, permissions, groups and project access,
// in Unleash's paths and shapes (its Enterprise routes).
func (s *API) RegisterAccess(r route.Registrar) {
	r.Admin("GET /api/admin/permissions", "", s.listPermissions,
		api("Access", "Every permission a role may hold: root, project, and per environment", 200, nil, rbac.PermissionsView{}))
	r.Admin("GET /api/admin/roles", "", s.listRoles,
		api("Access", "List roles: predefined root and project roles, custom ones", 200, nil, roleList{}))
	r.Admin("POST /api/admin/roles", domain.PermAdmin, s.createRole, withJSON,
		api("Access", "Create a custom root role (type root-custom) or project role (type custom)", 200, rbac.RoleInput{}, roleWritten{}))
	r.Admin("POST /api/admin/roles/validate", domain.PermAdmin, s.validateRole, withJSON,
		api("Access", "Check a role name is free (roleId: the role being renamed)", 200, roleNameCheck{}, nil))
	r.Admin("GET /api/admin/roles/{roleId}", "", s.getRole,
		api("Access", "Get a role with its permissions", 200, nil, rbac.RoleWithPermissions{}))
	r.Admin("PUT /api/admin/roles/{roleId}", domain.PermAdmin, s.updateRole, withJSON,
		api("Access", "Replace a custom role's name, description, type and permissions", 200, rbac.RoleInput{}, roleWritten{}))
	r.Admin("DELETE /api/admin/roles/{roleId}", domain.PermAdmin, s.deleteRole,
		api("Access", "Delete a custom role nobody holds", 200, nil, nil))

	r.Admin("GET /api/admin/groups", domain.PermAdmin, s.listGroups,
		api("Access", "List groups with their members", 200, nil, groupList{}))
	r.Admin("POST /api/admin/groups", domain.PermAdmin, s.createGroup, withJSON,
		api("Access", "Create a group (name, description, members, root role, SSO mappings)", 201, rbac.GroupInput{}, rbac.GroupView{}))
	r.Admin("GET /api/admin/groups/{groupId}", domain.PermAdmin, s.getGroup,
		api("Access", "Get a group with its members", 200, nil, rbac.GroupView{}))
	r.Admin("PUT /api/admin/groups/{groupId}", domain.PermAdmin, s.updateGroup, withJSON,
		api("Access", "Replace a group's details (and members, when users is sent)", 200, rbac.GroupInput{}, rbac.GroupView{}))
	r.Admin("DELETE /api/admin/groups/{groupId}", domain.PermAdmin, s.deleteGroup,
		api("Access", "Delete a group", 200, nil, nil))
	r.Admin("GET /api/admin/user-admin/access", "", s.usersAndGroups,
		api("Access", "Every person, service account and group in brief (to give them project roles)", 200, nil, usersAndGroups{}))

	const P = "/api/admin/projects/{projectId}"
	r.Admin("GET "+P+"/access", domain.PermProjectAccessRead, s.getProjectAccess,
		api("Access", "The project's roles, and the people and groups that hold them", 200, nil, rbac.ProjectAccessView{}))
	r.Admin("PUT "+P+"/access", domain.PermProjectAccessWrite, s.setProjectAccess, withJSON,
		api("Access", "Replace who holds which role in the project", 200, rbac.AccessConfiguration{}, nil))
	r.Admin("POST "+P+"/access", domain.PermProjectAccessWrite, s.addProjectAccess, withJSON,
		api("Access", "Give roles in the project to people and groups", 200, rbac.AccessAddition{}, nil))
	r.Admin("GET "+P+"/roles", "", s.callerProjectRoles,
		api("Access", "The roles the caller holds in the project", 200, nil, roleList{}))
	r.Admin("PUT "+P+"/users/{userId}/roles", domain.PermProjectAccessWrite, s.memberRoles(false, false), withJSON,
		api("Access", "Set the roles a person holds in the project", 200, rbac.RolesInput{}, nil))
	r.Admin("DELETE "+P+"/users/{userId}/roles", domain.PermProjectAccessWrite, s.memberRoles(false, true),
		api("Access", "Take a person's roles in the project away", 200, nil, nil))
	r.Admin("PUT "+P+"/groups/{groupId}/roles", domain.PermProjectAccessWrite, s.memberRoles(true, false), withJSON,
		api("Access", "Set the roles a group holds in the project", 200, rbac.RolesInput{}, nil))
	r.Admin("DELETE "+P+"/groups/{groupId}/roles", domain.PermProjectAccessWrite, s.memberRoles(true, true),
		api("Access", "Take a group's roles in the project away", 200, nil, nil))
}
