package access

import (
	"testing"

	"github.com/bunting-flags/bunting/internal/store"
)

// testSnapshot is the predefined roles, a custom project role that
// switches flags in development only, a custom root role that creates
// segments, and projects of each mode.
func testSnapshot() *snapshot {
	roles := map[int64]*roleDef{}
	for id, d := range predefined {
		roles[id] = d
	}
	roles[6] = compileRole(RoleTypeCustomProject, []Grant{{Permission: UpdateFeatureEnvironment, Environment: "development"}, {Permission: UpdateFeature}})
	roles[7] = compileRole(RoleTypeCustomRoot, []Grant{{Permission: CreateSegment}, {Permission: UpdateFeature}})
	roles[8] = compileRole(RoleTypeCustomProject, []Grant{{Permission: UpdateProject}})
	return &snapshot{roles: roles, modes: map[string]string{"secret": ModePrivate, "guarded": ModeProtected}}
}

func TestGrantsDecide(t *testing.T) {
	snap := testSnapshot()
	type check struct {
		perm, project, env string
		want               bool
	}
	for _, tc := range []struct {
		name   string
		access store.UserAccess
		checks []check
	}{
		{"admin", store.UserAccess{RootRole: RoleAdmin}, []check{
			{Admin, "", "", true}, {CreateFeature, "secret", "", true}, {SkipChangeRequest, "guarded", "production", true}}},
		{"editor", store.UserAccess{RootRole: RoleEditor}, []check{
			{CreateSegment, "", "", true}, {CreateClientToken, "", "", false}, {Admin, "", "", false},
			{CreateFeature, "default", "", true}, {CreateFeature, "guarded", "", false}, {UpdateFeature, "guarded", "", true},
			{UpdateFeatureEnvironment, "guarded", "production", true}, {UpdateFeature, "secret", "", false},
			{UpdateProject, "default", "", false}, {ProjectUserAccessWrite, "default", "", false}, {SkipChangeRequest, "default", "production", false},
			{ApproveChangeRequest, "default", "production", true}, {ApplyChangeRequest, "default", "production", true}}},
		{"viewer", store.UserAccess{RootRole: RoleViewer}, []check{
			{UpdateFeature, "default", "", false}, {CreateSegment, "", "", false}, {UpdateFeatureEnvironment, "default", "development", false}}},
		{"viewer, member of secret", store.UserAccess{RootRole: RoleViewer, Projects: []store.ProjectRole{{Project: "secret", RoleID: RoleMember}}}, []check{
			{CreateFeature, "secret", "", true}, {UpdateFeatureEnvironment, "secret", "production", true}, {UpdateProject, "secret", "", false},
			{CreateFeature, "default", "", false}, {ApproveChangeRequest, "secret", "production", false}}},
		{"viewer, owner of guarded", store.UserAccess{RootRole: RoleViewer, Projects: []store.ProjectRole{{Project: "guarded", RoleID: RoleOwner}}}, []check{
			{CreateFeature, "guarded", "", true}, {UpdateProject, "guarded", "", true}, {ProjectUserAccessWrite, "guarded", "", true},
			{ApproveChangeRequest, "guarded", "production", true}, {SkipChangeRequest, "guarded", "production", false}}},
		{"custom project role in development only", store.UserAccess{RootRole: RoleViewer, Projects: []store.ProjectRole{{Project: "default", RoleID: 6}}}, []check{
			{UpdateFeatureEnvironment, "default", "development", true}, {UpdateFeatureEnvironment, "default", "production", false},
			{UpdateFeatureEnvironment, "default", "", true}, {UpdateFeature, "default", "", true}, {UpdateFeature, "other", "", false}}},
		{"custom root role: root permissions only", store.UserAccess{RootRole: 7}, []check{
			{CreateSegment, "", "", true}, {UpdateFeature, "default", "", false}, {CreateProject, "", "", false}}},
		{"group gives Editor", store.UserAccess{RootRole: RoleViewer, GroupRootRoles: []int64{RoleEditor}}, []check{
			{UpdateFeature, "default", "", true}, {CreateSegment, "", "", true}}},
		{"UPDATE_PROJECT includes access and settings", store.UserAccess{RootRole: RoleViewer, Projects: []store.ProjectRole{{Project: "default", RoleID: 8}}}, []check{
			{ProjectUserAccessWrite, "default", "", true}, {ProjectSettingsWrite, "default", "", true}, {DeleteProject, "default", "", false}}},
		{"a root role given as a project role gives nothing", store.UserAccess{RootRole: RoleViewer, Projects: []store.ProjectRole{{Project: "default", RoleID: RoleAdmin}}}, []check{
			{UpdateFeature, "default", "", false}, {Admin, "", "", false}}},
	} {
		g := compile(snap, tc.access)
		for _, c := range tc.checks {
			if got := g.Can(c.perm, c.project, c.env); got != c.want {
				t.Errorf("%s: Can(%s, %q, %q) = %v, want %v", tc.name, c.perm, c.project, c.env, got, c.want)
			}
		}
	}
}

func TestPrivateProjectsAreHidden(t *testing.T) {
	snap := testSnapshot()
	editor := compile(snap, store.UserAccess{RootRole: RoleEditor})
	member := compile(snap, store.UserAccess{RootRole: RoleViewer, Projects: []store.ProjectRole{{Project: "secret", RoleID: RoleMember}}})
	admin := compile(snap, store.UserAccess{RootRole: RoleAdmin})
	if editor.CanSeeProject("secret") || !editor.CanSeeProject("guarded") || !editor.CanSeeProject("default") {
		t.Errorf("editor sees: secret %v, guarded %v", editor.CanSeeProject("secret"), editor.CanSeeProject("guarded"))
	}
	if h := editor.HiddenProjects(); len(h) != 1 || h[0] != "secret" {
		t.Errorf("editor's hidden projects: %v", h)
	}
	if !member.CanSeeProject("secret") || len(member.HiddenProjects()) != 0 || !admin.CanSeeProject("secret") || len(admin.HiddenProjects()) != 0 {
		t.Errorf("member or admin does not see the private project")
	}
	if p := member.Projects(); len(p) != 1 || p[0] != "secret" {
		t.Errorf("member's projects: %v", p)
	}
}

func TestRolesOnlyHoldPermissionsOfTheirKind(t *testing.T) {
	root := compileRole(RoleTypeCustomRoot, []Grant{{Permission: CreateFeature}, {Permission: CreateSegment}, {Permission: "NOT_A_PERMISSION"}})
	if root.project != (bits{}) || root.root != setOf(CreateSegment) {
		t.Errorf("custom root role compiled to %+v", root)
	}
	proj := compileRole(RoleTypeCustomProject, []Grant{{Permission: CreateSegment}, {Permission: UpdateFeatureStrategy, Environment: "production"}})
	if proj.root != (bits{}) || !proj.env["production"].has(byName[UpdateFeatureStrategy].bit) || !proj.allEnv.empty() {
		t.Errorf("custom project role compiled to %+v", proj)
	}
}
