// Package signals is Bunting's signal endpoints and actions: external
// systems post signals to named endpoints with endpoint tokens, and action
// sets react to matching signals by switching flags on or off as a service
// account.
//
// The package owns its HTTP handlers (registered by the server in
// routes_signals.go), its store queries (internal/store/signals.go and
// actions.go) and a worker that processes signals. What belongs to the
// server — who the caller is, what a root role may do, and how a flag is
// switched — comes in through Hooks, so this package does not import the
// server.
package signals

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"

	"github.com/bunting-flags/bunting/internal/store"
)

// Hooks are the server functions the signals service relies on.
type Hooks struct {
	// Actor returns the authenticated caller of an admin request, for
	// events and createdByUserId.
	Actor func(r *http.Request) store.Actor
	// RoleCan reports whether a root role holds a permission.
	RoleCan func(role, permission string) bool
	// SetFeatureEnabled switches a flag on or off in an environment through
	// the server's on/off operation (one transaction with its events, as
	// actor holding root role role), returning a domain error when it cannot.
	SetFeatureEnabled func(ctx context.Context, actor store.Actor, role, project, feature, environment string, enabled bool) error
	// FeaturesByTag lists a project's flags carrying a tag. Nil when tags
	// are not available; the _BY_TAG actions then fail with that reason.
	FeaturesByTag func(ctx context.Context, project, tagType, tagValue string) ([]string, error)
}

// Service serves the signal and action API and processes signals.
type Service struct {
	cfg      Config
	store    *store.Store
	log      *slog.Logger
	hooks    Hooks
	baseURL  string
	instance string
	wake     chan struct{}
}

// New builds the service. baseURL prefixes the endpoint URLs shown on
// creation (may be empty).
func New(cfg Config, st *store.Store, log *slog.Logger, hooks Hooks, baseURL string) (*Service, error) {
	if st == nil {
		return nil, errors.New("signals: store is nil")
	}
	if hooks.Actor == nil || hooks.RoleCan == nil || hooks.SetFeatureEnabled == nil {
		return nil, errors.New("signals: Actor, RoleCan and SetFeatureEnabled hooks are required")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &Service{
		cfg: cfg, store: st, log: log, hooks: hooks, baseURL: baseURL,
		instance: hex.EncodeToString(b[:]), wake: make(chan struct{}, 1),
	}, nil
}

// Instance is this process's worker id, recorded on the signals it claims.
func (s *Service) Instance() string { return s.instance }

// notify wakes this instance's worker without blocking.
func (s *Service) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
