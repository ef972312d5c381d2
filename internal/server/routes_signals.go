package server

import (
	"context"
	"net/http"

	"github.com/bunting-flags/bunting/internal/signals"
	"github.com/bunting-flags/bunting/internal/store"
)

// signalsRoutes registers the signal endpoint management, ingestion and
// action routes (internal/signals provides the handlers).
func (s *Server) signalsRoutes(r *router) {
	sg := s.signals
	r.admin("GET /api/admin/signal-endpoints", PermAdmin, sg.ListEndpoints)
	r.admin("POST /api/admin/signal-endpoints", PermAdmin, sg.CreateEndpoint, withJSON)
	r.admin("PUT /api/admin/signal-endpoints/{id}", PermAdmin, sg.UpdateEndpoint, withJSON)
	r.admin("DELETE /api/admin/signal-endpoints/{id}", PermAdmin, sg.DeleteEndpoint)
	r.admin("POST /api/admin/signal-endpoints/{id}/on", PermAdmin, sg.EnableEndpoint)
	r.admin("POST /api/admin/signal-endpoints/{id}/off", PermAdmin, sg.DisableEndpoint)
	r.admin("GET /api/admin/signal-endpoints/{id}/signals", PermAdmin, sg.ListEndpointSignals)
	r.admin("GET /api/admin/signal-endpoints/{id}/tokens", PermAdmin, sg.ListTokens)
	r.admin("POST /api/admin/signal-endpoints/{id}/tokens", PermAdmin, sg.CreateToken, withJSON)
	r.admin("PUT /api/admin/signal-endpoints/{id}/tokens/{tokenId}", PermAdmin, sg.RenameToken, withJSON)
	r.admin("DELETE /api/admin/signal-endpoints/{id}/tokens/{tokenId}", PermAdmin, sg.DeleteToken)
	r.admin("GET /api/admin/signals", PermAdmin, sg.ListSignals)
	r.public("POST /api/signal-endpoint/{name}", sg.Ingest)

	r.admin("GET /api/admin/projects/{projectId}/actions", PermAdmin, sg.ListActionSets)
	r.admin("POST /api/admin/projects/{projectId}/actions", PermAdmin, sg.CreateActionSet, withJSON)
	r.admin("GET /api/admin/projects/{projectId}/actions/config", "", sg.ActionsConfig)
	r.admin("GET /api/admin/projects/{projectId}/actions/{id}", PermAdmin, sg.GetActionSet)
	r.admin("PUT /api/admin/projects/{projectId}/actions/{id}", PermAdmin, sg.UpdateActionSet, withJSON)
	r.admin("DELETE /api/admin/projects/{projectId}/actions/{id}", PermAdmin, sg.DeleteActionSet)
	r.admin("POST /api/admin/projects/{projectId}/actions/{id}/on", PermAdmin, sg.EnableActionSet)
	r.admin("POST /api/admin/projects/{projectId}/actions/{id}/off", PermAdmin, sg.DisableActionSet)
	r.admin("GET /api/admin/projects/{projectId}/actions/{id}/events", PermAdmin, sg.ListActionSetEvents)
}

// newSignals builds the signals service with the server's hooks.
func (s *Server) newSignals() (*signals.Service, error) {
	return signals.New(s.cfg.Signals, s.store, s.log, signals.Hooks{
		Actor: func(r *http.Request) store.Actor { return PrincipalFrom(r.Context()).Actor() },
		RoleCan: func(role, perm string) bool {
			return (&Principal{Kind: KindUser, RootRole: role}).Can(perm, "", "")
		},
		SetFeatureEnabled: s.setFeatureEnabledForSignals,
		FeaturesByTag: func(ctx context.Context, project, tagType, tagValue string) ([]string, error) {
			return s.store.Q(ctx).FeatureNamesByTag(project, tagType, tagValue)
		},
	}, s.cfg.BaseURL)
}

// runSignals starts this instance's signal worker, which stops when ctx
// ends, and returns a function that waits until it has stopped (and given
// up its processing lease).
func (s *Server) runSignals(ctx context.Context) (wait func()) {
	done := make(chan struct{})
	go func() { defer close(done); s.signals.Run(ctx) }()
	return func() { <-done }
}

// setFeatureEnabledForSignals switches a flag on or off in an environment
// as a service account with a root role, through the same steps as the
// admin on/off route (turning on adds a default strategy when none is
// active), in one transaction with its events.
func (s *Server) setFeatureEnabledForSignals(ctx context.Context, actor store.Actor, role, project, feature, env string, enabled bool) error {
	p := &Principal{Kind: KindUser, Name: actor.Name, UserID: actor.UserID, RootRole: role}
	return s.store.Tx(ctx, func(tx *store.Tx) error {
		sc := featureEnvScope{project: project, feature: feature, env: env}
		var err error
		if sc.f, err = tx.FeatureInProject(project, feature); err != nil {
			return err
		}
		if sc.fe, err = tx.FeatureEnvironment(feature, env); err != nil {
			return err
		}
		if sc.f.Archived {
			return archivedError()
		}
		if enabled {
			if err := ensureActiveStrategy(tx, sc, p, false); err != nil {
				return err
			}
		}
		return setEnvironmentEnabled(tx, sc, p, enabled)
	})
}
