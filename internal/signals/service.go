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
	"errors"
	"log/slog"

	"github.com/bunting-flags/bunting/internal/access"
	"github.com/bunting-flags/bunting/internal/lease"
	"github.com/bunting-flags/bunting/internal/store"
)

// leaseName is the processing lease's row in the leases table.
const leaseName = "actions"

// Service serves the signal and action API and processes signals.
type Service struct {
	cfg     Config
	store   *store.Store
	log     *slog.Logger
	baseURL string
	lease   *lease.Lease
	wake    chan struct{}
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
	return &Service{
		cfg: cfg, store: st, log: log, baseURL: baseURL,
		lease: lease.New(st, log, leaseName, cfg.LeaseDuration), wake: make(chan struct{}, 1), access: access.NewService(st),
	}, nil
}

// Instance is this process's worker id, recorded on the signals it claims.
func (s *Service) Instance() string { return s.lease.Instance() }

// notify wakes this instance's worker without blocking.
func (s *Service) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
