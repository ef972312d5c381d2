package sdkapi

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/ofrep"
	"github.com/bunting-flags/bunting/internal/server/route"
)

// RegisterOFREP serves OpenFeature's remote evaluation protocol
// under /ofrep with frontend tokens (as /api/frontend, and also as
// "Authorization: Bearer …" or X-API-Key), the frontend API's snapshots
// and context defaults; its event streams wake when the store's
// generation moves and the caller's flags changed.
func (s *API) RegisterOFREP(r route.Registrar) {
	front := s.front
	h := ofrep.New(ofrep.Options{
		BasePath:     "/ofrep",
		Authenticate: s.ofrepAuthenticate,
		Snapshot: func(r *http.Request, scope string) (*engine.Snapshot, error) {
			return front.snapshot(r.WithContext(domain.WithPrincipal(r.Context(), scopePrincipal(scope))))
		},
		Complete:      completeFrontendContext,
		MaxBodyBytes:  s.cfg.BodyLimit,
		Logger:        s.log,
		Changes:       s.storeChanges,
		ConfigVersion: front.scopeVersion,
	})
	front.ofrep = h
	served := front.corsHeaders(h)
	for _, pattern := range []string{"POST /ofrep/v1/evaluate/flags", "POST /ofrep/v1/evaluate/flags/{key}", "GET /ofrep/v1/events"} {
		r.Custom(route.Route{Pattern: pattern, Surface: "frontend"}, served)
	}
	r.Handle("OPTIONS /ofrep/", front.preflight())
}

// ofrepAuthenticate resolves a frontend token sent as /api/frontend takes
// it, as a bearer token or as X-API-Key, and returns the scope it sees.
func (s *API) ofrepAuthenticate(r *http.Request) (string, error) {
	secret := route.Bearer(r.Header.Get("Authorization"))
	if secret == "" {
		secret = strings.TrimSpace(r.Header.Get("X-API-Key"))
	}
	if secret == "" {
		return "", apierr.Unauthenticated("You must log in to use Bunting. Your request had no authorization header, so we could not authorize you.")
	}
	p, err := s.tokens.Resolve(r.Context(), secret)
	if err != nil {
		return "", err
	}
	if p == nil {
		return "", apierr.Unauthenticated("The provided API token is not valid or has expired.")
	}
	if p.Kind != domain.KindFrontendToken {
		return "", apierr.Forbidden("invalid token: expected a different token type for this endpoint")
	}
	projects := slices.Sorted(slices.Values(p.Projects))
	return p.Environment + "|" + strings.Join(projects, ","), nil
}

// scopePrincipal is the frontend principal a scope stands for.
func scopePrincipal(scope string) *domain.Principal {
	env, projects, _ := strings.Cut(scope, "|")
	p := &domain.Principal{Kind: domain.KindFrontendToken, Environment: env}
	if projects != "" {
		p.Projects = strings.Split(projects, ",")
	}
	return p
}

// storeChanges is the store's change signal: a channel closed at the next
// change of its generation (a change committed here, or one of another
// instance seen through LISTEN/NOTIFY or the revision poll). The OFREP
// stream also ends its wait with the request.
func (s *API) storeChanges(context.Context, string) <-chan struct{} { return s.store.Changes() }
