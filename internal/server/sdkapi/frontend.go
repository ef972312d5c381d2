package sdkapi

import (
	"encoding/binary"
	"net"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"
	"github.com/rs/cors"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/frontend"
	"github.com/bunting-flags/bunting/internal/httpjson"
)

// frontendAPI serves /api/frontend with the evaluation handler the proxy
// mounts too (internal/frontend), from engine snapshots compiled out of
// the client configuration: one per token environment and project scope,
// compiled again when the configuration changes. A compiled snapshot does
// not keep its payload (the configuration holds the flags once).
type frontendAPI struct {
	s       *API
	handler http.Handler
	cors    *cors.Cors

	mu sync.Mutex
	// source identifies the configuration snaps were compiled from: its
	// lineage and revision determine its content.
	source [2]uint64
	snaps  map[string]*engine.Snapshot
	// versions identifies the configuration of each snapshot in snaps
	// (see scopeVersion).
	versions map[*engine.Snapshot]uint64
}

func newFrontendAPI(s *API) *frontendAPI {
	f := &frontendAPI{s: s, snaps: map[string]*engine.Snapshot{}, versions: map[*engine.Snapshot]uint64{}}
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
	cfg, err := f.s.client.config(r)
	if err != nil {
		return nil, err
	}
	projects := append([]string{}, p.Projects...)
	sort.Strings(projects)
	key := p.Environment + "|" + strings.Join(projects, ",")
	f.mu.Lock()
	defer f.mu.Unlock()
	if source := [2]uint64{cfg.Lineage(), uint64(cfg.Revision)}; source != f.source {
		f.source, f.snaps, f.versions = source, map[string]*engine.Snapshot{}, map[*engine.Snapshot]uint64{}
	}
	if snap, ok := f.snaps[key]; ok {
		return snap, nil
	}
	var features []engine.Feature
	version := xxhash.New()
	size := 0
	for _, flag := range cfg.Flags(p.Environment) {
		if !p.CanSeeProject(flag.Project) {
			continue
		}
		size += len(flag.JSON)
		feature, err := flag.Feature()
		if err != nil {
			return nil, apierr.Internal(err)
		}
		features = append(features, feature)
		_, _ = version.Write(binary.LittleEndian.AppendUint64(nil, flag.Hash))
	}
	snap := compileScope(features, func(id int) (engine.Segment, bool) {
		sg := cfg.Segment(id)
		if sg == nil {
			return engine.Segment{}, false
		}
		_, _ = version.Write(sg.JSON)
		return sg.Segment, true
	})
	*snap.Features() = engine.ClientFeatures{Version: 2}
	f.snaps[key], f.versions[snap] = snap, version.Sum64()
	releaseAfterBuild(size)
	return snap, nil
}

// scopeVersion identifies the configuration of a snapshot snapshot
// compiled (a digest of its flags and segments, the same in every
// instance serving the same configuration); an older snapshot gets a
// number of this process.
func (f *frontendAPI) scopeVersion(s *engine.Snapshot) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	if v, ok := f.versions[s]; ok {
		return v
	}
	return scopeSequence.Add(1) | 1<<63
}

var scopeSequence atomic.Uint64

// compileScope compiles features (one scope's flags) with the segments
// they use, asked of segment in the order of their ids.
func compileScope(features []engine.Feature, segment func(id int) (engine.Segment, bool)) *engine.Snapshot {
	cf := &engine.ClientFeatures{Version: 2, Features: features}
	if cf.Features == nil {
		cf.Features = []engine.Feature{}
	}
	var ids []int
	for _, feature := range features {
		for _, st := range feature.Strategies {
			ids = append(ids, st.Segments...)
		}
	}
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		if sg, ok := segment(id); ok {
			cf.Segments = append(cf.Segments, sg)
		}
	}
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
// evaluates dates against the server's clock; docs/compatibility.md lists
// this).
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

// frontendMetrics counts the usage a front-end SDK posts, like the client
// API's metrics, and answers 200 OK.
func (s *API) frontendMetrics(w http.ResponseWriter, r *http.Request) error {
	if err := httpjson.RequireJSON(r); err != nil {
		return err
	}
	if err := s.recordMetrics(w, r, sdkFrontend); err != nil {
		return err
	}
	return httpjson.WriteOK(w)
}

// frontendRegister records a front-end SDK and answers 200 OK.
func (s *API) frontendRegister(w http.ResponseWriter, r *http.Request) error {
	if err := httpjson.RequireJSON(r); err != nil {
		return err
	}
	if err := s.register(r, sdkFrontend, false); err != nil {
		return err
	}
	return httpjson.WriteOK(w)
}

// frontendUnsupported answers the client-API paths the frontend API does
// not offer.
func (s *API) frontendUnsupported(w http.ResponseWriter, r *http.Request) error {
	return apierr.Unsupported("The frontend API does not support this endpoint.")
}
