package access

import (
	"slices"
	"sort"
)

// Project modes.
const (
	ModeOpen      = "open"
	ModeProtected = "protected"
	ModePrivate   = "private"
)

// Grants is what one principal may do: compiled once from its root role,
// its groups' root roles and the project roles it holds directly or
// through groups, with the project modes known when it was compiled. A
// Grants is never changed after it is built, so requests share it.
type Grants struct {
	admin bool
	root  bits
	// everywhere and everywhereEnv are the project and environment
	// permissions root roles give in every project the principal can see
	// (Editor's flag work).
	everywhere, everywhereEnv bits
	projects                  map[string]*projectGrants
	modes                     map[string]string
}

// projectGrants is what the roles held in one project give.
type projectGrants struct {
	perms  bits
	allEnv bits
	// anyEnv is allEnv with every env entry: held in some environment.
	anyEnv bits
	env    map[string]bits
	roles  []int64
}

var (
	// Everything is what admin API tokens may do.
	Everything = &Grants{admin: true}
	// Nothing is what a principal without roles may do.
	Nothing = &Grants{}
)

// ForRootRole is what a predefined root role gives on its own, without
// groups, project roles or knowledge of project modes: for principals
// built outside a request (tests, tools). A custom role gives nothing
// here.
func ForRootRole(id int64) *Grants {
	if g, ok := rootOnly[id]; ok {
		return g
	}
	return Nothing
}

// rootOnly are ForRootRole's answers for the predefined root roles.
var rootOnly = func() map[int64]*Grants {
	m := map[int64]*Grants{}
	for _, id := range []int64{RoleAdmin, RoleEditor, RoleViewer} {
		g := &Grants{}
		g.addRoot(predefined, id)
		m[id] = g
	}
	return m
}()

func (g *Grants) addRoot(roles map[int64]*roleDef, id int64) {
	d := roles[id]
	if d == nil || !IsRootType(d.typ) {
		return
	}
	if id == RoleAdmin {
		g.admin = true
	}
	g.root = g.root.or(d.root)
	g.everywhere = g.everywhere.or(d.project)
	g.everywhereEnv = g.everywhereEnv.or(d.allEnv)
}

// IsAdmin reports whether the principal holds ADMIN.
func (g *Grants) IsAdmin() bool { return g != nil && g.admin }

// Can reports whether the principal holds perm in project and env. Root
// permissions ignore both; project permissions need project (""
// asks about the permission outside any project: root roles only); an
// environment permission with env "" asks whether it is held in some
// environment (for showing controls, not for deciding a change).
//
// A private project gives nothing to someone who holds no role in it; a
// protected project lets only those who hold a role in it create flags.
func (g *Grants) Can(perm, project, env string) bool {
	if g == nil {
		return false
	}
	if g.admin {
		return true
	}
	p, ok := byName[perm]
	if !ok {
		return false
	}
	if p.Type == TypeRoot {
		return g.root.has(p.bit)
	}
	pg := g.projects[project]
	mode := g.modes[project]
	if pg == nil && mode == ModePrivate {
		return false
	}
	if pg != nil {
		switch {
		case p.Type == TypeProject && pg.perms.has(p.bit):
			return true
		case p.Type == TypeEnvironment && (pg.allEnv.has(p.bit) || pg.env[env].has(p.bit) || (env == "" && pg.anyEnv.has(p.bit))):
			return true
		}
	}
	if p.Type == TypeProject {
		if p.Name == CreateFeature && pg == nil && mode == ModeProtected {
			return false
		}
		return g.everywhere.has(p.bit)
	}
	return g.everywhereEnv.has(p.bit)
}

// CanSeeProject reports whether the project and what is in it (flags,
// events, API tokens) are visible: every project but private ones, which
// only their members and admins see.
func (g *Grants) CanSeeProject(project string) bool {
	if g == nil {
		return false
	}
	return g.admin || g.modes[project] != ModePrivate || g.projects[project] != nil
}

// HiddenProjects lists the private projects the principal cannot see, in
// order (none for admins): for queries that leave them out.
func (g *Grants) HiddenProjects() []string {
	if g == nil || g.admin {
		return nil
	}
	var out []string
	for id, mode := range g.modes {
		if mode == ModePrivate && g.projects[id] == nil {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// IsMember reports whether the principal holds a role in project,
// directly or through a group.
func (g *Grants) IsMember(project string) bool { return g != nil && g.projects[project] != nil }

// Projects lists the projects the principal holds a role in, in order.
func (g *Grants) Projects() []string {
	if g == nil {
		return []string{}
	}
	out := make([]string, 0, len(g.projects))
	for id := range g.projects {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// RolesIn lists the ids of the roles held in project, directly or through
// groups, in order.
func (g *Grants) RolesIn(project string) []int64 {
	if g == nil || g.projects[project] == nil {
		return []int64{}
	}
	return slices.Clone(g.projects[project].roles)
}

// Held lists the names of the permissions held in project and env (as
// Can answers them): for pages that show only what the person may
// change. Admins get ADMIN first.
func (g *Grants) Held(project, env string) []string {
	out := []string{}
	if g.IsAdmin() {
		out = append(out, Admin)
	}
	for _, p := range Permissions {
		if g.Can(p.Name, project, env) {
			out = append(out, p.Name)
		}
	}
	return out
}
