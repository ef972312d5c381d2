// Package integrations tells other tools what changed in Bunting: the
// integrations of Unleash's addon API (webhook, Slack, Microsoft Teams,
// Datadog), their configuration with write-only secrets, and their
// delivery.
//
// Delivery is an outbox: a trigger on the events table (migration 00600)
// writes one outbox row per matching enabled integration in the
// transaction that writes the event, so a committed change always has its
// deliveries and a rolled-back one has none, and a server without
// integrations pays one empty lookup per event. One instance at a time
// delivers (a lease); each integration has its own lane that sends its
// deliveries one after the other in event order, so a slow or dead
// receiver holds up only itself. An attempt that fails on the network, by
// a time-out, a 429 or a 5xx is retried with exponential backoff and
// jitter for RetryWindow, each attempt with the same delivery id; other
// answers are final. Every attempt is written to the delivery log. Targets
// are checked against server-side request forgery (targets.go).
package integrations

import (
	"errors"
	"log/slog"
	"net/http"
	"sync"

	"github.com/bunting-flags/bunting/internal/lease"
	"github.com/bunting-flags/bunting/internal/store"
)

// leaseName is the delivery lease's row in the leases table.
const leaseName = "deliveries"

// Service serves the addon API's operations and delivers.
type Service struct {
	cfg     Config
	store   *store.Store
	log     *slog.Logger
	baseURL string
	targets *targets
	client  *http.Client
	secrets *sealer
	lease   *lease.Lease

	// lanes are the running delivery lanes by integration id.
	mu    sync.Mutex
	lanes map[int64]*lane
	// wake wakes the worker (a test send, a configuration change here).
	wake chan struct{}
	// recorder writes the lanes' outcomes.
	recorder *recorder
}

// New builds the service. baseURL is the server's external address
// (BUNTING_URL), used for links to flags ("" for none).
func New(cfg Config, st *store.Store, log *slog.Logger, baseURL string) (*Service, error) {
	if st == nil {
		return nil, errors.New("integrations: store is nil")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sealer, err := newSealer(st, cfg.SecretKey, cfg.Secrets)
	if err != nil {
		return nil, err
	}
	t := newTargets(cfg)
	return &Service{
		cfg: cfg, store: st, log: log, baseURL: baseURL, targets: t, client: t.client(), secrets: sealer,
		lease: lease.New(st, log, leaseName, cfg.LeaseDuration), lanes: map[int64]*lane{}, wake: make(chan struct{}, 1),
		recorder: newRecorder(st),
	}, nil
}

// notify wakes the worker without blocking.
func (s *Service) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}
