package domain

import (
	"context"
	"slices"

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

// Root roles.
const (
	RoleAdmin  = "Admin"
	RoleEditor = "Editor"
	RoleViewer = "Viewer"
)

// Permission names (Unleash's, so 403 bodies read the same).
const (
	PermAdmin                    = "ADMIN"
	PermCreateFeature            = "CREATE_FEATURE"
	PermUpdateFeature            = "UPDATE_FEATURE"
	PermDeleteFeature            = "DELETE_FEATURE"
	PermUpdateFeatureDependency  = "UPDATE_FEATURE_DEPENDENCY"
	PermCreateFeatureStrategy    = "CREATE_FEATURE_STRATEGY"
	PermUpdateFeatureStrategy    = "UPDATE_FEATURE_STRATEGY"
	PermDeleteFeatureStrategy    = "DELETE_FEATURE_STRATEGY"
	PermUpdateFeatureEnvironment = "UPDATE_FEATURE_ENVIRONMENT"
	PermUpdateEnvVariants        = "UPDATE_FEATURE_ENVIRONMENT_VARIANTS"
	PermCreateProject            = "CREATE_PROJECT"
	PermUpdateProject            = "UPDATE_PROJECT"
	PermDeleteProject            = "DELETE_PROJECT"
	PermCreateSegment            = "CREATE_SEGMENT"
	PermUpdateSegment            = "UPDATE_SEGMENT"
	PermDeleteSegment            = "DELETE_SEGMENT"
	PermCreateStrategy           = "CREATE_STRATEGY"
	PermUpdateStrategy           = "UPDATE_STRATEGY"
	PermDeleteStrategy           = "DELETE_STRATEGY"
	PermCreateContextField       = "CREATE_CONTEXT_FIELD"
	PermUpdateContextField       = "UPDATE_CONTEXT_FIELD"
	PermDeleteContextField       = "DELETE_CONTEXT_FIELD"
	PermCreateTagType            = "CREATE_TAG_TYPE"
	PermUpdateTagType            = "UPDATE_TAG_TYPE"
	PermDeleteTagType            = "DELETE_TAG_TYPE"
	PermReadClientToken          = "READ_CLIENT_API_TOKEN"
	PermCreateClientToken        = "CREATE_CLIENT_API_TOKEN"
	PermDeleteClientToken        = "DELETE_CLIENT_API_TOKEN"
	PermReadFrontendToken        = "READ_FRONTEND_API_TOKEN"
	PermCreateFrontendToken      = "CREATE_FRONTEND_API_TOKEN"
	PermDeleteFrontendToken      = "DELETE_FRONTEND_API_TOKEN"
	// Change requests: approving another person's request, applying an
	// approved one, and changing a protected environment directly.
	PermApproveChangeRequest = "APPROVE_CHANGE_REQUEST"
	PermApplyChangeRequest   = "APPLY_CHANGE_REQUEST"
	PermSkipChangeRequest    = "SKIP_CHANGE_REQUEST"
)

// editorDenied are the permissions an Editor does not hold: everything
// about API tokens, skipping change requests, plus ADMIN itself.
var editorDenied = []string{
	PermAdmin, PermSkipChangeRequest, PermReadClientToken, PermCreateClientToken, PermDeleteClientToken,
	PermReadFrontendToken, PermCreateFrontendToken, PermDeleteFrontendToken,
	"UPDATE_CLIENT_API_TOKEN", "UPDATE_FRONTEND_API_TOKEN",
}

// Principal is the authenticated caller of a request.
type Principal struct {
	// Kind is admin, client, frontend (API tokens) or user (personal and
	// service-account tokens).
	Kind string
	// Name is what events record as createdBy.
	Name string
	// UserID is recorded as createdByUserId (-42 for admin tokens, as Unleash).
	UserID *int64
	// RootRole is Admin, Editor or Viewer (admin tokens act as Admin).
	RootRole string
	// Projects and Environment scope client and frontend tokens ("*" = all).
	Projects    []string
	Environment string
	// User is set for user principals.
	User *store.User
	// ChangeRequest is set while an approved change request is applied
	// (internal/changerequests): its approvals stand in for
	// SKIP_CHANGE_REQUEST, so the change gate lets its changes through.
	// Nothing outside the process can set it.
	ChangeRequest int64
}

// Actor returns who the principal is, for events.
func (p *Principal) Actor() store.Actor { return store.Actor{Name: p.Name, UserID: p.UserID} }

// Can reports whether the principal holds perm (in project and env; the
// open-source role model has no project- or environment-specific grants, so
// only the root role matters).
func (p *Principal) Can(perm, project, env string) bool {
	if p == nil || (p.Kind != KindAdminToken && p.Kind != KindUser) {
		return false
	}
	switch p.RootRole {
	case RoleAdmin:
		return true
	case RoleEditor:
		return !slices.Contains(editorDenied, perm)
	default:
		return false
	}
}

// AllProjects reports whether a token is scoped to every project.
func (p *Principal) AllProjects() bool {
	return len(p.Projects) == 0 || slices.Contains(p.Projects, "*")
}

// CanSeeProject reports whether a client/frontend token may read project.
func (p *Principal) CanSeeProject(project string) bool {
	return p.AllProjects() || slices.Contains(p.Projects, project)
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
	return Forbidden(perm, env)
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
