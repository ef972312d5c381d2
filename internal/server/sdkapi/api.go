// Package sdkapi serves the APIs that SDKs call: the client API
// (/api/client: flags, metrics, registration, streaming and deltas), the
// frontend API (/api/frontend, with CORS) and OpenFeature's remote
// evaluation protocol (/ofrep). Every answer comes from an in-memory
// snapshot of the client data, rebuilt when the store's revision moves.
package sdkapi

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/clientconfig"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
	"github.com/bunting-flags/bunting/internal/stream"
	"github.com/bunting-flags/bunting/internal/usage"
)

// Config is what the SDK APIs take from the server's configuration.
type Config struct {
	// BodyLimit is the largest accepted request body in bytes.
	BodyLimit int64
	// Streaming holds the limits of GET /api/client/streaming.
	Streaming StreamingConfig
}

// TokenResolver resolves an API token's secret to its principal (nil, nil
// for an unknown or expired token).
type TokenResolver interface {
	Resolve(ctx context.Context, secret string) (*domain.Principal, error)
}

// API serves the client API, the frontend API and OFREP.
type API struct {
	cfg    Config
	store  *store.Store
	log    *slog.Logger
	tokens TokenResolver
	client *clientCache
	hub    *stream.Hub // streaming and delta (streaming.go)
	// published is the lineage of the configuration last published to the
	// hub (see publishSnapshot).
	published atomic.Uint64
	front     *frontendAPI
	// usage counts metrics and registrations (handlers_metrics.go), which
	// look flags up in flagIndex (usage_limits.go).
	usage     *usage.Service
	flagIndex flagIndexCache
	// frontendRequests counts frontend API evaluations by endpoint.
	frontendRequests *prometheus.CounterVec
}

// New builds the SDK APIs on st; tokens resolves the secrets that OFREP
// and open streams present, frontendRequests counts frontend evaluations,
// and u keeps what SDKs report.
func New(cfg Config, st *store.Store, log *slog.Logger, tokens TokenResolver, frontendRequests *prometheus.CounterVec, u *usage.Service) *API {
	s := &API{cfg: cfg, store: st, log: log, tokens: tokens, frontendRequests: frontendRequests, usage: u}
	s.client = newClientCache(s)
	s.hub = s.newHub()
	s.front = newFrontendAPI(s)
	return s
}

// Prepare builds the client configuration the SDK APIs serve from (the
// server calls it at start-up, before it reports ready).
func (s *API) Prepare(ctx context.Context) error {
	_, err := s.client.configCtx(ctx)
	return err
}

// Collectors are the SDK APIs' own metrics, for the server's registry.
func (s *API) Collectors() []prometheus.Collector {
	return []prometheus.Collector{s.client.builds, s.client.buildSeconds, s.front.builds}
}

// Prepared reports whether the client configuration has been built once.
func (s *API) Prepared() bool { return s.client.built.Load() }

// FrontendCORS puts the frontend API's CORS headers around next, so that
// browsers can read its 401 and 403 answers too.
func (s *API) FrontendCORS(next http.Handler) http.Handler { return s.front.corsHeaders(next) }

// CloseStreams ends the open streams (at shutdown, so that it does not
// wait for them).
func (s *API) CloseStreams() { s.hub.CloseAll() }

// Explained compiles the flags of d that p sees (p's environment and
// projects) as the playground explains them: with the disabled strategies
// and each strategy's id and title, which SDKs do not receive. ok is false
// when p's environment does not exist.
func Explained(d *store.ClientData, p *domain.Principal) (snap *engine.Snapshot, ok bool) {
	if !slices.Contains(d.EnvironmentNames, p.Environment) {
		return nil, false
	}
	var features []engine.Feature
	var used []int
	for _, f := range clientconfig.Features(d, true)[p.Environment] {
		if p.CanSeeProject(f.Project) {
			features = append(features, f)
			for _, st := range f.Strategies {
				used = append(used, st.Segments...)
			}
		}
	}
	var segments []engine.Segment
	for _, sg := range d.Segments {
		if slices.Contains(used, sg.ID) {
			segments = append(segments, engine.Segment{ID: sg.ID, Name: sg.Name, Constraints: domain.NonNil(sg.Constraints)})
		}
	}
	return compileScope(features, segments), true
}
