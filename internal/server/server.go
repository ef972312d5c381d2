// The server type and its lifecycle.

package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/bunting-flags/bunting/internal/server/accounts"
	"github.com/bunting-flags/bunting/internal/server/adminapi"
	"github.com/bunting-flags/bunting/internal/server/opsapi"
	"github.com/bunting-flags/bunting/internal/server/route"
	"github.com/bunting-flags/bunting/internal/server/sdkapi"
	"github.com/bunting-flags/bunting/internal/signals"
	"github.com/bunting-flags/bunting/internal/store"
)

// Server is the flag server's HTTP handler.
type Server struct {
	cfg     Config
	store   *store.Store
	log     *slog.Logger
	tokens  *tokenCache
	handler http.Handler
	signals *signals.Service
	// sdk serves the client and frontend APIs and OFREP; ops the
	// operations surface.
	sdk *sdkapi.API
	ops *opsapi.Ops
	// admin serves the admin API.
	admin *adminapi.API
	// api is the routes without the base path; ui the web UI (routes_webui.go).
	api http.Handler
	ui  http.Handler
	// accounts serves sign-in, sessions and people.
	accounts *accounts.API
	// routeTable lists the registered routes (Routes).
	routeTable []Route
}

// New builds the server on an open store. It creates the initial API
// tokens (see Bootstrap) only when asked to by the caller.
func New(cfg Config, st *store.Store, log *slog.Logger) (*Server, error) {
	if st == nil {
		return nil, errors.New("server: store is nil")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, store: st, log: log, tokens: newTokenCache(st)}
	s.ops = opsapi.New(st)
	s.sdk = sdkapi.New(sdkapi.Config{BodyLimit: cfg.BodyLimit, Streaming: cfg.Streaming}, st, log, s.tokens, s.ops.FrontendRequests)
	s.ops.Ready = s.sdk.Prepared
	s.ops.MustRegister(s.sdk.Collectors()...)
	var err error
	if s.signals, err = s.newSignals(); err != nil {
		return nil, err
	}
	s.admin = adminapi.New(st, s.signals)
	s.accounts = accounts.New(st, cfg.BasePath)
	if err := s.mountWebUI(); err != nil {
		return nil, err
	}
	s.api, s.routeTable = s.routes()
	s.ops.OpenAPI = openAPIDocument(s.routeTable)
	s.handler = s.withBasePath(s.api)
	return s, nil
}

// ServeHTTP serves a request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Store returns the server's store.
func (s *Server) Store() *store.Store { return s.store }

// Run polls for changes by other instances until ctx ends. Call it in its
// own goroutine next to the HTTP server.
func (s *Server) Run(ctx context.Context) {
	go s.runStaleChecks(ctx)
	go s.sdk.RunStreaming(ctx)
	defer s.runSignals(ctx)()
	t := time.NewTicker(s.cfg.RevisionPollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.store.LatestEventID(ctx); err != nil && ctx.Err() == nil {
				s.log.Warn("revision poll failed", "err", err)
			}
		}
	}
}

// ListenAndServe serves on cfg.Host:cfg.Port until ctx ends, then shuts
// down gracefully. ready, when not nil, receives the bound address.
func (s *Server) ListenAndServe(ctx context.Context, ready func(addr net.Addr)) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(s.cfg.Host, fmt.Sprint(s.cfg.Port)))
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln, ready)
}

// Serve serves on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener, ready func(addr net.Addr)) error {
	hs := s.cfg.HTTP.Server(s, s.log)
	hs.RegisterOnShutdown(s.sdk.CloseStreams) // open streams end, so that shutdown does not wait for them
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	runDone := make(chan struct{})
	go func() { defer close(runDone); s.Run(runCtx) }()
	defer func() { cancel(); <-runDone }() // background workers stop before the caller closes the store
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	// /health answers from now on; /ready once the configuration SDKs are
	// served from is built, so that a load balancer sends them to an
	// instance that answers at once.
	if err := s.sdk.Prepare(ctx); err != nil && ctx.Err() == nil {
		s.log.Warn("building the client configuration at start-up failed; the first request retries", "err", err)
	}
	if ready != nil {
		ready(ln.Addr())
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := hs.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// handlerFunc adapts an error-returning handler: a returned error is
// written once, through apierr.Write.
func handlerFunc(s *Server, fn route.Handler) http.Handler { return route.HTTP(s.log, fn) }

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	route.WriteError(w, r, s.log, err)
}

// StreamConnections returns how many streams this instance has open.
func (s *Server) StreamConnections() int { return s.sdk.StreamConnections() }

// newSignals builds the signals service.
func (s *Server) newSignals() (*signals.Service, error) {
	return signals.New(s.cfg.Signals, s.store, s.log, s.cfg.BaseURL)
}

// runSignals starts this instance's signal worker, which stops when ctx
// ends, and returns a function that waits until it has stopped (and given
// up its processing lease).
func (s *Server) runSignals(ctx context.Context) (wait func()) {
	done := make(chan struct{})
	go func() { defer close(done); s.signals.Run(ctx) }()
	return func() { <-done }
}
