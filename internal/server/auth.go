package server

import (
	"context"
	"github.com/bunting-flags/bunting/internal/access"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"hash/maphash"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/server/route"
	"github.com/bunting-flags/bunting/internal/store"
)

var adminTokenUserID = int64(-42)

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
		return kind == domain.KindClientToken
	case surfaceFrontend:
		return kind == domain.KindFrontendToken
	default:
		return kind == domain.KindAdminToken || kind == domain.KindUser
	}
}

// authenticate resolves the Authorization header for a surface: 401 when
// it is missing or unknown, 403 when the token is of the wrong kind.
func (s *Server) authenticate(sf surface) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return handlerFunc(s, func(w http.ResponseWriter, r *http.Request) error {
			secret := route.Bearer(r.Header.Get("Authorization"))
			if secret == "" && sf == surfaceAdmin {
				if p, ok, err := s.accounts.SessionPrincipal(r); ok {
					if err != nil {
						return err
					}
					next.ServeHTTP(w, r.WithContext(domain.WithPrincipal(r.Context(), p)))
					return nil
				}
			}
			if secret == "" {
				return apierr.Unauthenticated("You must log in to use Bunting. Your request had no authorization header, so we could not authorize you.")
			}
			p, err := s.tokens.Resolve(r.Context(), secret)
			if err != nil {
				return err
			}
			if p == nil {
				return apierr.Unauthenticated("The provided API token is not valid or has expired.")
			}
			if !sf.accepts(p.Kind) {
				return apierr.Forbidden("invalid token: expected a different token type for this endpoint")
			}
			next.ServeHTTP(w, r.WithContext(domain.WithPrincipal(r.Context(), p)))
			return nil
		})
	}
}

// requirePermission checks the principal holds perm, scoped to the
// environment envFrom returns (nil: not environment-scoped). Missing
// principal ⇒ 401; missing permission ⇒ 403 naming it.
func (s *Server) requirePermission(perm string, envFrom func(*http.Request) string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return handlerFunc(s, func(w http.ResponseWriter, r *http.Request) error {
			if err := s.checkPermission(r, perm, envFrom); err != nil {
				return err
			}
			next.ServeHTTP(w, r)
			return nil
		})
	}
}

// checkPermission is requirePermission's check. A project or environment
// permission is checked in the path's project: {projectId}, else the
// project of the path's {featureName} (as Unleash looks it up).
func (s *Server) checkPermission(r *http.Request, perm string, envFrom func(*http.Request) string) error {
	env := ""
	if envFrom != nil {
		env = envFrom(r)
	}
	project := r.PathValue("projectId")
	if pm, ok := access.Lookup(perm); ok && pm.Type != access.TypeRoot && project == "" {
		var err error
		if project, err = s.flagProject(r); err != nil {
			return err
		}
	}
	return domain.PrincipalFrom(r.Context()).Require(perm, project, env)
}

// requireVisible answers 404, as if it did not exist, when the path names
// a project the caller may not see ({projectId}) or a flag in one
// ({featureName}): private projects are invisible to non-members.
func (s *Server) requireVisible(next http.Handler) http.Handler {
	return handlerFunc(s, func(w http.ResponseWriter, r *http.Request) error {
		p := domain.PrincipalFrom(r.Context())
		if len(p.Grants().HiddenProjects()) > 0 {
			if project := r.PathValue("projectId"); project != "" && !p.CanSeeProject(project) {
				return apierr.NotFound("Project %s does not exist", project)
			}
			project, err := s.flagProject(r)
			if err != nil {
				return err
			}
			if project != "" && !p.CanSeeProject(project) {
				return apierr.NotFound("Could not find feature flag %s", r.PathValue("featureName"))
			}
		}
		next.ServeHTTP(w, r)
		return nil
	})
}

// tokenCache resolves secrets to principals. API tokens (admin, client,
// frontend) come from an in-memory copy of their table (apiTokens), which
// keeps the SDK APIs answering while the database is away. Personal and
// service-account tokens are looked up in the store, caching both hits and
// misses until this instance changes a credential
// (store.CredentialRevision) or the entry is older than tokenCacheTTL
// (which bounds how long a token deleted through another instance keeps
// working here). Entries are found by a keyed hash of the secret (a seed
// no client knows) and then compared in constant time, so a cached request
// does not pay for SHA-256, which only the store lookup needs.
type tokenCache struct {
	store     *store.Store
	apiTokens *apiTokenTable
	access    *access.Service
	seed      maphash.Seed
	mu        sync.Mutex
	byKey     map[uint64]tokenCacheEntry
	now       func() time.Time
}

type tokenCacheEntry struct {
	p        *domain.Principal
	secret   string
	revision int64
	at       time.Time
}

const tokenCacheTTL = 5 * time.Second

func newTokenCache(st *store.Store, acc *access.Service) *tokenCache {
	return &tokenCache{store: st, apiTokens: newAPITokenTable(st, time.Now), access: acc, seed: maphash.MakeSeed(), byKey: map[uint64]tokenCacheEntry{}, now: time.Now}
}

// Resolve returns the principal behind secret (nil when none is): for a
// personal or service-account token, a copy of the cached principal with
// what its user may do now (access.Service.ForUser).
func (c *tokenCache) Resolve(ctx context.Context, secret string) (*domain.Principal, error) {
	if !strings.HasPrefix(secret, "user:") {
		return c.apiTokens.resolve(ctx, secret)
	}
	p, err := c.resolve(ctx, secret)
	if err != nil || p == nil || p.Kind != domain.KindUser {
		return p, err
	}
	grants, err := c.access.ForUser(ctx, *p.UserID)
	if apierr.IsKind(err, apierr.KindNotFound) {
		return nil, nil // the user was deleted (through another instance)
	}
	if err != nil {
		return nil, err
	}
	cp := *p
	cp.Access = grants
	return &cp, nil
}

func (c *tokenCache) resolve(ctx context.Context, secret string) (*domain.Principal, error) {
	key := maphash.String(c.seed, secret)
	rev, now := c.store.CredentialRevision(), c.now()
	c.mu.Lock()
	e, ok := c.byKey[key]
	c.mu.Unlock()
	if ok && e.revision == rev && now.Sub(e.at) < tokenCacheTTL && domain.SecretsEqual(e.secret, secret) {
		return e.p, nil
	}
	p, err := c.load(ctx, store.HashSecret(secret))
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

func (c *tokenCache) load(ctx context.Context, hash string) (*domain.Principal, error) {
	q := c.store.Q(ctx)
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
	return &domain.Principal{Kind: domain.KindUser, Name: name, UserID: &id, RootRole: u.RootRole, User: &u}, nil
}

// apiTokenPrincipal is who an API token acts as.
func apiTokenPrincipal(t store.APIToken) *domain.Principal {
	p := &domain.Principal{Kind: t.Type, Name: t.TokenName, Projects: t.Projects, Environment: t.Environment}
	if t.Type == domain.KindAdminToken {
		p.RootRole, p.UserID, p.Access = domain.RoleAdmin, &adminTokenUserID, access.Everything
	}
	return p
}

// flagProject is the project of the flag the path names ({featureName}),
// "" when it names none, or one that does not exist, or text no database
// stores (the text check answers that one).
func (s *Server) flagProject(r *http.Request) (string, error) {
	name := r.PathValue("featureName")
	if name == "" || !httpjson.ValidText(name) {
		return "", nil
	}
	f, err := s.store.Q(r.Context()).Feature(name)
	if apierr.IsKind(err, apierr.KindNotFound) {
		return "", nil
	}
	return f.Project, err
}
