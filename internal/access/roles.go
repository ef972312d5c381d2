package access

import "slices"

// Role types, as Unleash names them.
const (
	RoleTypeRoot          = "root"
	RoleTypeProject       = "project"
	RoleTypeCustomRoot    = "root-custom"
	RoleTypeCustomProject = "custom"
)

// The predefined roles' ids (Unleash's) and names.
const (
	RoleAdmin  int64 = 1
	RoleEditor int64 = 2
	RoleViewer int64 = 3
	RoleOwner  int64 = 4
	RoleMember int64 = 5

	AdminName  = "Admin"
	EditorName = "Editor"
	ViewerName = "Viewer"
	OwnerName  = "Owner"
	MemberName = "Member"
)

// IsRootType reports whether a role of type typ is a root role (given to
// people and groups everywhere) rather than a project role.
func IsRootType(typ string) bool { return typ == RoleTypeRoot || typ == RoleTypeCustomRoot }

// IsCustomType reports whether a role of type typ was made by an admin
// (and may be changed or deleted).
func IsCustomType(typ string) bool { return typ == RoleTypeCustomRoot || typ == RoleTypeCustomProject }

// changeRequestPermissions are not part of environment work. Editors and
// project Owners approve and apply other people's change requests (so an
// organization that uses only the predefined roles still has four eyes:
// one drafts, another approves); changing a protected environment without
// a change request is held by Admin alone, or given by a custom role.
var changeRequestPermissions = []string{ApproveChangeRequest, ApplyChangeRequest, SkipChangeRequest}

// reviewWork is approving and applying change requests.
var reviewWork = []string{ApproveChangeRequest, ApplyChangeRequest}

// flagWork is what working on a project's flags takes: the flag-level
// project permissions.
var flagWork = []string{CreateFeature, UpdateFeature, UpdateFeatureDependency, DeleteFeature, UpdateFeatureVariants, MoveFeature}

// environmentWork is every environment permission but the change-request
// ones.
var environmentWork = func() []string {
	var out []string
	for _, n := range namesOfType(TypeEnvironment) {
		if !slices.Contains(changeRequestPermissions, n) {
			out = append(out, n)
		}
	}
	return out
}()

// roleDef is what a role holds, compiled: root permissions, project
// permissions, environment permissions in every environment, and
// environment permissions in named environments.
type roleDef struct {
	typ     string
	root    bits
	project bits
	allEnv  bits
	env     map[string]bits
}

// predefined are the five built-in roles' permissions.
//
//   - Admin holds ADMIN, which passes every check.
//   - Editor holds the root permissions but API tokens, people, roles and
//     instance settings, and works on flags (flagWork and environmentWork)
//     in every project it can see, except that in a protected project only
//     members create flags; it approves and applies change requests
//     (reviewWork). It owns the projects it creates.
//   - Viewer holds nothing: reads need no permission.
//   - Owner holds every project permission, environmentWork and reviewWork
//     in every environment of the project.
//   - Member holds flagWork and environmentWork in every environment.
var predefined = map[int64]*roleDef{
	RoleAdmin: {typ: RoleTypeRoot},
	RoleEditor: {typ: RoleTypeRoot,
		root: setOf(UpdateApplication, CreateContextField, UpdateContextField, DeleteContextField,
			CreateProject, ReadRole, CreateSegment, UpdateSegment, DeleteSegment, CreateStrategy, UpdateStrategy, DeleteStrategy,
			CreateTagType, UpdateTagType, DeleteTagType, CreateReleaseTemplate, UpdateReleaseTemplate, DeleteReleaseTemplate),
		project: setOf(append(slices.Clone(flagWork), UpdateProjectSegment, UpdateProjectContext, ProjectUserAccessRead,
			ProjectDefaultStrategyRead, ProjectSettingsRead, ProjectChangeRequestRead)...),
		allEnv: setOf(append(slices.Clone(environmentWork), reviewWork...)...),
	},
	RoleViewer: {typ: RoleTypeRoot},
	RoleOwner:  {typ: RoleTypeProject, project: setOf(namesOfType(TypeProject)...), allEnv: setOf(append(slices.Clone(environmentWork), reviewWork...)...)},
	RoleMember: {typ: RoleTypeProject, project: setOf(flagWork...), allEnv: setOf(environmentWork...)},
}

// PredefinedPermissions lists what a predefined role holds, as role
// answers show it (environment permissions once, without an environment:
// in every environment). Admin lists ADMIN.
func PredefinedPermissions(id int64) []Grant {
	d, ok := predefined[id]
	if !ok {
		return nil
	}
	if id == RoleAdmin {
		return []Grant{{Permission: Admin}}
	}
	var out []Grant
	for _, p := range Permissions {
		if d.root.has(p.bit) || d.project.has(p.bit) || d.allEnv.has(p.bit) {
			out = append(out, Grant{Permission: p.Name})
		}
	}
	return out
}

// Grant is one permission a role holds, in one environment or (Environment
// "") in all of them.
type Grant struct {
	Permission  string
	Environment string
}

// compileRole builds a custom role's definition from its stored grants.
// Unknown names are skipped (a permission Bunting dropped), and each
// permission counts only where its type allows: root ones in custom root
// roles, project and environment ones in custom project roles.
func compileRole(typ string, grants []Grant) *roleDef {
	d := &roleDef{typ: typ}
	for _, g := range grants {
		p, ok := byName[g.Permission]
		if !ok {
			continue
		}
		switch {
		case p.Type == TypeRoot && IsRootType(typ):
			d.root.add(p.bit)
		case p.Type == TypeProject && !IsRootType(typ):
			d.project.add(p.bit)
		case p.Type == TypeEnvironment && !IsRootType(typ) && g.Environment == "":
			d.allEnv.add(p.bit)
		case p.Type == TypeEnvironment && !IsRootType(typ):
			if d.env == nil {
				d.env = map[string]bits{}
			}
			b := d.env[g.Environment]
			b.add(p.bit)
			d.env[g.Environment] = b
		}
	}
	d.project = d.project.withImplied()
	return d
}
