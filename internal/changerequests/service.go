// Package changerequests holds change requests and scheduled changes, in
// Unleash's API shape: per project environment, a direct change of the
// environment's configuration may need a request that other people
// approve (four eyes), and an approved request is applied at once or at a
// chosen time.
//
// Every change a request carries is one of the admin API's own flag or
// segment operations, kept with its payload as the matching admin route
// takes it. Drafting runs the operation once in a transaction that is
// rolled back, so a change is validated when it is added with the same
// code that will apply it; applying runs every change through the same
// internal/domain function as the direct route, in one transaction, with
// the same events, plus the request's change-request-* events. Each change
// records the version of what it changes (a strategy, the environment's
// variants, the flag's dependencies, a segment); when that object changed
// since, the request is conflicting and is not applied.
//
// The direct path is closed by Gate, which internal/domain asks before
// every change of an environment's configuration: where requests are on,
// only SKIP_CHANGE_REQUEST (or a request being applied) gets through.
// Scheduled requests are applied by one instance at a time (a lease), in
// a transaction that moves the request from Scheduled to Applied, so each
// is applied exactly once however many instances run.
package changerequests

import (
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/lease"
	"github.com/bunting-flags/bunting/internal/store"
)

// leaseName is the scheduling lease's row in the leases table.
const leaseName = "schedules"

// Config holds the scheduler's timings.
type Config struct {
	// LeaseDuration is how long the scheduling instance's lease lasts
	// without renewal before another instance takes over (5s).
	LeaseDuration time.Duration
	// PollInterval is how often the worker renews its lease and looks for
	// due requests when nothing woke it (1s).
	PollInterval time.Duration
}

// DefaultConfig returns the default timings.
func DefaultConfig() Config {
	return Config{LeaseDuration: 5 * time.Second, PollInterval: time.Second}
}

// Service runs the change request operations and the scheduler.
type Service struct {
	cfg   Config
	store *store.Store
	log   *slog.Logger
	lease *lease.Lease
	wake  chan struct{}
}

// New builds the service.
func New(cfg Config, st *store.Store, log *slog.Logger) (*Service, error) {
	if st == nil {
		return nil, errors.New("changerequests: store is nil")
	}
	if cfg.LeaseDuration <= 0 || cfg.PollInterval <= 0 {
		return nil, errors.New("changerequests: the scheduler's lease and poll interval must be positive")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{cfg: cfg, store: st, log: log, lease: lease.New(st, log, leaseName, cfg.LeaseDuration), wake: make(chan struct{}, 1)}, nil
}

// Store returns the service's store (for reads its HTTP surface makes).
func (s *Service) Store() *store.Store { return s.store }

// notify wakes the scheduler without blocking.
func (s *Service) notify() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// PrincipalKey identifies a principal as the author of requests.
func PrincipalKey(p *domain.Principal) string { return principalKey(p) }

// principalKey identifies a principal across requests: a person by id, an
// admin token by name. The author of a request is told apart from its
// reviewers by it.
func principalKey(p *domain.Principal) string {
	switch {
	case p.User != nil:
		return "user:" + strconv.FormatInt(p.User.ID, 10)
	case p.Kind == domain.KindAdminToken:
		return "token:" + p.Name
	default:
		return "name:" + p.Name
	}
}

// Gate is the domain.ChangeGate of change requests: where they are on, a
// direct change needs SKIP_CHANGE_REQUEST, unless it is a change of a
// request being applied.
type Gate struct{}

// AllowDirectChange implements domain.ChangeGate.
func (Gate) AllowDirectChange(q store.Q, p *domain.Principal, project string, envs []string) error {
	if p != nil && p.ChangeRequest != 0 {
		return nil
	}
	protected, err := q.ProtectedEnvironments(project)
	if err != nil || len(protected) == 0 {
		return err
	}
	for _, env := range protected {
		if len(envs) > 0 && !contains(envs, env) {
			continue
		}
		if p.Can(domain.PermSkipChangeRequest, project, env) {
			continue
		}
		return changeRequestRequired(project, env)
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// changeRequestRequired is the 403 for a direct change of a protected
// environment.
func changeRequestRequired(project, env string) error {
	return apierr.Forbidden("Changes in environment %q of project %q need a change request (POST /api/admin/projects/%s/environments/%s/change-requests); "+
		"to change it directly you need the %q permission in the %q environment.", env, project, project, env, domain.PermSkipChangeRequest, env)
}
