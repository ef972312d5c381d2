package server

import (
	"context"
	"crypto/subtle"
	"hash/maphash"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

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
)

// editorDenied are the permissions an Editor does not hold: everything
// about API tokens, plus ADMIN itself.
var editorDenied = []string{
	PermAdmin, PermReadClientToken, PermCreateClientToken, PermDeleteClientToken,
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

var adminTokenUserID = int64(-42)

type principalKey struct{}

// PrincipalFrom returns the request's authenticated principal (nil when
// the route needs no authentication).
func PrincipalFrom(ctx context.Context) *Principal {
	p, _ := ctx.Value(principalKey{}).(*Principal)
	return p
}

func withPrincipal(r *http.Request, p *Principal) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), principalKey{}, p))
}

// surface is an API family; each accepts certain principal kinds.
type surface int

const (
	surfaceAdmin surface = iota
	surfaceClient
	surfaceFrontend
)

// String names the surface as Route.Surface does.
func (sf surface) String() string {
	switch sf {
	case surfaceClient:
		return "client"
	case surfaceFrontend:
		return "frontend"
	default:
		return "admin"
	}
}

func (sf surface) accepts(kind string) bool {
	switch sf {
	case surfaceClient:
		return kind == KindClientToken
	case surfaceFrontend:
		return kind == KindFrontendToken
	default:
		return kind == KindAdminToken || kind == KindUser
	}
}

// authenticate resolves the Authorization header for a surface: 401 when
// it is missing or unknown, 403 when the token is of the wrong kind.
func (s *Server) authenticate(sf surface) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return handlerFunc(s, func(w http.ResponseWriter, r *http.Request) error {
			secret := bearer(r.Header.Get("Authorization"))
			if secret == "" && sf == surfaceAdmin {
				if p, ok, err := s.sessionPrincipal(r); ok {
					if err != nil {
						return err
					}
					next.ServeHTTP(w, withPrincipal(r, p))
					return nil
				}
			}
			if secret == "" {
				return apierr.Unauthenticated("You must log in to use Bunting. Your request had no authorization header, so we could not authorize you.")
			}
			p, err := s.tokens.resolve(r.Context(), secret)
			if err != nil {
				return err
			}
			if p == nil {
				return apierr.Unauthenticated("The provided API token is not valid or has expired.")
			}
			if !sf.accepts(p.Kind) {
				return apierr.Forbidden("invalid token: expected a different token type for this endpoint")
			}
			next.ServeHTTP(w, withPrincipal(r, p))
			return nil
		})
	}
}

// bearer strips an optional "Bearer " prefix (any case, any spacing).
func bearer(h string) string {
	h = strings.TrimSpace(h)
	if len(h) > 6 && strings.EqualFold(h[:6], "bearer") && (h[6] == ' ' || h[6] == '\t') {
		h = strings.TrimSpace(h[6:])
	}
	return h
}

// requirePermission checks the principal holds perm, scoped to the
// environment envFrom returns (nil: not environment-scoped). Missing
// principal ⇒ 401; missing permission ⇒ 403 naming it.
func (s *Server) requirePermission(perm string, envFrom func(*http.Request) string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return handlerFunc(s, func(w http.ResponseWriter, r *http.Request) error {
			if err := checkPermission(r, perm, envFrom); err != nil {
				return err
			}
			next.ServeHTTP(w, r)
			return nil
		})
	}
}

// checkPermission is requirePermission's check, for handlers that decide
// the permission from the body (e.g. the token type being created).
func checkPermission(r *http.Request, perm string, envFrom func(*http.Request) string) error {
	p := PrincipalFrom(r.Context())
	if p == nil {
		return apierr.Unauthenticated("You must log in to use Bunting.")
	}
	env := ""
	if envFrom != nil {
		env = envFrom(r)
	}
	if p.Can(perm, r.PathValue("projectId"), env) {
		return nil
	}
	return forbidden(perm, env)
}

func forbidden(perm, env string) error {
	msg := "You don't have the required permissions to perform this operation. To perform this action, you need the \"" + perm + "\" permission"
	if env != "" {
		msg += " in the \"" + env + "\" environment"
	}
	return apierr.Forbidden("%s.", msg)
}

// pathEnv scopes a permission to the {environment} path value.
func pathEnv(r *http.Request) string { return r.PathValue("environment") }

// tokenCache resolves secrets to principals, caching both hits and misses
// until this instance changes a credential (store.CredentialRevision) or
// the entry is older than tokenCacheTTL (which bounds how long a token
// deleted through another instance keeps working here). Entries are found
// by a keyed hash of the secret (a seed no client knows) and then compared
// in constant time, so a cached request does not pay for SHA-256, which only
// the store lookup needs.
type tokenCache struct {
	store *store.Store
	seed  maphash.Seed
	mu    sync.Mutex
	byKey map[uint64]tokenCacheEntry
	now   func() time.Time
}

type tokenCacheEntry struct {
	p        *Principal
	secret   string
	revision int64
	at       time.Time
}

const tokenCacheTTL = 5 * time.Second

func newTokenCache(st *store.Store) *tokenCache {
	return &tokenCache{store: st, seed: maphash.MakeSeed(), byKey: map[uint64]tokenCacheEntry{}, now: time.Now}
}

func (c *tokenCache) resolve(ctx context.Context, secret string) (*Principal, error) {
	key := maphash.String(c.seed, secret)
	rev, now := c.store.CredentialRevision(), c.now()
	c.mu.Lock()
	e, ok := c.byKey[key]
	c.mu.Unlock()
	if ok && e.revision == rev && now.Sub(e.at) < tokenCacheTTL && secretsEqual(e.secret, secret) {
		return e.p, nil
	}
	p, err := c.load(ctx, secret, store.HashSecret(secret))
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.byKey) > 10000 {
		clear(c.byKey)
	}
	c.byKey[key] = tokenCacheEntry{p: p, secret: strings.Clone(secret), revision: rev, at: now}
	c.mu.Unlock()
	return p, nil
}

// secretsEqual compares two secrets in constant time without copying them.
func secretsEqual(a, b string) bool {
	return subtle.ConstantTimeCompare(unsafe.Slice(unsafe.StringData(a), len(a)), unsafe.Slice(unsafe.StringData(b), len(b))) == 1
}

func (c *tokenCache) load(ctx context.Context, secret, hash string) (*Principal, error) {
	q := c.store.Q(ctx)
	if strings.HasPrefix(secret, "user:") {
		u, expires, err := q.UserByTokenHash(hash)
		if apierr.IsKind(err, apierr.KindNotFound) || (err == nil && expires != nil && expires.Before(c.now())) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		name := "user"
		switch {
		case u.Email != nil:
			name = *u.Email
		case u.Username != nil:
			name = *u.Username
		}
		id := u.ID
		return &Principal{Kind: KindUser, Name: name, UserID: &id, RootRole: u.RootRole, User: &u}, nil
	}
	t, err := q.APITokenByHash(hash)
	if apierr.IsKind(err, apierr.KindNotFound) || (err == nil && t.ExpiresAt != nil && t.ExpiresAt.Before(c.now())) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p := &Principal{Kind: t.Type, Name: t.TokenName, Projects: t.Projects, Environment: t.Environment}
	if t.Type == KindAdminToken {
		p.RootRole, p.UserID = RoleAdmin, &adminTokenUserID
	}
	return p, nil
}
