// Package signals is Bunting's signal endpoints and actions: external
// systems post signals to named endpoints with endpoint tokens, and action
// sets react to matching signals by switching flags on or off as a service
// account.
//
// The package owns its HTTP handlers (registered by the server in
// internal/server/adminapi/routes_signals.go), which decode a request, run one internal/domain
// operation in a transaction (domain/signals.go for endpoints and their
// tokens, domain/actions.go for action sets) and answer; signal ingestion;
// and a worker that processes signals. The rules (permissions, validation,
// limits, events) and how a flag is switched live in internal/domain,
// which the admin API uses too.
package signals

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"github.com/bunting-flags/bunting/internal/access"
	"log/slog"

	"github.com/bunting-flags/bunting/internal/store"
)

// Service serves the signal and action API and processes signals.
type Service struct {
	cfg      Config
	store    *store.Store
	log      *slog.Logger
	baseURL  string
	instance string
	wake     chan struct{}
	// access loads what an action set's service account may do.
	access *access.Service
}

// New builds the service. baseURL prefixes the endpoint URLs shown on
// creation (may be empty).
func New(cfg Config, st *store.Store, log *slog.Logger, baseURL string) (*Service, error) {
	if st == nil {
		return nil, errors.New("signals: store is nil")
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
		cfg: cfg, store: st, log: log, baseURL: baseURL,
		instance: hex.EncodeToString(b[:]), wake: make(chan struct{}, 1), access: access.NewService(st),
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
