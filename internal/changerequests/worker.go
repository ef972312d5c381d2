package changerequests

import (
	"context"
	"time"
)

// Run applies scheduled requests when they are due until ctx ends. Only
// the instance holding the scheduling lease works; it sleeps until the
// earliest pending schedule, and looks again when a change is committed
// (here, or by another instance as LISTEN/NOTIFY or the revision poll
// report it: a request scheduled elsewhere) and every PollInterval.
func (s *Service) Run(ctx context.Context) {
	poll := time.NewTicker(s.cfg.PollInterval)
	defer poll.Stop()
	due := time.NewTimer(time.Hour)
	defer due.Stop()
	defer s.lease.Release()
	for {
		changes := s.store.Changes()
		held, _ := s.lease.Keep(ctx, s.cfg.PollInterval)
		wait := time.Hour
		if held {
			s.applyDue(ctx)
			at, ok, err := s.store.Q(ctx).NextScheduledChangeRequest()
			if err != nil && ctx.Err() == nil {
				s.log.Warn("changerequests: looking for scheduled change requests failed", "err", err)
			}
			if ok {
				wait = max(at.Sub(s.store.Now()), 0)
			}
		}
		due.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-changes:
		case <-s.wake:
		case <-poll.C:
		case <-due.C:
		}
	}
}

// applyDue applies every request due now, one transaction each.
func (s *Service) applyDue(ctx context.Context) {
	ids, err := s.store.Q(ctx).DueChangeRequests(s.store.Now())
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("changerequests: looking for due change requests failed", "err", err)
		}
		return
	}
	for _, id := range ids {
		applied, err := s.ApplyScheduled(ctx, id)
		switch {
		case err != nil && ctx.Err() == nil:
			s.log.Warn("changerequests: applying a scheduled change request failed; it is tried again", "id", id, "err", err)
		case applied:
			s.log.Info("changerequests: applied a scheduled change request", "id", id)
		}
	}
}
