// The server type and its lifecycle.

package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/bunting-flags/bunting/internal/access"
	"github.com/bunting-flags/bunting/internal/rbac"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/changerequests"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpserver"
	"github.com/bunting-flags/bunting/internal/integrations"
	"github.com/bunting-flags/bunting/internal/secretbox"
	"github.com/bunting-flags/bunting/internal/server/accounts"
	"github.com/bunting-flags/bunting/internal/server/adminapi"
	"github.com/bunting-flags/bunting/internal/server/changerequestsapi"
	"github.com/bunting-flags/bunting/internal/server/integrationsapi"
	"github.com/bunting-flags/bunting/internal/server/opsapi"
	"github.com/bunting-flags/bunting/internal/server/route"
	"github.com/bunting-flags/bunting/internal/server/sdkapi"
	"github.com/bunting-flags/bunting/internal/server/ssoapi"
	"github.com/bunting-flags/bunting/internal/signals"
	"github.com/bunting-flags/bunting/internal/sso"
	"github.com/bunting-flags/bunting/internal/store"
	"github.com/bunting-flags/bunting/internal/usage"
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
	// sso runs single sign-on; ssoAPI serves it.
	sso    *sso.Service
	ssoAPI *ssoapi.API
	// integrations configures and delivers the integrations; addons
	// serves their API.
	integrations *integrations.Service
	addons       *integrationsapi.API
	// usage keeps what SDKs report and writes it in batches.
	usage *usage.Service
	// changeRequests runs change requests and applies scheduled ones;
	// crAPI serves them.
	changeRequests *changerequests.Service
	crAPI          *changerequestsapi.API
	// routeTable lists the registered routes (Routes).
	routeTable []Route
	// importPaths are the paths whose bodies may reach IMPORT_BODY_LIMIT
	// (route.Import); filled while the routes are registered.
	importPaths map[string]bool
	// access loads what each principal may do.
	access *access.Service
	// secrets seals stored secrets (internal/secretbox).
	secrets *secretbox.Box
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
	box, err := newSecretBox(cfg)
	if err != nil {
		return nil, err
	}
	// Client and frontend token secrets are sealed with it on the way into
	// the database (internal/store).
	st.SetSecretBox(box)
	if !box.CanSeal() {
		log.Warn("SECRETS_KEY is not set: new client and frontend API tokens are shown once only, no OIDC client secret can be stored, and integrations' secrets are sealed with a key kept in the database")
	}
	acc := access.NewService(st)
	s := &Server{secrets: box, cfg: cfg, store: st, log: log, tokens: newTokenCache(st, acc), access: acc}
	s.ops = opsapi.New(st)
	s.usage = usage.New(cfg.Usage, st, log)
	s.sdk = sdkapi.New(sdkapi.Config{BodyLimit: cfg.BodyLimit, Streaming: cfg.Streaming}, st, log, s.tokens, s.ops.FrontendRequests, s.usage)
	s.ops.Ready = s.sdk.Prepared
	s.ops.MustRegister(s.sdk.Collectors()...)
	s.ops.MustRegister(s.usage.Collectors()...)
	if s.signals, err = s.newSignals(); err != nil {
		return nil, err
	}
	s.admin = adminapi.New(st, s.signals, s.usage)
	icfg := cfg.Integrations
	icfg.Secrets = box
	if s.integrations, err = integrations.New(icfg, st, log, cfg.BaseURL); err != nil {
		return nil, err
	}
	s.addons = integrationsapi.New(s.integrations)
	s.admin.SetInstance(adminapi.Instance{BaseURL: cfg.BaseURL, BasePath: cfg.BasePath})
	if s.changeRequests, err = changerequests.New(cfg.ChangeRequests, st, log); err != nil {
		return nil, err
	}
	s.crAPI = changerequestsapi.New(s.changeRequests)
	s.admin.ChangeRequests = s.changeRequests
	// The gate keeps protected environments to change requests on every
	// surface; it reads its setting from the store it is given.
	domain.SetChangeGate(changerequests.Gate{})
	s.accounts = accounts.New(st, cfg.BasePath, cfg.BaseURL, acc)
	if s.sso, err = s.newSSO(); err != nil {
		return nil, err
	}
	s.ssoAPI = ssoapi.New(s.sso, st, s.accounts, cfg.BasePath, cfg.BaseURL, log)
	if err := s.mountWebUI(); err != nil {
		return nil, err
	}
	s.api, s.routeTable = s.routes()
	s.ops.OpenAPI = openAPIDocument(s.routeTable)
	// Security headers go on before anything else runs, so that every
	// answer carries them, whoever writes it.
	s.handler = httpserver.PageHeaders(s.withBasePath(s.api))
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
	go s.usage.Run(ctx)
	go s.sdk.RunStreaming(ctx)
	defer s.runSignals(ctx)()
	defer s.runIntegrations(ctx)()
	defer s.runChangeRequests(ctx)()
	t := time.NewTicker(s.cfg.RevisionPollInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			// Storage trouble is logged by the store, once, not at each poll.
			if _, err := s.store.LatestEventID(ctx); err != nil && ctx.Err() == nil && !apierr.IsDatabase(err) {
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
	err := hs.Shutdown(shutdownCtx)
	// Every report accepted before the shutdown is written now.
	flushErr := s.flushAtShutdown()
	if err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return flushErr
}

// FlushUsage writes the SDK usage and instances counted in memory now,
// instead of at the next flush interval.
func (s *Server) FlushUsage(ctx context.Context) error { return s.usage.Flush(ctx) }

// flushAtShutdown writes what SDKs reported before the server stopped
// accepting requests.
func (s *Server) flushAtShutdown() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.usage.Flush(ctx); err != nil {
		return fmt.Errorf("writing SDK usage at shutdown: %w", err)
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

// newSecretBox opens the box that seals stored secrets: SECRETS_KEY, or
// on SQLite a generated key kept next to the database file.
func newSecretBox(cfg Config) (*secretbox.Box, error) {
	keyFile := ""
	if cfg.Secrets.Key == "" && cfg.DatabaseURL == "" && cfg.DatabasePath != "" {
		keyFile = filepath.Join(filepath.Dir(cfg.DatabasePath), "secrets.key")
	}
	return secretbox.New(cfg.Secrets.Key, keyFile)
}

// newSSO builds single sign-on: the client secret is sealed with the
// server's box, and the break-glass admin is the first admin.
func (s *Server) newSSO() (*sso.Service, error) {
	cfg := s.cfg.SSO
	cfg.Secrets = s.secrets
	cfg.BreakGlassUser = s.cfg.InitAdminUser
	if cfg.BreakGlassUser == "" {
		cfg.BreakGlassUser = "admin"
	}
	svc, err := sso.New(cfg, s.store, s.log)
	if err != nil {
		return nil, err
	}
	svc.SetGroupSyncer(ssoGroups{})
	return svc, nil
}

// ssoGroups makes a person's group memberships match the groups whose SSO
// mappings name what their identity provider claims (rbac.SyncSSOGroups).
type ssoGroups struct{}

func (ssoGroups) SyncGroups(tx *store.Tx, u store.User, claimed []string) error {
	return rbac.SyncSSOGroups(tx, u.ID, claimed)
}

// SSO returns the server's single sign-on service (tests reach its HTTP
// client and may replace its GroupSyncer).
func (s *Server) SSO() *sso.Service { return s.sso }

// runIntegrations starts this instance's integration worker, which stops
// when ctx ends, and returns a function that waits until it has stopped
// (and given up its delivery lease).
func (s *Server) runIntegrations(ctx context.Context) (wait func()) {
	done := make(chan struct{})
	go func() { defer close(done); s.integrations.Run(ctx) }()
	return func() { <-done }
}

// runChangeRequests starts this instance's scheduler of change requests,
// which stops when ctx ends, and returns a function that waits until it
// has stopped (and given up its lease).
func (s *Server) runChangeRequests(ctx context.Context) (wait func()) {
	done := make(chan struct{})
	go func() { defer close(done); s.changeRequests.Run(ctx) }()
	return func() { <-done }
}
