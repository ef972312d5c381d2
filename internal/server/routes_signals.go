package server

import (
	"context"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/signals"
)

// signalsRoutes registers the signal endpoint management, ingestion and
// action routes (internal/signals provides the handlers).
func (s *Server) signalsRoutes(r *router) {
	sg := s.signals
	r.admin("GET /api/admin/signal-endpoints", domain.PermAdmin, sg.ListEndpoints)
	r.admin("POST /api/admin/signal-endpoints", domain.PermAdmin, sg.CreateEndpoint, withJSON)
	r.admin("PUT /api/admin/signal-endpoints/{id}", domain.PermAdmin, sg.UpdateEndpoint, withJSON)
	r.admin("DELETE /api/admin/signal-endpoints/{id}", domain.PermAdmin, sg.DeleteEndpoint)
	r.admin("POST /api/admin/signal-endpoints/{id}/on", domain.PermAdmin, sg.EnableEndpoint)
	r.admin("POST /api/admin/signal-endpoints/{id}/off", domain.PermAdmin, sg.DisableEndpoint)
	r.admin("GET /api/admin/signal-endpoints/{id}/signals", domain.PermAdmin, sg.ListEndpointSignals)
	r.admin("GET /api/admin/signal-endpoints/{id}/tokens", domain.PermAdmin, sg.ListTokens)
	r.admin("POST /api/admin/signal-endpoints/{id}/tokens", domain.PermAdmin, sg.CreateToken, withJSON)
	r.admin("PUT /api/admin/signal-endpoints/{id}/tokens/{tokenId}", domain.PermAdmin, sg.RenameToken, withJSON)
	r.admin("DELETE /api/admin/signal-endpoints/{id}/tokens/{tokenId}", domain.PermAdmin, sg.DeleteToken)
	r.admin("GET /api/admin/signals", domain.PermAdmin, sg.ListSignals)
	r.public("POST /api/signal-endpoint/{name}", sg.Ingest)

	r.admin("GET /api/admin/projects/{projectId}/actions", domain.PermAdmin, sg.ListActionSets)
	r.admin("POST /api/admin/projects/{projectId}/actions", domain.PermAdmin, sg.CreateActionSet, withJSON)
	r.admin("GET /api/admin/projects/{projectId}/actions/config", "", sg.ActionsConfig)
	r.admin("GET /api/admin/projects/{projectId}/actions/{id}", domain.PermAdmin, sg.GetActionSet)
	r.admin("PUT /api/admin/projects/{projectId}/actions/{id}", domain.PermAdmin, sg.UpdateActionSet, withJSON)
	r.admin("DELETE /api/admin/projects/{projectId}/actions/{id}", domain.PermAdmin, sg.DeleteActionSet)
	r.admin("POST /api/admin/projects/{projectId}/actions/{id}/on", domain.PermAdmin, sg.EnableActionSet)
	r.admin("POST /api/admin/projects/{projectId}/actions/{id}/off", domain.PermAdmin, sg.DisableActionSet)
	r.admin("GET /api/admin/projects/{projectId}/actions/{id}/events", domain.PermAdmin, sg.ListActionSetEvents)
}

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
