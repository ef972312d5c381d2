package rbac

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/access"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// GroupView is a group as the groups routes answer it (Unleash's
// groupSchema): rootRole is a role id or null, users its members with
// when they joined, projects where it holds a role.
type GroupView struct {
	ID          int64         `json:"id"`
	Name        string        `json:"name"`
	Description *string       `json:"description"`
	MappingsSSO []string      `json:"mappingsSSO"`
	RootRole    *int64        `json:"rootRole"`
	CreatedBy   *string       `json:"createdBy"`
	CreatedAt   time.Time     `json:"createdAt"`
	Users       []GroupMember `json:"users"`
	Projects    []string      `json:"projects"`
	UserCount   int           `json:"userCount"`
}

// GroupMember is one member as a group lists them (Unleash's
// groupUserModelSchema).
type GroupMember struct {
	JoinedAt  time.Time       `json:"joinedAt"`
	CreatedBy *string         `json:"createdBy"`
	User      domain.UserView `json:"user"`
}

// groupsView builds the views of groups from one read of every
// membership, the members and every project role of groups.
func groupsView(q store.Q, groups []store.Group) ([]GroupView, error) {
	members, err := q.GroupMembers()
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, m := range members {
		ids = append(ids, m.UserID)
	}
	users, err := q.UsersByID(ids)
	if err != nil {
		return nil, err
	}
	byID := map[int64]store.User{}
	for _, u := range users {
		byID[u.ID] = u
	}
	roles, err := q.ProjectGroupRoles("")
	if err != nil {
		return nil, err
	}
	out := make([]GroupView, 0, len(groups))
	for _, g := range groups {
		v := GroupView{ID: g.ID, Name: g.Name, Description: g.Description, MappingsSSO: g.MappingsSSO, RootRole: g.RootRole,
			CreatedBy: g.CreatedBy, CreatedAt: g.CreatedAt, Users: []GroupMember{}, Projects: []string{}}
		for _, m := range members {
			if u, ok := byID[m.UserID]; ok && m.GroupID == g.ID {
				v.Users = append(v.Users, GroupMember{JoinedAt: m.JoinedAt, CreatedBy: m.CreatedBy, User: viewUser(u)})
			}
		}
		for _, r := range roles {
			if r.GroupID == g.ID && !slices.Contains(v.Projects, r.Project) {
				v.Projects = append(v.Projects, r.Project)
			}
		}
		v.UserCount = len(v.Users)
		out = append(out, v)
	}
	return out, nil
}

// viewUser is a member as groups and project access show them.
func viewUser(u store.User) domain.UserView {
	v := domain.ViewAccount(store.Account{User: u})
	if u.IsService {
		v.AccountType = "Service Account"
	}
	return v
}

// Groups lists every group with its members, by name.
func Groups(q store.Q) ([]GroupView, error) {
	groups, err := q.Groups()
	if err != nil {
		return nil, err
	}
	return groupsView(q, groups)
}

// Group returns one group with its members.
func Group(q store.Q, id int64) (GroupView, error) {
	g, err := q.Group(id)
	if err != nil {
		return GroupView{}, err
	}
	v, err := groupsView(q, []store.Group{g})
	if err != nil {
		return GroupView{}, err
	}
	return v[0], nil
}

// GroupInput is a group as POST and PUT /api/admin/groups write it
// (Unleash's createGroupSchema). RootRole is a root role's id or null;
// Users, when present, is the whole member list.
type GroupInput struct {
	Name        string          `json:"name"`
	Description *string         `json:"description"`
	MappingsSSO []string        `json:"mappingsSSO"`
	RootRole    json.RawMessage `json:"rootRole"`
	Users       *[]MemberRef    `json:"users"`
}

// MemberRef names a member of a group being written: {"user": {"id": 7}}.
type MemberRef struct {
	User struct {
		ID int64 `json:"id"`
	} `json:"user"`
}

// Members names people by id as a group's member list.
func Members(ids ...int64) *[]MemberRef {
	out := make([]MemberRef, len(ids))
	for i, id := range ids {
		out[i].User.ID = id
	}
	return &out
}

// validate checks the group's fields and returns the group and its member
// ids (nil when Users is absent).
func (in GroupInput) validate(q store.Q) (store.Group, []int64, error) {
	g := store.Group{Name: strings.TrimSpace(in.Name), Description: in.Description, MappingsSSO: []string{}}
	if g.Name == "" || len(g.Name) > 100 {
		return g, nil, apierr.Validation("Group name cannot be empty: the `name` property needs 1 to 100 characters.")
	}
	if g.Description != nil && *g.Description == "" {
		g.Description = nil
	}
	for _, m := range in.MappingsSSO {
		m = strings.TrimSpace(m)
		if m == "" {
			return g, nil, apierr.Validation("The `mappingsSSO` property holds SSO group names; an empty one was sent.")
		}
		if !slices.Contains(g.MappingsSSO, m) {
			g.MappingsSSO = append(g.MappingsSSO, m)
		}
	}
	if len(in.RootRole) > 0 && string(in.RootRole) != "null" {
		var id float64
		if err := json.Unmarshal(in.RootRole, &id); err != nil || id != float64(int64(id)) {
			return g, nil, apierr.Validation("The `rootRole` property must be a root role's id or null. You sent %s.", string(in.RootRole))
		}
		r, err := q.Role(int64(id))
		if apierr.IsKind(err, apierr.KindNotFound) || (err == nil && !access.IsRootType(r.Type)) {
			return g, nil, apierr.Validation("The `rootRole` property must be a root role's id (1 Admin, 2 Editor, 3 Viewer or a custom root role) or null. You sent %s.", string(in.RootRole))
		}
		if err != nil {
			return g, nil, err
		}
		g.RootRole = &r.ID
	}
	if in.Users == nil {
		return g, nil, nil
	}
	members := []int64{}
	for _, u := range *in.Users {
		if !slices.Contains(members, u.User.ID) {
			members = append(members, u.User.ID)
		}
	}
	found, err := q.UsersByID(members)
	if err != nil {
		return g, nil, err
	}
	if len(found) != len(members) {
		for _, id := range members {
			if !slices.ContainsFunc(found, func(u store.User) bool { return u.ID == id }) {
				return g, nil, apierr.Validation("The user with id %d does not exist.", id)
			}
		}
	}
	return g, members, nil
}

// groupEventData is what group events record: the group with its members'
// ids.
func groupEventData(g store.Group, members []int64) map[string]any {
	return map[string]any{"id": g.ID, "name": g.Name, "description": g.Description, "mappingsSSO": g.MappingsSSO,
		"rootRole": g.RootRole, "users": members}
}

func memberIDs(q store.Q, id int64) ([]int64, error) {
	ms, err := q.MembersOfGroup(id)
	if err != nil {
		return nil, err
	}
	out := make([]int64, 0, len(ms))
	for _, m := range ms {
		out = append(out, m.UserID)
	}
	slices.Sort(out)
	return out, nil
}

// CreateGroup creates a group with its members as p (ADMIN), with its
// event.
func CreateGroup(tx *store.Tx, p *domain.Principal, in GroupInput) (GroupView, error) {
	if err := p.Require(domain.PermAdmin, "", ""); err != nil {
		return GroupView{}, err
	}
	g, members, err := in.validate(tx.Q)
	if err != nil {
		return GroupView{}, err
	}
	by := p.Actor().Name
	g.CreatedBy, g.CreatedAt = &by, tx.Now()
	if g.ID, err = tx.InsertGroup(g); err != nil {
		return GroupView{}, err
	}
	for _, id := range members {
		if err := tx.AddGroupMember(g.ID, id, by, tx.Now()); err != nil {
			return GroupView{}, err
		}
	}
	slices.Sort(members)
	if err := tx.Event(store.NewEvent{Type: "group-created", Actor: p.Actor(), Data: groupEventData(g, nonNil(members))}); err != nil {
		return GroupView{}, err
	}
	return Group(tx.Q, g.ID)
}

func nonNil(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// UpdateGroup replaces a group's name, description, SSO mappings, root
// role and (when users is sent) members as p (ADMIN), with its event.
func UpdateGroup(tx *store.Tx, p *domain.Principal, id int64, in GroupInput) (GroupView, error) {
	if err := p.Require(domain.PermAdmin, "", ""); err != nil {
		return GroupView{}, err
	}
	old, err := tx.Group(id)
	if err != nil {
		return GroupView{}, err
	}
	g, members, err := in.validate(tx.Q)
	if err != nil {
		return GroupView{}, err
	}
	g.ID, g.CreatedBy, g.CreatedAt = id, old.CreatedBy, old.CreatedAt
	before, err := memberIDs(tx.Q, id)
	if err != nil {
		return GroupView{}, err
	}
	if err := tx.UpdateGroup(g); err != nil {
		return GroupView{}, err
	}
	after := before
	if members != nil {
		for _, uid := range before {
			if !slices.Contains(members, uid) {
				if err := tx.RemoveGroupMember(id, uid); err != nil {
					return GroupView{}, err
				}
			}
		}
		for _, uid := range members {
			if !slices.Contains(before, uid) {
				if err := tx.AddGroupMember(id, uid, p.Actor().Name, tx.Now()); err != nil {
					return GroupView{}, err
				}
			}
		}
		after = nonNil(slices.Sorted(slices.Values(members)))
	}
	if err := tx.Event(store.NewEvent{Type: "group-updated", Actor: p.Actor(), Data: groupEventData(g, after), PreData: groupEventData(old, before)}); err != nil {
		return GroupView{}, err
	}
	return Group(tx.Q, id)
}

// DeleteGroup deletes a group (its memberships and project roles go with
// it) as p (ADMIN), with its event. A group that does not exist is
// already deleted, as Unleash answers.
func DeleteGroup(tx *store.Tx, p *domain.Principal, id int64) error {
	if err := p.Require(domain.PermAdmin, "", ""); err != nil {
		return err
	}
	old, err := tx.Group(id)
	if apierr.IsKind(err, apierr.KindNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	before, err := memberIDs(tx.Q, id)
	if err != nil {
		return err
	}
	if err := tx.DeleteGroup(id); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: "group-deleted", Actor: p.Actor(), PreData: groupEventData(old, before)})
}

// SSOSync marks memberships made by single sign-on group syncing, so that
// a later sign-in removes only those.
const SSOSync = "SSO"

// SyncSSOGroups makes a person's memberships match the groups their
// identity provider names (claims): they join every group whose SSO
// mappings name one of the claims and leave every group they joined this
// way whose mappings no longer match (memberships an admin made stay).
// Each join and leave writes group-user-added or group-user-removed, as
// the system. It is for the sign-in flow (internal/sso), which has no
// acting principal.
func SyncSSOGroups(tx *store.Tx, userID int64, claims []string) error {
	groups, err := tx.Groups()
	if err != nil {
		return err
	}
	mine, err := tx.GroupsOfUser(userID)
	if err != nil {
		return err
	}
	for _, g := range groups {
		matches := slices.ContainsFunc(g.MappingsSSO, func(m string) bool { return slices.Contains(claims, m) })
		i := slices.IndexFunc(mine, func(m store.GroupMember) bool { return m.GroupID == g.ID })
		switch {
		case matches && i < 0:
			if err := tx.AddGroupMember(g.ID, userID, SSOSync, tx.Now()); err != nil {
				return err
			}
			if err := tx.Event(store.NewEvent{Type: "group-user-added", Actor: domain.SystemActor, Data: map[string]any{"groupId": g.ID, "userId": userID}}); err != nil {
				return err
			}
		case !matches && i >= 0 && mine[i].CreatedBy != nil && *mine[i].CreatedBy == SSOSync:
			if err := tx.RemoveGroupMember(g.ID, userID); err != nil {
				return err
			}
			if err := tx.Event(store.NewEvent{Type: "group-user-removed", Actor: domain.SystemActor, PreData: map[string]any{"groupId": g.ID, "userId": userID}}); err != nil {
				return err
			}
		}
	}
	return nil
}
