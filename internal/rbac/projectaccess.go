package rbac

import (
	"slices"
	"time"

	"github.com/bunting-flags/bunting/internal/access"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// ProjectAccessView is GET /api/admin/projects/{projectId}/access
// (Unleash's projectAccessSchema): the roles a project grants, and the
// people and groups that hold them there.
type ProjectAccessView struct {
	Roles  []domain.RootRole `json:"roles"`
	Users  []ProjectUser     `json:"users"`
	Groups []ProjectGroup    `json:"groups"`
}

// ProjectUser is a person (or service account) with their roles in a
// project (Unleash's userWithProjectRoleSchema).
type ProjectUser struct {
	ID          int64     `json:"id"`
	Name        *string   `json:"name,omitempty"`
	Email       *string   `json:"email,omitempty"`
	Username    *string   `json:"username,omitempty"`
	AccountType string    `json:"accountType"`
	AddedAt     time.Time `json:"addedAt"`
	RoleID      int64     `json:"roleId"`
	Roles       []int64   `json:"roles"`
}

// ProjectGroup is a group with its roles in a project (Unleash's
// groupWithProjectRoleSchema).
type ProjectGroup struct {
	GroupView
	AddedAt time.Time `json:"addedAt"`
	RoleID  int64     `json:"roleId"`
	Roles   []int64   `json:"roles"`
}

// ProjectAccess reads who holds which role in project.
func ProjectAccess(q store.Q, project string) (ProjectAccessView, error) {
	if _, err := q.Project(project); err != nil {
		return ProjectAccessView{}, err
	}
	v := ProjectAccessView{Users: []ProjectUser{}, Groups: []ProjectGroup{}}
	var err error
	if v.Roles, err = ProjectRoles(q); err != nil {
		return v, err
	}
	urs, err := q.ProjectUserRoles(project)
	if err != nil {
		return v, err
	}
	var ids []int64
	for _, r := range urs {
		if !slices.Contains(ids, r.UserID) {
			ids = append(ids, r.UserID)
		}
	}
	users, err := q.UsersByID(ids)
	if err != nil {
		return v, err
	}
	for _, u := range users {
		pu := ProjectUser{ID: u.ID, Name: u.Name, Email: u.Email, Username: u.Username, AccountType: viewUser(u).AccountType, Roles: []int64{}}
		for _, r := range urs {
			if r.UserID == u.ID {
				if len(pu.Roles) == 0 {
					pu.RoleID, pu.AddedAt = r.RoleID, r.AddedAt
				}
				pu.Roles = append(pu.Roles, r.RoleID)
			}
		}
		v.Users = append(v.Users, pu)
	}
	grs, err := q.ProjectGroupRoles(project)
	if err != nil {
		return v, err
	}
	var gids []int64
	for _, r := range grs {
		if !slices.Contains(gids, r.GroupID) {
			gids = append(gids, r.GroupID)
		}
	}
	all, err := Groups(q)
	if err != nil {
		return v, err
	}
	for _, g := range all {
		if !slices.Contains(gids, g.ID) {
			continue
		}
		pg := ProjectGroup{GroupView: g, Roles: []int64{}}
		for _, r := range grs {
			if r.GroupID == g.ID {
				if len(pg.Roles) == 0 {
					pg.RoleID, pg.AddedAt = r.RoleID, r.AddedAt
				}
				pg.Roles = append(pg.Roles, r.RoleID)
			}
		}
		v.Groups = append(v.Groups, pg)
	}
	return v, nil
}

// assignment is who holds which roles in a project: role ids by person and
// by group.
type assignment struct {
	users  map[int64][]int64
	groups map[int64][]int64
}

func currentAssignment(q store.Q, project string) (assignment, error) {
	a := assignment{users: map[int64][]int64{}, groups: map[int64][]int64{}}
	urs, err := q.ProjectUserRoles(project)
	if err != nil {
		return a, err
	}
	for _, r := range urs {
		a.users[r.UserID] = append(a.users[r.UserID], r.RoleID)
	}
	grs, err := q.ProjectGroupRoles(project)
	if err != nil {
		return a, err
	}
	for _, r := range grs {
		a.groups[r.GroupID] = append(a.groups[r.GroupID], r.RoleID)
	}
	return a, nil
}

// eventData is an assignment as events record it: per role, its people and
// groups.
func (a assignment) eventData() map[string]any {
	byRole := map[int64]map[string][]int64{}
	var order []int64
	add := func(kind string, who int64, roles []int64) {
		for _, r := range roles {
			if byRole[r] == nil {
				byRole[r] = map[string][]int64{"users": {}, "groups": {}}
				order = append(order, r)
			}
			byRole[r][kind] = append(byRole[r][kind], who)
		}
	}
	for _, id := range sortedKeys(a.users) {
		add("users", id, a.users[id])
	}
	for _, id := range sortedKeys(a.groups) {
		add("groups", id, a.groups[id])
	}
	slices.Sort(order)
	roles := make([]map[string]any, 0, len(order))
	for _, r := range order {
		roles = append(roles, map[string]any{"id": r, "users": byRole[r]["users"], "groups": byRole[r]["groups"]})
	}
	return map[string]any{"roles": roles}
}

func sortedKeys(m map[int64][]int64) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// checker validates the roles, people and groups of a project access
// change and whether the acting principal may grant each role.
type checker struct {
	q       store.Q
	p       *domain.Principal
	project string
	roles   map[int64]store.Role
	envs    []store.Environment
	perms   []store.RolePermission
}

func newChecker(q store.Q, p *domain.Principal, project string) (*checker, error) {
	if _, err := q.Project(project); err != nil {
		return nil, err
	}
	if err := p.Require(domain.PermProjectAccessWrite, project, ""); err != nil {
		return nil, err
	}
	c := &checker{q: q, p: p, project: project, roles: map[int64]store.Role{}}
	roles, err := q.Roles()
	if err != nil {
		return nil, err
	}
	for _, r := range roles {
		c.roles[r.ID] = r
	}
	if c.envs, err = q.Environments(); err != nil {
		return nil, err
	}
	if c.perms, err = q.RolePermissions(); err != nil {
		return nil, err
	}
	return c, nil
}

// role checks that id is a project role the principal may grant: one
// whose every permission it holds in the project (admins may grant any),
// as Unleash checks before granting.
func (c *checker) role(id int64) error {
	r, ok := c.roles[id]
	if !ok || access.IsRootType(r.Type) {
		return apierr.Validation("The role %d is not a project role: use Owner (4), Member (5) or a custom project role.", id)
	}
	if c.p.Grants().IsAdmin() {
		return nil
	}
	var grants []access.Grant
	if access.IsCustomType(r.Type) {
		for _, rp := range c.perms {
			if rp.RoleID == id {
				grants = append(grants, access.Grant{Permission: rp.Name, Environment: rp.Environment})
			}
		}
	} else {
		grants = access.PredefinedPermissions(id)
	}
	for _, g := range grants {
		envs := []string{g.Environment}
		if pm, _ := access.Lookup(g.Permission); pm.Type == access.TypeEnvironment && g.Environment == "" {
			envs = envs[:0]
			for _, e := range c.envs {
				envs = append(envs, e.Name)
			}
		}
		for _, env := range envs {
			if !c.p.Can(g.Permission, c.project, env) {
				return apierr.Forbidden("You cannot grant the role %s: it holds %s, which you do not hold in this project.", r.Name, g.Permission)
			}
		}
	}
	return nil
}

func (c *checker) users(ids []int64) error {
	found, err := c.q.UsersByID(ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if !slices.ContainsFunc(found, func(u store.User) bool { return u.ID == id }) {
			return apierr.Validation("The user with id %d does not exist.", id)
		}
	}
	return nil
}

func (c *checker) groups(ids []int64) error {
	for _, id := range ids {
		if _, err := c.q.Group(id); apierr.IsKind(err, apierr.KindNotFound) {
			return apierr.Validation("The group with id %d does not exist.", id)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// changedRoles checks every role added or removed between before and
// after.
func (c *checker) changedRoles(before, after []int64) error {
	for _, r := range after {
		if !slices.Contains(before, r) {
			if err := c.role(r); err != nil {
				return err
			}
		}
	}
	for _, r := range before {
		if !slices.Contains(after, r) {
			if err := c.role(r); err != nil {
				return err
			}
		}
	}
	return nil
}

// AccessConfiguration is PUT /api/admin/projects/{projectId}/access
// (Unleash's projectAccessConfigurationSchema): every role with all the
// people and groups that hold it; whoever is not named loses access.
type AccessConfiguration struct {
	Roles []struct {
		ID     int64   `json:"id"`
		Users  []int64 `json:"users"`
		Groups []int64 `json:"groups"`
	} `json:"roles"`
}

// SetProjectAccess replaces who holds which role in project as p
// (PROJECT_USER_ACCESS_WRITE there), with its event.
func SetProjectAccess(tx *store.Tx, p *domain.Principal, project string, in AccessConfiguration) error {
	c, err := newChecker(tx.Q, p, project)
	if err != nil {
		return err
	}
	if in.Roles == nil {
		return apierr.Validation("The `roles` property is required: a list of {id, users, groups}.")
	}
	next := assignment{users: map[int64][]int64{}, groups: map[int64][]int64{}}
	var users, groups []int64
	for _, r := range in.Roles {
		if _, ok := c.roles[r.ID]; !ok || access.IsRootType(c.roles[r.ID].Type) {
			return c.role(r.ID)
		}
		for _, u := range r.Users {
			if !slices.Contains(next.users[u], r.ID) {
				next.users[u] = append(next.users[u], r.ID)
			}
			users = append(users, u)
		}
		for _, g := range r.Groups {
			if !slices.Contains(next.groups[g], r.ID) {
				next.groups[g] = append(next.groups[g], r.ID)
			}
			groups = append(groups, g)
		}
	}
	if err := c.users(users); err != nil {
		return err
	}
	if err := c.groups(groups); err != nil {
		return err
	}
	before, err := currentAssignment(tx.Q, project)
	if err != nil {
		return err
	}
	for _, id := range union(sortedKeys(before.users), sortedKeys(next.users)) {
		if err := c.changedRoles(before.users[id], next.users[id]); err != nil {
			return err
		}
		if err := tx.SetProjectUserRoles(project, id, sorted(next.users[id]), tx.Now()); err != nil {
			return err
		}
	}
	for _, id := range union(sortedKeys(before.groups), sortedKeys(next.groups)) {
		if err := c.changedRoles(before.groups[id], next.groups[id]); err != nil {
			return err
		}
		if err := tx.SetProjectGroupRoles(project, id, sorted(next.groups[id]), p.Actor().Name, tx.Now()); err != nil {
			return err
		}
	}
	for _, m := range []map[int64][]int64{next.users, next.groups} {
		for id := range m {
			m[id] = sorted(m[id])
		}
	}
	return tx.Event(store.NewEvent{Type: "project-access-updated", Actor: p.Actor(), Project: project,
		Data: next.eventData(), PreData: before.eventData()})
}

func sorted(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

func union(a, b []int64) []int64 {
	out := slices.Clone(a)
	for _, x := range b {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// AccessAddition is POST /api/admin/projects/{projectId}/access: every
// role given to every person and group named.
type AccessAddition struct {
	Roles []int64 `json:"roles"`
	Users []struct {
		ID int64 `json:"id"`
	} `json:"users"`
	Groups []struct {
		ID int64 `json:"id"`
	} `json:"groups"`
}

// AddProjectAccess gives roles to people and groups in project as p
// (PROJECT_USER_ACCESS_WRITE there), keeping the roles they hold, with its
// event.
func AddProjectAccess(tx *store.Tx, p *domain.Principal, project string, in AccessAddition) error {
	c, err := newChecker(tx.Q, p, project)
	if err != nil {
		return err
	}
	if len(in.Roles) == 0 {
		return apierr.Validation("You can't grant access without any roles. The roles array you sent was empty.")
	}
	for _, r := range in.Roles {
		if err := c.role(r); err != nil {
			return err
		}
	}
	var users, groups []int64
	for _, u := range in.Users {
		users = append(users, u.ID)
	}
	for _, g := range in.Groups {
		groups = append(groups, g.ID)
	}
	if len(users)+len(groups) == 0 {
		return apierr.Validation("Name at least one person (`users`) or group (`groups`) to give the roles to.")
	}
	if err := c.users(users); err != nil {
		return err
	}
	if err := c.groups(groups); err != nil {
		return err
	}
	before, err := currentAssignment(tx.Q, project)
	if err != nil {
		return err
	}
	for _, id := range users {
		if err := tx.SetProjectUserRoles(project, id, union(before.users[id], in.Roles), tx.Now()); err != nil {
			return err
		}
	}
	for _, id := range groups {
		if err := tx.SetProjectGroupRoles(project, id, union(before.groups[id], in.Roles), p.Actor().Name, tx.Now()); err != nil {
			return err
		}
	}
	return tx.Event(store.NewEvent{Type: "project-access-added", Actor: p.Actor(), Project: project,
		Data: map[string]any{"roles": sorted(in.Roles), "users": sorted(users), "groups": sorted(groups)}})
}

// RolesInput is PUT …/users/{userId}/roles and …/groups/{groupId}/roles.
type RolesInput struct {
	Roles []int64 `json:"roles"`
}

// SetUserProjectRoles replaces the roles a person holds in project as p
// (none removes them), with its event.
func SetUserProjectRoles(tx *store.Tx, p *domain.Principal, project string, userID int64, roles []int64) error {
	return setMemberRoles(tx, p, project, userID, roles, false)
}

// SetGroupProjectRoles replaces the roles a group holds in project as p.
func SetGroupProjectRoles(tx *store.Tx, p *domain.Principal, project string, groupID int64, roles []int64) error {
	return setMemberRoles(tx, p, project, groupID, roles, true)
}

// RemoveUserProjectAccess takes every role in project from a person as p.
func RemoveUserProjectAccess(tx *store.Tx, p *domain.Principal, project string, userID int64) error {
	return setMemberRoles(tx, p, project, userID, nil, false)
}

// RemoveGroupProjectAccess takes every role in project from a group as p.
func RemoveGroupProjectAccess(tx *store.Tx, p *domain.Principal, project string, groupID int64) error {
	return setMemberRoles(tx, p, project, groupID, nil, true)
}

// setMemberRoles sets one person's or group's roles in project; roles nil
// means "remove" (the -deleted event) and a list (even empty) "update".
func setMemberRoles(tx *store.Tx, p *domain.Principal, project string, id int64, roles []int64, group bool) error {
	c, err := newChecker(tx.Q, p, project)
	if err != nil {
		return err
	}
	kind, key := "user", "userId"
	if group {
		kind, key = "group", "groupId"
		err = c.groups([]int64{id})
	} else {
		err = c.users([]int64{id})
	}
	if err != nil {
		if apierr.IsKind(err, apierr.KindValidation) {
			return apierr.NotFound("Could not find %s with id %d", kind, id)
		}
		return err
	}
	before, err := currentAssignment(tx.Q, project)
	if err != nil {
		return err
	}
	old := before.users[id]
	if group {
		old = before.groups[id]
	}
	next := sorted(union(nil, roles))
	if err := c.changedRoles(old, next); err != nil {
		return err
	}
	if group {
		err = tx.SetProjectGroupRoles(project, id, next, p.Actor().Name, tx.Now())
	} else {
		err = tx.SetProjectUserRoles(project, id, next, tx.Now())
	}
	if err != nil {
		return err
	}
	typ := "project-access-" + kind + "-roles-updated"
	data := map[string]any{key: id, "roles": next}
	if roles == nil {
		typ, data = "project-access-"+kind+"-roles-deleted", nil
	}
	return tx.Event(store.NewEvent{Type: typ, Actor: p.Actor(), Project: project, Data: data,
		PreData: map[string]any{key: id, "roles": sorted(old)}})
}
