package sdkapi

import (
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"

	"github.com/rs/cors"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/frontend"
	"github.com/bunting-flags/bunting/internal/httpjson"
)

// frontendAPI serves /api/frontend with the evaluation handler the proxy
// mounts too (internal/frontend), from engine snapshots compiled out of the client API's
// in-memory snapshot: one per token environment and project scope, rebuilt
// when the client snapshot changes.
type frontendAPI struct {
	s       *API
	handler http.Handler
	cors    *cors.Cors

	mu     sync.Mutex
	source *clientSnapshot
	snaps  map[string]*engine.Snapshot
}

func newFrontendAPI(s *API) *frontendAPI {
	f := &frontendAPI{s: s, snaps: map[string]*engine.Snapshot{}}
	h := frontend.New(frontend.Options{
		Snapshot: f.snapshot, EnableAllEndpoint: true, Complete: completeFrontendContext,
		MaxBodyBytes: s.cfg.BodyLimit, Logger: s.log,
	})
	f.handler = http.StripPrefix("/api/frontend", h)
	f.cors = cors.New(cors.Options{
		AllowedOrigins: []string{"*"}, AllowedMethods: []string{http.MethodGet, http.MethodHead, http.MethodPost},
		AllowedHeaders: []string{"*"}, ExposedHeaders: []string{"ETag"}, AllowCredentials: true, MaxAge: 172800,
	})
	return f
}

// snapshot picks the engine snapshot for the calling frontend token.
func (f *frontendAPI) snapshot(r *http.Request) (*engine.Snapshot, error) {
	p := domain.PrincipalFrom(r.Context())
	if p == nil {
		return nil, apierr.Unauthenticated("A frontend API token is required.")
	}
	cs, err := f.s.client.snapshot(r)
	if err != nil {
		return nil, err
	}
	projects := append([]string{}, p.Projects...)
	sort.Strings(projects)
	key := p.Environment + "|" + strings.Join(projects, ",")
	f.mu.Lock()
	defer f.mu.Unlock()
	if cs != f.source {
		f.source, f.snaps = cs, map[string]*engine.Snapshot{}
	}
	if snap, ok := f.snaps[key]; ok {
		return snap, nil
	}
	snap := compileFrontendSnapshot(cs, p)
	f.snaps[key] = snap
	return snap, nil
}

// compileFrontendSnapshot compiles the flags of the token's environment and
// projects, with the segments they use.
func compileFrontendSnapshot(cs *clientSnapshot, p *domain.Principal) *engine.Snapshot {
	cf := &engine.ClientFeatures{Version: 2, Features: []engine.Feature{}}
	used := map[int]bool{}
	for _, flag := range cs.byEnv[p.Environment] {
		if !p.CanSeeProject(flag.withSegments.Project) {
			continue
		}
		cf.Features = append(cf.Features, flag.withSegments)
		for _, id := range flag.segmentIDs {
			used[id] = true
		}
	}
	for id := range used {
		if sg, ok := cs.segments[id]; ok {
			cf.Segments = append(cf.Segments, sg)
		}
	}
	sort.Slice(cf.Segments, func(i, j int) bool { return cf.Segments[i].ID < cf.Segments[j].ID })
	return engine.Compile(cf, engine.Options{})
}

// The appName and environment of a frontend API context that leaves them
// out: what Unleash 8's frontend API evaluates with (the static context of
// its internal SDK). The token's environment only picks the flags.
const (
	frontendAppName     = "frontend-api"
	frontendEnvironment = "default"
)

// completeFrontendContext fills the caller's address, appName and
// environment when the context leaves them out. A currentTime in the
// request is honoured (Unleash's frontend API moves it into properties and
// evaluates dates against the server's clock; the README lists this).
func completeFrontendContext(r *http.Request, ctx *engine.Context) error {
	if ctx.RemoteAddress == "" {
		if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			ctx.RemoteAddress = host
		}
	}
	if ctx.AppName == "" {
		ctx.AppName = frontendAppName
	}
	if ctx.Environment == "" {
		ctx.Environment = frontendEnvironment
	}
	return nil
}

// evaluate serves /api/frontend and /api/frontend/all, counted by endpoint.
func (f *frontendAPI) evaluate(endpoint string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.s.frontendRequests.WithLabelValues(endpoint).Inc()
		f.handler.ServeHTTP(w, r)
	})
}

// corsHeaders answers browsers (Origin set) through rs/cors and everyone
// else with the Unleash defaults: any origin, ETag exposed.
func (f *frontendAPI) corsHeaders(next http.Handler) http.Handler {
	withCors := f.cors.Handler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Origin") == "" {
			w.Header().Set("Access-Control-Allow-Origin", "*")
			w.Header().Set("Access-Control-Expose-Headers", "ETag")
			next.ServeHTTP(w, r)
			return
		}
		withCors.ServeHTTP(w, r)
	})
}

// preflight answers CORS preflight requests without credentials.
func (f *frontendAPI) preflight() http.Handler {
	return f.cors.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	}))
}

// frontendMetrics stores the usage a front-end SDK posts, like the client
// API's metrics, and answers 200 OK.
func (s *API) frontendMetrics(w http.ResponseWriter, r *http.Request) error {
	if err := httpjson.RequireJSON(r); err != nil {
		return err
	}
	if err := s.recordMetrics(r); err != nil {
		return err
	}
	return httpjson.WriteOK(w)
}

// frontendRegister records a front-end SDK and answers 200 OK.
func (s *API) frontendRegister(w http.ResponseWriter, r *http.Request) error {
	if err := httpjson.RequireJSON(r); err != nil {
		return err
	}
	var body registerBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	app, err := body.application(r, false)
	if err != nil {
		return err
	}
	if err := s.seeApplication(r, app); err != nil {
		return err
	}
	return httpjson.WriteOK(w)
}

// frontendUnsupported answers the client-API paths the frontend API does
// not offer.
func (s *API) frontendUnsupported(w http.ResponseWriter, r *http.Request) error {
	return apierr.Unsupported("The frontend API does not support this endpoint.")
}
