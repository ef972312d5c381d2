// Package access decides who may do what. It holds the one list of
// permissions (Unleash's names), the five predefined roles and what each
// holds, and Grants: a person's root role, groups and project roles
// compiled into bit sets once and cached, so that every permission check —
// the admin API's route check, the domain operations' own checks, the web
// UI's controls, signal actions, the playground, search and the event log —
// asks Grants.Can or Grants.CanSeeProject and gets the same answer.
//
// Roles, groups and project access are changed by internal/rbac; this
// package only reads them (store.UserAccess, store.Roles) and decides.
package access

// Permission types, as Unleash names them: root permissions apply
// everywhere, project permissions in one project, environment
// permissions in one project and one environment.
const (
	TypeRoot        = "root"
	TypeProject     = "project"
	TypeEnvironment = "environment"
)

// Permission names (Unleash's, so 403 bodies and Terraform role
// definitions read the same).
const (
	Admin = "ADMIN"

	CreateAddon             = "CREATE_ADDON"
	UpdateAddon             = "UPDATE_ADDON"
	DeleteAddon             = "DELETE_ADDON"
	UpdateClientToken       = "UPDATE_CLIENT_API_TOKEN"
	CreateClientToken       = "CREATE_CLIENT_API_TOKEN"
	DeleteClientToken       = "DELETE_CLIENT_API_TOKEN"
	ReadClientToken         = "READ_CLIENT_API_TOKEN"
	UpdateFrontendToken     = "UPDATE_FRONTEND_API_TOKEN"
	CreateFrontendToken     = "CREATE_FRONTEND_API_TOKEN"
	DeleteFrontendToken     = "DELETE_FRONTEND_API_TOKEN"
	ReadFrontendToken       = "READ_FRONTEND_API_TOKEN"
	UpdateApplication       = "UPDATE_APPLICATION"
	CreateContextField      = "CREATE_CONTEXT_FIELD"
	UpdateContextField      = "UPDATE_CONTEXT_FIELD"
	DeleteContextField      = "DELETE_CONTEXT_FIELD"
	CreateProject           = "CREATE_PROJECT"
	ReadRole                = "READ_ROLE"
	CreateSegment           = "CREATE_SEGMENT"
	UpdateSegment           = "UPDATE_SEGMENT"
	DeleteSegment           = "DELETE_SEGMENT"
	CreateStrategy          = "CREATE_STRATEGY"
	UpdateStrategy          = "UPDATE_STRATEGY"
	DeleteStrategy          = "DELETE_STRATEGY"
	CreateTagType           = "CREATE_TAG_TYPE"
	UpdateTagType           = "UPDATE_TAG_TYPE"
	DeleteTagType           = "DELETE_TAG_TYPE"
	CreateReleaseTemplate   = "RELEASE_PLAN_TEMPLATE_CREATE"
	UpdateReleaseTemplate   = "RELEASE_PLAN_TEMPLATE_UPDATE"
	DeleteReleaseTemplate   = "RELEASE_PLAN_TEMPLATE_DELETE"
	ReadLogs                = "READ_LOGS"
	UpdateMaintenanceMode   = "UPDATE_MAINTENANCE_MODE"
	UpdateInstanceBanners   = "UPDATE_INSTANCE_BANNERS"
	UpdateCORS              = "UPDATE_CORS"
	UpdateAuthConfiguration = "UPDATE_AUTH_CONFIGURATION"

	CreateFeature                = "CREATE_FEATURE"
	UpdateFeature                = "UPDATE_FEATURE"
	UpdateFeatureDependency      = "UPDATE_FEATURE_DEPENDENCY"
	DeleteFeature                = "DELETE_FEATURE"
	UpdateFeatureVariants        = "UPDATE_FEATURE_VARIANTS"
	MoveFeature                  = "MOVE_FEATURE_TOGGLE"
	UpdateProjectContext         = "UPDATE_PROJECT_CONTEXT"
	UpdateProjectSegment         = "UPDATE_PROJECT_SEGMENT"
	UpdateProjectReleaseTemplate = "UPDATE_PROJECT_RELEASE_TEMPLATE"
	UpdateProject                = "UPDATE_PROJECT"
	ProjectUserAccessRead        = "PROJECT_USER_ACCESS_READ"
	ProjectUserAccessWrite       = "PROJECT_USER_ACCESS_WRITE"
	ProjectDefaultStrategyRead   = "PROJECT_DEFAULT_STRATEGY_READ"
	ProjectDefaultStrategyWrite  = "PROJECT_DEFAULT_STRATEGY_WRITE"
	ProjectSettingsRead          = "PROJECT_SETTINGS_READ"
	ProjectSettingsWrite         = "PROJECT_SETTINGS_WRITE"
	DeleteProject                = "DELETE_PROJECT"
	ReadProjectToken             = "READ_PROJECT_API_TOKEN"
	CreateProjectToken           = "CREATE_PROJECT_API_TOKEN"
	DeleteProjectToken           = "DELETE_PROJECT_API_TOKEN"
	ProjectChangeRequestRead     = "PROJECT_CHANGE_REQUEST_READ"
	ProjectChangeRequestWrite    = "PROJECT_CHANGE_REQUEST_WRITE"

	CreateFeatureStrategy    = "CREATE_FEATURE_STRATEGY"
	UpdateFeatureStrategy    = "UPDATE_FEATURE_STRATEGY"
	DeleteFeatureStrategy    = "DELETE_FEATURE_STRATEGY"
	UpdateFeatureEnvironment = "UPDATE_FEATURE_ENVIRONMENT"
	UpdateEnvVariants        = "UPDATE_FEATURE_ENVIRONMENT_VARIANTS"
	ApproveChangeRequest     = "APPROVE_CHANGE_REQUEST"
	ApplyChangeRequest       = "APPLY_CHANGE_REQUEST"
	SkipChangeRequest        = "SKIP_CHANGE_REQUEST"
)

// Permission is one permission a role may hold. ID is stable (new
// permissions are added at the end) and is what GET /api/admin/permissions
// answers; roles store and name permissions by Name.
type Permission struct {
	ID          int    `json:"id"`
	Name        string `json:"name"`
	DisplayName string `json:"displayName"`
	Type        string `json:"type"`
	// Category groups permissions on the roles screen.
	Category string `json:"-"`
	// ImpliedBy is a project permission that includes this one (holding
	// UPDATE_PROJECT includes reading and changing the project's access,
	// settings and default strategies, as in Unleash).
	ImpliedBy string `json:"-"`
	bit       int
}

// Permissions is every permission a role may hold, root ones first, then
// project ones, then environment ones. ADMIN is not in it: only the
// predefined Admin role holds it.
var Permissions = []Permission{
	{ID: 1, Name: CreateAddon, DisplayName: "Create integrations", Type: TypeRoot, Category: "Integrations"},
	{ID: 2, Name: UpdateAddon, DisplayName: "Update integrations", Type: TypeRoot, Category: "Integrations"},
	{ID: 3, Name: DeleteAddon, DisplayName: "Delete integrations", Type: TypeRoot, Category: "Integrations"},
	{ID: 4, Name: ReadClientToken, DisplayName: "Read backend API tokens", Type: TypeRoot, Category: "API tokens"},
	{ID: 5, Name: CreateClientToken, DisplayName: "Create backend API tokens", Type: TypeRoot, Category: "API tokens"},
	{ID: 6, Name: UpdateClientToken, DisplayName: "Update backend API tokens", Type: TypeRoot, Category: "API tokens"},
	{ID: 7, Name: DeleteClientToken, DisplayName: "Delete backend API tokens", Type: TypeRoot, Category: "API tokens"},
	{ID: 8, Name: ReadFrontendToken, DisplayName: "Read frontend API tokens", Type: TypeRoot, Category: "API tokens"},
	{ID: 9, Name: CreateFrontendToken, DisplayName: "Create frontend API tokens", Type: TypeRoot, Category: "API tokens"},
	{ID: 10, Name: UpdateFrontendToken, DisplayName: "Update frontend API tokens", Type: TypeRoot, Category: "API tokens"},
	{ID: 11, Name: DeleteFrontendToken, DisplayName: "Delete frontend API tokens", Type: TypeRoot, Category: "API tokens"},
	{ID: 12, Name: UpdateApplication, DisplayName: "Update applications", Type: TypeRoot, Category: "Applications"},
	{ID: 13, Name: CreateContextField, DisplayName: "Create context fields", Type: TypeRoot, Category: "Context fields"},
	{ID: 14, Name: UpdateContextField, DisplayName: "Update context fields", Type: TypeRoot, Category: "Context fields"},
	{ID: 15, Name: DeleteContextField, DisplayName: "Delete context fields", Type: TypeRoot, Category: "Context fields"},
	{ID: 16, Name: CreateProject, DisplayName: "Create projects", Type: TypeRoot, Category: "Projects"},
	{ID: 17, Name: ReadRole, DisplayName: "Read roles", Type: TypeRoot, Category: "Roles"},
	{ID: 18, Name: CreateSegment, DisplayName: "Create segments", Type: TypeRoot, Category: "Segments"},
	{ID: 19, Name: UpdateSegment, DisplayName: "Update segments", Type: TypeRoot, Category: "Segments"},
	{ID: 20, Name: DeleteSegment, DisplayName: "Delete segments", Type: TypeRoot, Category: "Segments"},
	{ID: 21, Name: CreateStrategy, DisplayName: "Create strategy types", Type: TypeRoot, Category: "Strategy types"},
	{ID: 22, Name: UpdateStrategy, DisplayName: "Update strategy types", Type: TypeRoot, Category: "Strategy types"},
	{ID: 23, Name: DeleteStrategy, DisplayName: "Delete strategy types", Type: TypeRoot, Category: "Strategy types"},
	{ID: 24, Name: CreateTagType, DisplayName: "Create tag types", Type: TypeRoot, Category: "Tag types"},
	{ID: 25, Name: UpdateTagType, DisplayName: "Update tag types", Type: TypeRoot, Category: "Tag types"},
	{ID: 26, Name: DeleteTagType, DisplayName: "Delete tag types", Type: TypeRoot, Category: "Tag types"},
	{ID: 27, Name: CreateReleaseTemplate, DisplayName: "Create release templates", Type: TypeRoot, Category: "Release templates"},
	{ID: 28, Name: UpdateReleaseTemplate, DisplayName: "Update release templates", Type: TypeRoot, Category: "Release templates"},
	{ID: 29, Name: DeleteReleaseTemplate, DisplayName: "Delete release templates", Type: TypeRoot, Category: "Release templates"},
	{ID: 30, Name: ReadLogs, DisplayName: "Read server logs", Type: TypeRoot, Category: "Instance"},
	{ID: 31, Name: UpdateMaintenanceMode, DisplayName: "Switch maintenance mode", Type: TypeRoot, Category: "Instance"},
	{ID: 32, Name: UpdateInstanceBanners, DisplayName: "Change banners", Type: TypeRoot, Category: "Instance"},
	{ID: 33, Name: UpdateCORS, DisplayName: "Change CORS origins", Type: TypeRoot, Category: "Instance"},
	{ID: 34, Name: UpdateAuthConfiguration, DisplayName: "Change sign-in settings", Type: TypeRoot, Category: "Authentication"},

	{ID: 40, Name: CreateFeature, DisplayName: "Create flags", Type: TypeProject, Category: "Flags"},
	{ID: 41, Name: UpdateFeature, DisplayName: "Update flags", Type: TypeProject, Category: "Flags"},
	{ID: 42, Name: UpdateFeatureDependency, DisplayName: "Change flag dependencies", Type: TypeProject, Category: "Flags"},
	{ID: 43, Name: DeleteFeature, DisplayName: "Archive and delete flags", Type: TypeProject, Category: "Flags"},
	{ID: 44, Name: UpdateFeatureVariants, DisplayName: "Change flag variants", Type: TypeProject, Category: "Flags"},
	{ID: 45, Name: MoveFeature, DisplayName: "Move flags to another project", Type: TypeProject, Category: "Flags"},
	{ID: 46, Name: UpdateProjectContext, DisplayName: "Change the project's context fields", Type: TypeProject, Category: "Flags"},
	{ID: 47, Name: UpdateProjectSegment, DisplayName: "Change the project's segments", Type: TypeProject, Category: "Flags"},
	{ID: 48, Name: UpdateProjectReleaseTemplate, DisplayName: "Change the project's release templates", Type: TypeProject, Category: "Flags"},
	{ID: 49, Name: UpdateProject, DisplayName: "Update the project", Type: TypeProject, Category: "Project settings"},
	{ID: 50, Name: ProjectUserAccessRead, DisplayName: "See who has access", Type: TypeProject, Category: "Project settings", ImpliedBy: UpdateProject},
	{ID: 51, Name: ProjectUserAccessWrite, DisplayName: "Change who has access", Type: TypeProject, Category: "Project settings", ImpliedBy: UpdateProject},
	{ID: 52, Name: ProjectDefaultStrategyRead, DisplayName: "Read default strategies", Type: TypeProject, Category: "Project settings", ImpliedBy: UpdateProject},
	{ID: 53, Name: ProjectDefaultStrategyWrite, DisplayName: "Change default strategies", Type: TypeProject, Category: "Project settings", ImpliedBy: UpdateProject},
	{ID: 54, Name: ProjectSettingsRead, DisplayName: "Read project settings", Type: TypeProject, Category: "Project settings", ImpliedBy: UpdateProject},
	{ID: 55, Name: ProjectSettingsWrite, DisplayName: "Change project settings", Type: TypeProject, Category: "Project settings", ImpliedBy: UpdateProject},
	{ID: 56, Name: DeleteProject, DisplayName: "Delete the project", Type: TypeProject, Category: "Project settings"},
	{ID: 57, Name: ReadProjectToken, DisplayName: "Read the project's API tokens", Type: TypeProject, Category: "Project API tokens"},
	{ID: 58, Name: CreateProjectToken, DisplayName: "Create the project's API tokens", Type: TypeProject, Category: "Project API tokens"},
	{ID: 59, Name: DeleteProjectToken, DisplayName: "Delete the project's API tokens", Type: TypeProject, Category: "Project API tokens"},
	{ID: 60, Name: ProjectChangeRequestRead, DisplayName: "Read change request settings", Type: TypeProject, Category: "Change requests", ImpliedBy: UpdateProject},
	{ID: 61, Name: ProjectChangeRequestWrite, DisplayName: "Change change request settings", Type: TypeProject, Category: "Change requests", ImpliedBy: UpdateProject},

	{ID: 70, Name: CreateFeatureStrategy, DisplayName: "Add strategies", Type: TypeEnvironment, Category: "Environment"},
	{ID: 71, Name: UpdateFeatureStrategy, DisplayName: "Change strategies", Type: TypeEnvironment, Category: "Environment"},
	{ID: 72, Name: DeleteFeatureStrategy, DisplayName: "Remove strategies", Type: TypeEnvironment, Category: "Environment"},
	{ID: 73, Name: UpdateFeatureEnvironment, DisplayName: "Switch flags on and off", Type: TypeEnvironment, Category: "Environment"},
	{ID: 74, Name: UpdateEnvVariants, DisplayName: "Change variants", Type: TypeEnvironment, Category: "Environment"},
	{ID: 75, Name: ApproveChangeRequest, DisplayName: "Approve change requests", Type: TypeEnvironment, Category: "Environment"},
	{ID: 76, Name: ApplyChangeRequest, DisplayName: "Apply change requests", Type: TypeEnvironment, Category: "Environment"},
	{ID: 77, Name: SkipChangeRequest, DisplayName: "Change without a change request", Type: TypeEnvironment, Category: "Environment"},
}

// byName finds a permission by name (nil for ADMIN and unknown names).
var byName = func() map[string]*Permission {
	m := make(map[string]*Permission, len(Permissions))
	for i := range Permissions {
		Permissions[i].bit = i
		m[Permissions[i].Name] = &Permissions[i]
	}
	if len(Permissions) > 128 {
		panic("access: more permissions than a bit set holds")
	}
	return m
}()

// Lookup returns the permission named name, or false for ADMIN and for
// names Bunting does not know.
func Lookup(name string) (Permission, bool) {
	p, ok := byName[name]
	if !ok {
		return Permission{}, false
	}
	return *p, true
}

// bits is a set of permissions, one bit per entry of Permissions.
type bits [2]uint64

func (b *bits) add(i int)     { b[i>>6] |= 1 << (i & 63) }
func (b bits) has(i int) bool { return b[i>>6]&(1<<(i&63)) != 0 }
func (b bits) or(o bits) bits { return bits{b[0] | o[0], b[1] | o[1]} }
func (b bits) empty() bool    { return b[0]|b[1] == 0 }
func setOf(names ...string) (b bits) {
	for _, n := range names {
		if p, ok := byName[n]; ok {
			b.add(p.bit)
		}
	}
	return b
}

// withImplied adds the permissions that a held permission includes.
func (b bits) withImplied() bits {
	for i := range Permissions {
		p := &Permissions[i]
		if p.ImpliedBy != "" && b.has(byName[p.ImpliedBy].bit) {
			b.add(p.bit)
		}
	}
	return b
}

// namesOfType lists the permission names of one type.
func namesOfType(typ string) []string {
	var out []string
	for _, p := range Permissions {
		if p.Type == typ {
			out = append(out, p.Name)
		}
	}
	return out
}
