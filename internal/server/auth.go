package server

import (
	"context"
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
	env := ""
	if envFrom != nil {
		env = envFrom(r)
	}
	return domain.PrincipalFrom(r.Context()).Require(perm, r.PathValue("projectId"), env)
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

func newTokenCache(st *store.Store) *tokenCache {
	return &tokenCache{store: st, apiTokens: newAPITokenTable(st, time.Now), seed: maphash.MakeSeed(), byKey: map[uint64]tokenCacheEntry{}, now: time.Now}
}

func (c *tokenCache) Resolve(ctx context.Context, secret string) (*domain.Principal, error) {
	if !strings.HasPrefix(secret, "user:") {
		return c.apiTokens.resolve(ctx, secret)
	}
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
		p.RootRole, p.UserID = domain.RoleAdmin, &adminTokenUserID
	}
	return p
}
