package signals

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// Run states of an action set event and of its actions.
const (
	StateNotStarted = "not started"
	StateStarted    = "started"
	StateSuccess    = "success"
	StateFailed     = "failed"
)

// Run processes signals until ctx ends: at once when this instance receives
// one, and every PollInterval for those other instances received. Only the
// instance holding the processing lease works, one signal at a time in
// arrival order; each signal is claimed by a conditional UPDATE first, so
// no signal is processed twice even if two instances overlap.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.PollInterval)
	defer t.Stop()
	defer s.lease.Release()
	lastPrune := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.wake:
		case <-t.C:
		}
		// Storage trouble is logged by the store, once, not at each poll.
		if err := s.processPending(ctx); err != nil && ctx.Err() == nil && !apierr.IsDatabase(err) {
			s.log.Warn("signal processing failed", "err", err)
		}
		if time.Since(lastPrune) > time.Minute {
			lastPrune = time.Now()
			if err := s.store.Q(ctx).PruneSignalRate(s.store.Now().Add(-time.Minute)); err != nil && ctx.Err() == nil {
				s.log.Warn("pruning signal rate windows failed", "err", err)
			}
		}
	}
}

// processPending handles every unprocessed signal while this instance
// holds the lease.
func (s *Service) processPending(ctx context.Context) error {
	q := s.store.Q(ctx)
	for {
		pending, err := q.HasUnprocessedSignals()
		if err != nil || !pending {
			return err
		}
		held, err := s.lease.Acquire(ctx)
		if err != nil || !held {
			return err
		}
		// A claim older than a lease, never marked processed, was left by
		// an instance that stopped mid-way: process the signal again
		// rather than never.
		released, err := q.ReleaseAbandonedSignalClaims(s.store.Now().Add(-s.cfg.LeaseDuration))
		if err != nil {
			return err
		}
		if released > 0 {
			s.log.Warn("re-queued signals whose processing an instance abandoned", "signals", released)
		}
		sg, ok, err := q.ClaimNextSignal(s.lease.Instance())
		if err != nil || !ok {
			return err
		}
		err = s.process(ctx, sg)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			s.log.Warn("signal not processed", "signal", sg.ID, "err", err)
		}
		if err := q.MarkSignalProcessed(sg.ID); err != nil {
			return err
		}
	}
}

// process runs every enabled action set of the signal's source whose
// filters match its payload, in id order.
func (s *Service) process(ctx context.Context, sg store.Signal) error {
	sets, err := s.store.Q(ctx).EnabledActionSetsForSource(sg.Source, sg.SourceID)
	if err != nil {
		return err
	}
	pctx := payloadContext(sg.Payload)
	for _, set := range sets {
		if !filtersMatch(set.Match.Payload, pctx) {
			continue
		}
		if err := s.runActionSet(ctx, set, sg); err != nil {
			return err
		}
	}
	return nil
}

// payloadContext turns the payload's top-level scalar values into context
// properties (numbers and booleans in their JSON spelling), so filters
// work like strategy constraints. Built-in field names also fill the
// matching context field.
func payloadContext(payload json.RawMessage) *engine.Context {
	ctx := &engine.Context{Properties: map[string]string{}}
	var top map[string]json.RawMessage
	if json.Unmarshal(payload, &top) != nil {
		return ctx
	}
	for k, raw := range top {
		v, ok := scalarString(raw)
		if !ok {
			continue
		}
		ctx.Properties[k] = v
		switch k {
		case "userId":
			ctx.UserID = v
		case "sessionId":
			ctx.SessionID = v
		case "remoteAddress":
			ctx.RemoteAddress = v
		case "environment":
			ctx.Environment = v
		case "appName":
			ctx.AppName = v
		case "currentTime":
			ctx.CurrentTime = v
		}
	}
	return ctx
}

func scalarString(raw json.RawMessage) (string, bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	switch x := v.(type) {
	case string:
		return x, true
	case float64:
		return strings.TrimSpace(string(raw)), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// filtersMatch evaluates the filters with the engine; none means match.
func filtersMatch(filters map[string]store.PayloadFilter, ctx *engine.Context) bool {
	cs := make([]engine.Constraint, 0, len(filters))
	for key, f := range filters {
		cs = append(cs, engine.Constraint{ContextName: key, Operator: f.Operator, Values: f.Values, Value: f.Value,
			Inverted: f.Inverted, CaseInsensitive: f.CaseInsensitive})
	}
	return engine.CompileConstraints(cs, engine.Options{}).Match(ctx)
}

// actionRun is an action with its state in a run.
type actionRun struct {
	store.Action
	State   string `json:"state"`
	Details string `json:"details,omitempty"`
}

// actionSetRun is the action set as recorded by a run.
type actionSetRun struct {
	store.ActionSet
	Actions []actionRun `json:"actions"`
}

// runActionSet records a run, executes the actions in order as the set's
// actor and stops at the first failure.
func (s *Service) runActionSet(ctx context.Context, set store.ActionSet, sg store.Signal) error {
	q := s.store.Q(ctx)
	run := actionSetRun{ActionSet: set}
	for _, a := range set.Actions {
		run.Actions = append(run.Actions, actionRun{Action: a, State: StateNotStarted})
	}
	signalJSON, err := json.Marshal(sg)
	if err != nil {
		return err
	}
	snapshot := func() json.RawMessage { b, _ := json.Marshal(run); return b }
	eventID, err := q.InsertActionSetEvent(store.ActionSetEvent{ActionSetID: set.ID, SignalID: sg.ID, State: StateStarted,
		Signal: signalJSON, ActionSet: snapshot(), CreatedAt: s.store.Now()})
	if err != nil {
		return err
	}
	state := StateSuccess
	actor, err := s.actorOf(ctx, set.ActorID)
	for i := range run.Actions {
		if err == nil {
			run.Actions[i].State = StateStarted
			if err = q.UpdateActionSetEvent(eventID, StateStarted, snapshot()); err != nil {
				return err
			}
			err = s.execute(ctx, actor, run.Actions[i].Action)
		}
		if err != nil {
			state = StateFailed
			run.Actions[i].State, run.Actions[i].Details = StateFailed, err.Error()
			break
		}
		run.Actions[i].State = StateSuccess
	}
	return q.UpdateActionSetEvent(eventID, state, snapshot())
}

// actorOf loads the service account an action set runs as, with what it
// may do (its root role, groups and project roles).
func (s *Service) actorOf(ctx context.Context, id int64) (*domain.Principal, error) {
	u, err := s.store.Q(ctx).User(id)
	if err != nil {
		return nil, fmt.Errorf("the action set's actor %d could not be loaded: %w", id, err)
	}
	if !u.IsService {
		return nil, fmt.Errorf("the action set's actor %d is not a service account", id)
	}
	grants, err := s.access.ForUser(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("the action set's actor %d: %w", id, err)
	}
	name := "service-account-" + strconv.FormatInt(id, 10)
	switch {
	case u.Username != nil && *u.Username != "":
		name = *u.Username
	case u.Name != nil && *u.Name != "":
		name = *u.Name
	}
	return &domain.Principal{Kind: domain.KindUser, Name: name, UserID: &u.ID, RootRole: u.RootRole, User: &u, Access: grants}, nil
}

// execute runs one action as p after checking it holds the action's
// permissions in the action's project and environment.
func (s *Service) execute(ctx context.Context, p *domain.Principal, a store.Action) error {
	def, ok := domain.ActionDefinitions[a.Action]
	if !ok {
		return fmt.Errorf("unknown action %q", a.Action)
	}
	params := a.ExecutionParams
	for _, perm := range def.Permissions {
		if !p.Can(perm, params["project"], params["environment"]) {
			return fmt.Errorf("service account %s lacks the %s permission in project %q and environment %q", p.Name, perm, params["project"], params["environment"])
		}
	}
	if !def.ByTag {
		return s.setEnabled(ctx, p, params["project"], params["featureName"], params["environment"], def.Enables)
	}
	tagType, tagValue, _ := strings.Cut(params["tag"], ":")
	names, err := s.store.Q(ctx).FeatureNamesByTag(params["project"], tagType, tagValue)
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := s.setEnabled(ctx, p, params["project"], name, params["environment"], def.Enables); err != nil {
			return fmt.Errorf("flag %s: %w", name, err)
		}
	}
	return nil
}

// setEnabled switches a flag on or off in an environment as the action
// set's service account, in one transaction with its events, through the
// same operation as the admin on/off routes (domain.SetEnabled).
func (s *Service) setEnabled(ctx context.Context, p *domain.Principal, project, feature, env string, enabled bool) error {
	return s.store.Tx(ctx, func(tx *store.Tx) error {
		_, _, err := domain.SetEnabled(tx, p, project, feature, env, enabled, false)
		return err
	})
}
