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
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/cors"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/clientconfig"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/frontend"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/ofrep"
)

// frontendAPI serves /api/frontend with the evaluation handler the proxy
// mounts too (internal/frontend), from engine snapshots compiled out of
// the client configuration: one per token environment and project scope.
// When the configuration changes, a scope's snapshot is patched with the
// flags that changed (engine.Snapshot.Patch), so that a change to one flag
// of a large configuration does not decode and compile every flag again.
// A compiled snapshot does not keep its payload (the configuration holds
// the flags once).
type frontendAPI struct {
	s       *API
	handler http.Handler
	cors    *cors.Cors
	// frontend and ofrep keep per-snapshot encodings, which a replaced
	// snapshot no longer needs (see forget).
	frontend *frontend.Handler
	ofrep    *ofrep.Handler

	mu sync.Mutex
	// source identifies the configuration the current scopes were
	// compiled from: its lineage and revision determine its content.
	source [2]uint64
	scopes map[string]*frontendScope
	// builds times the snapshot builds by kind: "full", or "patched" (the
	// flags that changed compiled into the previous snapshot).
	builds *prometheus.HistogramVec
}

// frontendScope is the snapshot of one scope and what it was compiled
// from, to patch it from when the configuration changes.
type frontendScope struct {
	snap     *engine.Snapshot
	source   [2]uint64
	flags    []*clientconfig.Flag
	segments []int
	// version identifies the configuration snap was compiled from (see
	// scopeVersion).
	version uint64
	// used is set when a request asks for the scope; a scope no request
	// asked for while the configuration changed twice is dropped.
	used bool
}

func newFrontendAPI(s *API) *frontendAPI {
	f := &frontendAPI{s: s, scopes: map[string]*frontendScope{},
		builds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "bunting_frontend_snapshot_build_seconds",
			Help:    "Builds of the compiled flags the frontend API and OFREP evaluate, per token scope: full, or patched (only the flags a change touched).",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"kind"})}
	h := frontend.New(frontend.Options{
		Snapshot: f.snapshot, EnableAllEndpoint: true, Complete: completeFrontendContext,
		MaxBodyBytes: s.cfg.BodyLimit, Logger: s.log,
	})
	f.frontend, f.handler = h, http.StripPrefix("/api/frontend", h)
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
	source := [2]uint64{cfg.Lineage(), uint64(cfg.Revision)}
	if source != f.source {
		f.source = source
		for k, sc := range f.scopes {
			if !sc.used {
				delete(f.scopes, k)
				f.forget(sc.snap)
			}
			sc.used = false
		}
	}
	prev := f.scopes[key]
	if prev != nil && prev.source == source {
		prev.used = true
		return prev.snap, nil
	}
	sc := &frontendScope{source: source, used: true}
	version := xxhash.New()
	for _, flag := range cfg.Flags(p.Environment) {
		if p.CanSeeProject(flag.Project) {
			sc.flags = append(sc.flags, flag)
			sc.segments = append(sc.segments, flag.SegmentIDs()...)
			_, _ = version.Write(binary.LittleEndian.AppendUint64(nil, flag.Hash))
		}
	}
	slices.Sort(sc.segments)
	sc.segments = slices.Compact(sc.segments)
	var segments []engine.Segment
	for _, id := range sc.segments {
		if sg := cfg.Segment(id); sg != nil {
			segments = append(segments, sg.Segment)
			_, _ = version.Write(sg.JSON)
		}
	}
	start, kind := time.Now(), "patched"
	if sc.snap, err = patchScope(prev, sc, source[0]); err != nil {
		return nil, apierr.Internal(err)
	}
	if sc.snap == nil {
		kind = "full"
		size := 0
		features := make([]engine.Feature, len(sc.flags))
		for i, flag := range sc.flags {
			size += len(flag.JSON)
			if features[i], err = flag.Feature(); err != nil {
				return nil, apierr.Internal(err)
			}
		}
		sc.snap = compileScope(features, segments)
		*sc.snap.Features() = engine.ClientFeatures{Version: 2}
		features = nil
		releaseAfterBuild(size)
	}
	if prev == nil || sc.snap != prev.snap {
		f.builds.WithLabelValues(kind).Observe(time.Since(start).Seconds())
		if prev != nil {
			f.forget(prev.snap)
		}
	}
	sc.version = version.Sum64()
	f.scopes[key] = sc
	return sc.snap, nil
}

// forget drops the frontend and OFREP encodings of a replaced snapshot
// (a request still evaluating it encodes it again).
func (f *frontendAPI) forget(s *engine.Snapshot) {
	f.frontend.Forget(s)
	if f.ofrep != nil {
		f.ofrep.Forget(s)
	}
}

// patchScope patches prev's snapshot into sc's (the same scope of a later
// configuration) with the flags that changed in between, or returns nil
// when it cannot: prev is missing or of another lineage (segments may
// have changed), flags were added or removed, or the engine refuses. A
// scope none of whose flags changed keeps its snapshot.
func patchScope(prev, sc *frontendScope, lineage uint64) (*engine.Snapshot, error) {
	if prev == nil || prev.source[0] != lineage || len(prev.flags) != len(sc.flags) || !slices.Equal(prev.segments, sc.segments) {
		return nil, nil
	}
	changed := map[int]engine.Feature{}
	for i, flag := range sc.flags {
		if flag == prev.flags[i] {
			continue
		}
		if flag.Name != prev.flags[i].Name {
			return nil, nil
		}
		feature, err := flag.Feature()
		if err != nil {
			return nil, err
		}
		changed[i] = feature
	}
	if len(changed) == 0 {
		return prev.snap, nil
	}
	snap, _ := prev.snap.Patch(changed)
	return snap, nil
}

// scopeVersion identifies the configuration of a snapshot compiled for a
// scope (a digest of its flags and segments, the same in every instance
// serving the same configuration); a snapshot no scope holds any more
// gets a number of this process.
func (f *frontendAPI) scopeVersion(s *engine.Snapshot) uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, sc := range f.scopes {
		if sc.snap == s {
			return sc.version
		}
	}
	return scopeSequence.Add(1) | 1<<63
}

var scopeSequence atomic.Uint64

// compileScope compiles features (one scope's flags) with segments.
func compileScope(features []engine.Feature, segments []engine.Segment) *engine.Snapshot {
	cf := &engine.ClientFeatures{Version: 2, Features: features, Segments: segments}
	if cf.Features == nil {
		cf.Features = []engine.Feature{}
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
