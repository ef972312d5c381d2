package server

import (
	"context"
	"time"

	"github.com/bunting-flags/bunting/internal/domain"
)

// staleCheckInterval is how often flags are checked against their type's
// lifetime (Unleash checks every minute).
const staleCheckInterval = time.Minute

// runStaleChecks marks potentially stale flags once a tick until ctx ends.
// The first check waits for the first tick: a check at start would race
// with whatever the process does first (tests call CheckStaleness
// themselves), and lifetimes are counted in days.
func (s *Server) runStaleChecks(ctx context.Context) {
	t := time.NewTicker(staleCheckInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := s.CheckStaleness(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("potentially-stale check failed", "err", err)
		}
	}
}

// CheckStaleness marks the flags that outlived their type's lifetime
// potentially stale (domain.CheckStaleness) and returns how many it marked.
func (s *Server) CheckStaleness(ctx context.Context) (int, error) {
	return domain.CheckStaleness(ctx, s.store)
}
