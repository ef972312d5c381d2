package store

import (
	"database/sql"
	"strconv"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// Role is a predefined or custom role. Type is root, project (the
// predefined ones), root-custom or custom (custom project roles), as in
// Unleash.
type Role struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Type        string    `json:"type"`
	CreatedAt   time.Time `json:"-"`
	CreatedBy   *string   `json:"-"`
}

// RolePermission is one permission a custom role holds, in one
// environment for environment permissions ("" otherwise).
type RolePermission struct {
	RoleID      int64  `json:"-"`
	Name        string `json:"name"`
	Environment string `json:"environment,omitempty"`
}

const roleColumns = `id, name, description, type, created_at, created_by`

func scanRole(row scanner) (Role, error) {
	var (
		r       Role
		created int64
		by      sql.NullString
	)
	err := row.Scan(&r.ID, &r.Name, &r.Description, &r.Type, &created, &by)
	r.CreatedAt, r.CreatedBy = FromMillis(created), strPtr(by)
	return r, err
}

// Roles lists every role by id.
func (q Q) Roles() ([]Role, error) {
	return collect(q, scanRole, `SELECT `+roleColumns+` FROM roles ORDER BY id`)
}

// Role returns one role or a NotFound error.
func (q Q) Role(id int64) (Role, error) {
	r, err := scanRole(q.q.QueryRowContext(q.ctx, `SELECT `+roleColumns+` FROM roles WHERE id = $1`, id))
	if err == sql.ErrNoRows {
		return r, apierr.NotFound("Could not find role with id %d", id)
	}
	return r, q.s.translate(err)
}

// RoleByName returns the role named name (ignoring case) or a NotFound
// error.
func (q Q) RoleByName(name string) (Role, error) {
	r, err := scanRole(q.q.QueryRowContext(q.ctx, `SELECT `+roleColumns+` FROM roles WHERE lower(name) = $1`, strings.ToLower(name)))
	if err == sql.ErrNoRows {
		return r, apierr.NotFound("Could not find role %q", name)
	}
	return r, q.s.translate(err)
}

// InsertRole creates a role and returns its id; a name in use (ignoring
// case) is a conflict.
func (q Q) InsertRole(r Role) (int64, error) {
	id, err := q.insertID(`INSERT INTO roles (name, description, type, created_at, created_by) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
		r.Name, r.Description, r.Type, Millis(r.CreatedAt), nullableText(r.CreatedBy))
	if apierr.IsKind(err, apierr.KindConflict) {
		return 0, apierr.Conflict("There already exists a role with the name %s", r.Name)
	}
	return id, err
}

// UpdateRole stores a role's name, description and type.
func (q Q) UpdateRole(r Role) error {
	_, err := q.exec(`UPDATE roles SET name = $2, description = $3, type = $4 WHERE id = $1`, r.ID, r.Name, r.Description, r.Type)
	if apierr.IsKind(err, apierr.KindConflict) {
		return apierr.Conflict("There already exists a role with the name %s", r.Name)
	}
	return err
}

// DeleteRole removes a role with its permissions.
func (q Q) DeleteRole(id int64) error {
	_, err := q.exec(`DELETE FROM roles WHERE id = $1`, id)
	return err
}

// RolePermissions lists the stored permissions of every custom role, by
// role, permission and environment.
func (q Q) RolePermissions() ([]RolePermission, error) {
	return collect(q, func(row scanner) (RolePermission, error) {
		var p RolePermission
		err := row.Scan(&p.RoleID, &p.Name, &p.Environment)
		return p, err
	}, `SELECT role_id, permission, environment FROM role_permissions ORDER BY role_id, permission, environment`)
}

// SetRolePermissions replaces a role's stored permissions.
func (q Q) SetRolePermissions(roleID int64, perms []RolePermission) error {
	if _, err := q.exec(`DELETE FROM role_permissions WHERE role_id = $1`, roleID); err != nil {
		return err
	}
	for _, p := range perms {
		if _, err := q.exec(`INSERT INTO role_permissions (role_id, permission, environment) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
			roleID, p.Name, p.Environment); err != nil {
			return err
		}
	}
	return nil
}

// RoleUse counts who holds a role: people and service accounts (as their
// root role or in a project) and groups (as their root role or in a
// project).
func (q Q) RoleUse(id int64) (users, groups int, err error) {
	err = q.row([]any{&users, &groups}, `SELECT
		(SELECT COUNT(*) FROM users WHERE root_role_id = $1) + (SELECT COUNT(DISTINCT user_id) FROM project_user_roles WHERE role_id = $1),
		(SELECT COUNT(*) FROM groups WHERE root_role_id = $1) + (SELECT COUNT(DISTINCT group_id) FROM project_group_roles WHERE role_id = $1)`, id)
	return users, groups, err
}

// RootRoleUse counts the people, service accounts and groups whose root
// role is id.
func (q Q) RootRoleUse(id int64) (users, groups int, err error) {
	err = q.row([]any{&users, &groups}, `SELECT (SELECT COUNT(*) FROM users WHERE root_role_id = $1), (SELECT COUNT(*) FROM groups WHERE root_role_id = $1)`, id)
	return users, groups, err
}

// RemoveRoleFromProjects takes a project role away from everyone who
// holds it, in every project.
func (q Q) RemoveRoleFromProjects(id int64) error {
	if _, err := q.exec(`DELETE FROM project_user_roles WHERE role_id = $1`, id); err != nil {
		return err
	}
	_, err := q.exec(`DELETE FROM project_group_roles WHERE role_id = $1`, id)
	return err
}

// RoleProjectUse is how many people and groups hold a project role in one
// project.
type RoleProjectUse struct {
	Project    string `json:"project"`
	UserCount  int    `json:"userCount"`
	GroupCount int    `json:"groupCount"`
	// ServiceAccountCount counts the service accounts among the users.
	ServiceAccountCount int `json:"serviceAccountCount"`
}

// RoleProjects says, per project, how many people, service accounts and
// groups hold the role there.
func (q Q) RoleProjects(id int64) ([]RoleProjectUse, error) {
	return collect(q, func(row scanner) (RoleProjectUse, error) {
		var u RoleProjectUse
		err := row.Scan(&u.Project, &u.UserCount, &u.ServiceAccountCount, &u.GroupCount)
		return u, err
	}, `SELECT p.id,
		(SELECT COUNT(*) FROM project_user_roles r JOIN users u ON u.id = r.user_id WHERE r.project = p.id AND r.role_id = $1 AND NOT u.is_service),
		(SELECT COUNT(*) FROM project_user_roles r JOIN users u ON u.id = r.user_id WHERE r.project = p.id AND r.role_id = $1 AND u.is_service),
		(SELECT COUNT(*) FROM project_group_roles r WHERE r.project = p.id AND r.role_id = $1)
		FROM projects p
		WHERE EXISTS (SELECT 1 FROM project_user_roles r WHERE r.project = p.id AND r.role_id = $1)
		   OR EXISTS (SELECT 1 FROM project_group_roles r WHERE r.project = p.id AND r.role_id = $1)
		ORDER BY p.id`, id)
}

// Group is a set of people who share a root role, project roles and SSO
// mappings.
type Group struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Description *string   `json:"description"`
	MappingsSSO []string  `json:"mappingsSSO"`
	RootRole    *int64    `json:"rootRole"`
	CreatedBy   *string   `json:"createdBy"`
	CreatedAt   time.Time `json:"createdAt"`
}

const groupColumns = `id, name, description, mappings_sso, root_role_id, created_by, created_at`

func scanGroup(row scanner) (Group, error) {
	var (
		g        Group
		desc, by sql.NullString
		mappings string
		root     sql.NullInt64
		created  int64
	)
	if err := row.Scan(&g.ID, &g.Name, &desc, &mappings, &root, &by, &created); err != nil {
		return g, err
	}
	g.Description, g.CreatedBy, g.CreatedAt = strPtr(desc), strPtr(by), FromMillis(created)
	if root.Valid {
		g.RootRole = &root.Int64
	}
	g.MappingsSSO = []string{}
	return g, decodeJSON(mappings, &g.MappingsSSO)
}

// Groups lists every group by name.
func (q Q) Groups() ([]Group, error) {
	return collect(q, scanGroup, `SELECT `+groupColumns+` FROM groups ORDER BY name, id`)
}

// Group returns one group or a NotFound error.
func (q Q) Group(id int64) (Group, error) {
	g, err := scanGroup(q.q.QueryRowContext(q.ctx, `SELECT `+groupColumns+` FROM groups WHERE id = $1`, id))
	if err == sql.ErrNoRows {
		return g, apierr.NotFound("Could not find group with id %d", id)
	}
	return g, q.s.translate(err)
}

// InsertGroup creates a group and returns its id; a name in use is a
// conflict.
func (q Q) InsertGroup(g Group) (int64, error) {
	id, err := q.insertID(`INSERT INTO groups (name, description, mappings_sso, root_role_id, created_by, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		g.Name, nullableText(g.Description), encodeJSON(nonNil(g.MappingsSSO)), g.RootRole, nullableText(g.CreatedBy), Millis(g.CreatedAt))
	if apierr.IsKind(err, apierr.KindConflict) {
		return 0, apierr.Conflict("Group name already exists")
	}
	return id, err
}

// UpdateGroup stores a group's name, description, SSO mappings and root
// role.
func (q Q) UpdateGroup(g Group) error {
	_, err := q.exec(`UPDATE groups SET name = $2, description = $3, mappings_sso = $4, root_role_id = $5 WHERE id = $1`,
		g.ID, g.Name, nullableText(g.Description), encodeJSON(nonNil(g.MappingsSSO)), g.RootRole)
	if apierr.IsKind(err, apierr.KindConflict) {
		return apierr.Conflict("Group name already exists")
	}
	return err
}

// DeleteGroup removes a group with its memberships and project roles.
func (q Q) DeleteGroup(id int64) error {
	_, err := q.exec(`DELETE FROM groups WHERE id = $1`, id)
	return err
}

// GroupMember is one person's membership of a group.
type GroupMember struct {
	GroupID   int64
	UserID    int64
	CreatedBy *string
	JoinedAt  time.Time
}

func scanGroupMember(row scanner) (GroupMember, error) {
	var (
		m      GroupMember
		by     sql.NullString
		joined int64
	)
	err := row.Scan(&m.GroupID, &m.UserID, &by, &joined)
	m.CreatedBy, m.JoinedAt = strPtr(by), FromMillis(joined)
	return m, err
}

// GroupMembers lists the members of every group, by group and join time.
func (q Q) GroupMembers() ([]GroupMember, error) {
	return collect(q, scanGroupMember, `SELECT group_id, user_id, created_by, created_at FROM group_users ORDER BY group_id, created_at, user_id`)
}

// MembersOfGroup lists one group's members by join time.
func (q Q) MembersOfGroup(id int64) ([]GroupMember, error) {
	return collect(q, scanGroupMember, `SELECT group_id, user_id, created_by, created_at FROM group_users WHERE group_id = $1 ORDER BY created_at, user_id`, id)
}

// GroupsOfUser lists the memberships of one person.
func (q Q) GroupsOfUser(userID int64) ([]GroupMember, error) {
	return collect(q, scanGroupMember, `SELECT group_id, user_id, created_by, created_at FROM group_users WHERE user_id = $1 ORDER BY group_id`, userID)
}

// AddGroupMember adds a person to a group (nothing when they are in it).
func (q Q) AddGroupMember(groupID, userID int64, by string, at time.Time) error {
	_, err := q.exec(`INSERT INTO group_users (group_id, user_id, created_by, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
		groupID, userID, by, Millis(at))
	return err
}

// RemoveGroupMember removes a person from a group.
func (q Q) RemoveGroupMember(groupID, userID int64) error {
	_, err := q.exec(`DELETE FROM group_users WHERE group_id = $1 AND user_id = $2`, groupID, userID)
	return err
}

// ProjectRole is one role held in a project by a person (UserID) or a
// group (GroupID).
type ProjectRole struct {
	Project   string
	UserID    int64
	GroupID   int64
	RoleID    int64
	CreatedBy *string
	AddedAt   time.Time
}

// ProjectUserRoles lists the roles people hold in one project ("" = in
// every project), by person and role.
func (q Q) ProjectUserRoles(project string) ([]ProjectRole, error) {
	return collect(q, func(row scanner) (ProjectRole, error) {
		var (
			r     ProjectRole
			added int64
		)
		err := row.Scan(&r.Project, &r.UserID, &r.RoleID, &added)
		r.AddedAt = FromMillis(added)
		return r, err
	}, `SELECT project, user_id, role_id, created_at FROM project_user_roles WHERE project = $1 OR $1 = '' ORDER BY project, user_id, role_id`, project)
}

// ProjectGroupRoles lists the roles groups hold in one project ("" = in
// every project), by group and role.
func (q Q) ProjectGroupRoles(project string) ([]ProjectRole, error) {
	return collect(q, func(row scanner) (ProjectRole, error) {
		var (
			r     ProjectRole
			added int64
			by    sql.NullString
		)
		err := row.Scan(&r.Project, &r.GroupID, &r.RoleID, &by, &added)
		r.CreatedBy, r.AddedAt = strPtr(by), FromMillis(added)
		return r, err
	}, `SELECT project, group_id, role_id, created_by, created_at FROM project_group_roles WHERE project = $1 OR $1 = '' ORDER BY project, group_id, role_id`, project)
}

// SetProjectUserRoles replaces the roles a person holds in a project
// (none: they are no longer a member).
func (q Q) SetProjectUserRoles(project string, userID int64, roles []int64, at time.Time) error {
	if _, err := q.exec(`DELETE FROM project_user_roles WHERE project = $1 AND user_id = $2`, project, userID); err != nil {
		return err
	}
	for _, r := range roles {
		if _, err := q.exec(`INSERT INTO project_user_roles (project, user_id, role_id, created_at) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
			project, userID, r, Millis(at)); err != nil {
			return err
		}
	}
	return nil
}

// SetProjectGroupRoles replaces the roles a group holds in a project.
func (q Q) SetProjectGroupRoles(project string, groupID int64, roles []int64, by string, at time.Time) error {
	if _, err := q.exec(`DELETE FROM project_group_roles WHERE project = $1 AND group_id = $2`, project, groupID); err != nil {
		return err
	}
	for _, r := range roles {
		if _, err := q.exec(`INSERT INTO project_group_roles (project, group_id, role_id, created_by, created_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
			project, groupID, r, by, Millis(at)); err != nil {
			return err
		}
	}
	return nil
}

// UserAccess is what decides a person's permissions: their root role, the
// groups they are in (with each group's root role) and every role they
// hold in a project, directly or through a group.
type UserAccess struct {
	RootRole int64
	// Groups are the ids of the person's groups; GroupRootRoles the root
	// roles those groups give.
	Groups         []int64
	GroupRootRoles []int64
	// Projects are the project roles, each once per (project, role).
	Projects []ProjectRole
}

// AccessOfUser loads a person's UserAccess in three queries, or a
// NotFound error.
func (q Q) AccessOfUser(userID int64) (UserAccess, error) {
	var a UserAccess
	if err := q.row([]any{&a.RootRole}, `SELECT root_role_id FROM users WHERE id = $1`, userID); err != nil {
		if apierr.IsKind(err, apierr.KindNotFound) {
			return a, apierr.NotFound("Could not find user with id %d", userID)
		}
		return a, err
	}
	a.Groups, a.GroupRootRoles = []int64{}, []int64{}
	err := q.eachRow(func(row scanner) error {
		var (
			id   int64
			root sql.NullInt64
		)
		if err := row.Scan(&id, &root); err != nil {
			return err
		}
		a.Groups = append(a.Groups, id)
		if root.Valid {
			a.GroupRootRoles = append(a.GroupRootRoles, root.Int64)
		}
		return nil
	}, `SELECT g.id, g.root_role_id FROM group_users gu JOIN groups g ON g.id = gu.group_id WHERE gu.user_id = $1 ORDER BY g.id`, userID)
	if err != nil {
		return a, err
	}
	a.Projects, err = collect(q, func(row scanner) (ProjectRole, error) {
		r := ProjectRole{UserID: userID}
		err := row.Scan(&r.Project, &r.RoleID)
		return r, err
	}, `SELECT project, role_id FROM project_user_roles WHERE user_id = $1
		UNION SELECT r.project, r.role_id FROM project_group_roles r JOIN group_users gu ON gu.group_id = r.group_id WHERE gu.user_id = $1
		ORDER BY 1, 2`, userID)
	return a, err
}

// ProjectModes maps every project that is not open to its mode.
func (q Q) ProjectModes() (map[string]string, error) {
	out := map[string]string{}
	err := q.eachRow(func(row scanner) error {
		var id, mode string
		if err := row.Scan(&id, &mode); err != nil {
			return err
		}
		out[id] = mode
		return nil
	}, `SELECT id, mode FROM projects WHERE mode <> 'open'`)
	return out, err
}

// UsersByID returns the users with the given ids, by id (unknown ids are
// left out).
func (q Q) UsersByID(ids []int64) ([]User, error) {
	if len(ids) == 0 {
		return []User{}, nil
	}
	var b strings.Builder
	args := make([]any, len(ids))
	for i, id := range ids {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("$" + strconv.Itoa(i+1))
		args[i] = id
	}
	return collect(q, scanUser, `SELECT `+userColumns+` FROM users WHERE id IN (`+b.String()+`) ORDER BY id`, args...)
}

// SearchUsers finds people (not service accounts) whose username, name or
// email contains text, ignoring case, up to 100 by id.
func (q Q) SearchUsers(text string) ([]User, error) {
	like := "%" + strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(strings.ToLower(text)) + "%"
	return collect(q, scanUser, `SELECT `+userColumns+` FROM users WHERE NOT is_service AND
		(lower(COALESCE(username, '')) LIKE $1 ESCAPE '\' OR lower(COALESCE(name, '')) LIKE $1 ESCAPE '\' OR lower(COALESCE(email, '')) LIKE $1 ESCAPE '\')
		ORDER BY id LIMIT 100`, like)
}
