package domain

import (
	"context"
	"slices"

	"github.com/bunting-flags/bunting/internal/access"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// Principal kinds.
const (
	KindAdminToken    = "admin"
	KindClientToken   = "client"
	KindFrontendToken = "frontend"
	KindUser          = "user"
)

// The predefined root roles' ids.
const (
	RoleAdmin  = access.RoleAdmin
	RoleEditor = access.RoleEditor
	RoleViewer = access.RoleViewer
)

// Permission names (Unleash's, so 403 bodies read the same); the full list
// is access.Permissions.
const (
	PermAdmin                    = access.Admin
	PermCreateFeature            = access.CreateFeature
	PermUpdateFeature            = access.UpdateFeature
	PermDeleteFeature            = access.DeleteFeature
	PermUpdateFeatureDependency  = access.UpdateFeatureDependency
	PermCreateFeatureStrategy    = access.CreateFeatureStrategy
	PermUpdateFeatureStrategy    = access.UpdateFeatureStrategy
	PermDeleteFeatureStrategy    = access.DeleteFeatureStrategy
	PermUpdateFeatureEnvironment = access.UpdateFeatureEnvironment
	PermUpdateEnvVariants        = access.UpdateEnvVariants
	PermCreateProject            = access.CreateProject
	PermUpdateProject            = access.UpdateProject
	PermDeleteProject            = access.DeleteProject
	PermProjectAccessRead        = access.ProjectUserAccessRead
	PermProjectAccessWrite       = access.ProjectUserAccessWrite
	PermCreateSegment            = access.CreateSegment
	PermUpdateSegment            = access.UpdateSegment
	PermDeleteSegment            = access.DeleteSegment
	PermCreateStrategy           = access.CreateStrategy
	PermUpdateStrategy           = access.UpdateStrategy
	PermDeleteStrategy           = access.DeleteStrategy
	PermCreateContextField       = access.CreateContextField
	PermUpdateContextField       = access.UpdateContextField
	PermDeleteContextField       = access.DeleteContextField
	PermCreateTagType            = access.CreateTagType
	PermUpdateTagType            = access.UpdateTagType
	PermDeleteTagType            = access.DeleteTagType
	PermReadClientToken          = access.ReadClientToken
	PermCreateClientToken        = access.CreateClientToken
	PermDeleteClientToken        = access.DeleteClientToken
	PermReadFrontendToken        = access.ReadFrontendToken
	PermCreateFrontendToken      = access.CreateFrontendToken
	PermDeleteFrontendToken      = access.DeleteFrontendToken
	// Change requests: approving another person's request, applying an
	// approved one, and changing a protected environment directly.
	PermApproveChangeRequest = access.ApproveChangeRequest
	PermApplyChangeRequest   = access.ApplyChangeRequest
	PermSkipChangeRequest    = access.SkipChangeRequest
	// Integrations and sign-in settings: only Admin holds these among the
	// predefined roles; a custom root role may give them.
	PermCreateAddon             = access.CreateAddon
	PermUpdateAddon             = access.UpdateAddon
	PermDeleteAddon             = access.DeleteAddon
	PermUpdateAuthConfiguration = access.UpdateAuthConfiguration
)

// Principal is the authenticated caller of a request.
type Principal struct {
	// Kind is admin, client, frontend (API tokens) or user (personal and
	// service-account tokens).
	Kind string
	// Name is what events record as createdBy.
	Name string
	// UserID is recorded as createdByUserId (-42 for admin tokens, as Unleash).
	UserID *int64
	// RootRole is the id of a user's root role (admin tokens act as Admin).
	RootRole int64
	// Projects and Environment scope client and frontend tokens ("*" = all).
	Projects    []string
	Environment string
	// User is set for user principals.
	User *store.User
	// Access is what the principal may do, loaded per request by
	// access.Service (nil: the root role's predefined permissions alone).
	Access *access.Grants
	// ChangeRequest is set while an approved change request is applied
	// (internal/changerequests): its approvals stand in for
	// SKIP_CHANGE_REQUEST, so the change gate lets its changes through.
	// Nothing outside the process can set it.
	ChangeRequest int64
}

// Actor returns who the principal is, for events.
func (p *Principal) Actor() store.Actor { return store.Actor{Name: p.Name, UserID: p.UserID} }

// Grants is what the principal may do: its loaded Access, else what its
// kind or predefined root role gives.
func (p *Principal) Grants() *access.Grants {
	switch {
	case p == nil:
		return access.Nothing
	case p.Access != nil && (p.Kind == KindUser || p.Kind == KindAdminToken):
		return p.Access
	case p.Kind == KindAdminToken:
		return access.Everything
	case p.Kind == KindUser:
		return access.ForRootRole(p.RootRole)
	}
	return access.Nothing
}

// Can reports whether the principal holds perm in project and env
// (access.Grants.Can decides; client and frontend tokens hold nothing).
func (p *Principal) Can(perm, project, env string) bool {
	return p.Grants().Can(perm, project, env)
}

// AllProjects reports whether a token is scoped to every project.
func (p *Principal) AllProjects() bool {
	return len(p.Projects) == 0 || slices.Contains(p.Projects, "*")
}

// CanSeeProject reports whether p may read project and what is in it:
// for client and frontend tokens (and scopes built in process, such as
// the playground's), their project scope; for people and
// admin tokens, access.Grants.CanSeeProject (private projects are only
// their members' and admins').
func (p *Principal) CanSeeProject(project string) bool {
	if p != nil && p.Kind != KindUser && p.Kind != KindAdminToken {
		return p.AllProjects() || slices.Contains(p.Projects, project)
	}
	return p.Grants().CanSeeProject(project)
}

// SeeProject is nil when p may see project and otherwise the NotFound a
// project it may not see answers (as one that does not exist).
func (p *Principal) SeeProject(project string) error {
	if p.CanSeeProject(project) {
		return nil
	}
	return apierr.NotFound("Project %s does not exist", project)
}

// Require returns nil when p holds perm (in project and env), 401 when
// there is no principal, and otherwise the 403 naming the permission (and
// the environment, when env is set).
func (p *Principal) Require(perm, project, env string) error {
	if p == nil {
		return apierr.Unauthenticated("You must log in to use Bunting.")
	}
	if p.Can(perm, project, env) {
		return nil
	}
	if project != "" && !p.CanSeeProject(project) {
		return apierr.NotFound("Project %s does not exist", project)
	}
	return Forbidden(perm, env)
}

// RequireOnFlag loads the flag name (archived or not) and checks that p
// holds perm in its project: 401 without a principal, a NotFound for a
// flag that does not exist or is in a project p may not see, else Require's
// answer.
func (p *Principal) RequireOnFlag(q store.Q, perm, name string) (store.Feature, error) {
	if p == nil {
		return store.Feature{}, p.Require(perm, "", "")
	}
	f, err := q.Feature(name)
	if err != nil {
		return f, err
	}
	if !p.CanSeeProject(f.Project) {
		return f, apierr.NotFound("Could not find feature flag %s", f.Name)
	}
	return f, p.Require(perm, f.Project, "")
}

// Forbidden is the 403 naming a permission the caller lacks, scoped to env
// when env is set.
func Forbidden(perm, env string) error {
	msg := "You don't have the required permissions to perform this operation. To perform this action, you need the \"" + perm + "\" permission"
	if env != "" {
		msg += " in the \"" + env + "\" environment"
	}
	return apierr.Forbidden("%s.", msg)
}

type principalKey struct{}

// PrincipalFrom returns the request's authenticated principal (nil when
// the route needs no authentication).
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

// WithPrincipal returns ctx carrying p, the authenticated caller.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}
