package adminapi

import (
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/server/route"
	"github.com/bunting-flags/bunting/internal/store"
)

// RegisterSignals registers the signal endpoint management, ingestion and
// action routes (internal/signals provides the handlers).
func (s *API) RegisterSignals(r route.Registrar) {
	sg := s.signals
	r.Admin("GET /api/admin/signal-endpoints", domain.PermAdmin, sg.ListEndpoints,
		api("Signals", "List signal endpoints with their tokens", 200, nil, signalEndpointList{}))
	r.Admin("POST /api/admin/signal-endpoints", domain.PermAdmin, sg.CreateEndpoint, withJSON,
		api("Signals", "Create a signal endpoint (name URL-safe and unique, description, enabled)", 201, signalEndpointBody{}, signalEndpointView{}))
	r.Admin("PUT /api/admin/signal-endpoints/{id}", domain.PermAdmin, sg.UpdateEndpoint, withJSON,
		api("Signals", "Update a signal endpoint", 200, signalEndpointBody{}, signalEndpointView{}))
	r.Admin("DELETE /api/admin/signal-endpoints/{id}", domain.PermAdmin, sg.DeleteEndpoint,
		api("Signals", "Delete a signal endpoint with its tokens and signals", 200, nil, nil))
	r.Admin("POST /api/admin/signal-endpoints/{id}/on", domain.PermAdmin, sg.EnableEndpoint,
		api("Signals", "Enable a signal endpoint", 200, nil, signalEndpointView{}))
	r.Admin("POST /api/admin/signal-endpoints/{id}/off", domain.PermAdmin, sg.DisableEndpoint,
		api("Signals", "Disable a signal endpoint", 200, nil, signalEndpointView{}))
	r.Admin("GET /api/admin/signal-endpoints/{id}/signals", domain.PermAdmin, sg.ListEndpointSignals,
		api("Signals", "An endpoint's signals, newest first (limit, offset)", 200, nil, endpointSignalList{}))
	r.Admin("GET /api/admin/signal-endpoints/{id}/tokens", domain.PermAdmin, sg.ListTokens,
		api("Signals", "List an endpoint's tokens", 200, nil, signalEndpointTokenList{}))
	r.Admin("POST /api/admin/signal-endpoints/{id}/tokens", domain.PermAdmin, sg.CreateToken, withJSON,
		api("Signals", "Create an endpoint token (the secret is in this response only)", 201, signalTokenBody{}, signalTokenCreated{}))
	r.Admin("PUT /api/admin/signal-endpoints/{id}/tokens/{tokenId}", domain.PermAdmin, sg.RenameToken, withJSON,
		api("Signals", "Rename an endpoint token", 200, signalTokenBody{}, store.SignalEndpointToken{}))
	r.Admin("DELETE /api/admin/signal-endpoints/{id}/tokens/{tokenId}", domain.PermAdmin, sg.DeleteToken,
		api("Signals", "Delete an endpoint token", 200, nil, nil))
	r.Admin("GET /api/admin/signals", domain.PermAdmin, sg.ListSignals,
		api("Signals", "Every endpoint's signals, newest first (from, to, limit, offset)", 200, nil, signalList{}))
	r.Public("POST /api/signal-endpoint/{name}", sg.Ingest,
		api("Signals", "Send a signal (any JSON object; the endpoint's token as Bearer)", 200, map[string]any{}, ingestedSignals{}))

	r.Admin("GET /api/admin/projects/{projectId}/actions", domain.PermAdmin, sg.ListActionSets,
		api("Actions", "List a project's action sets", 200, nil, actionSetList{}))
	r.Admin("POST /api/admin/projects/{projectId}/actions", domain.PermAdmin, sg.CreateActionSet, withJSON,
		api("Actions", "Create an action set", 201, actionSetBody{}, store.ActionSet{}))
	r.Admin("GET /api/admin/projects/{projectId}/actions/config", "", sg.ActionsConfig,
		api("Actions", "The action types and their parameters", 200, nil, actionTypes{}))
	r.Admin("GET /api/admin/projects/{projectId}/actions/{id}", domain.PermAdmin, sg.GetActionSet,
		api("Actions", "Get an action set", 200, nil, store.ActionSet{}))
	r.Admin("PUT /api/admin/projects/{projectId}/actions/{id}", domain.PermAdmin, sg.UpdateActionSet, withJSON,
		api("Actions", "Update an action set", 200, actionSetBody{}, store.ActionSet{}))
	r.Admin("DELETE /api/admin/projects/{projectId}/actions/{id}", domain.PermAdmin, sg.DeleteActionSet,
		api("Actions", "Delete an action set", 200, nil, nil))
	r.Admin("POST /api/admin/projects/{projectId}/actions/{id}/on", domain.PermAdmin, sg.EnableActionSet,
		api("Actions", "Enable an action set", 200, nil, store.ActionSet{}))
	r.Admin("POST /api/admin/projects/{projectId}/actions/{id}/off", domain.PermAdmin, sg.DisableActionSet,
		api("Actions", "Disable an action set", 200, nil, store.ActionSet{}))
	r.Admin("GET /api/admin/projects/{projectId}/actions/{id}/events", domain.PermAdmin, sg.ListActionSetEvents,
		api("Actions", "An action set's runs, newest first (limit, offset)", 200, nil, actionSetEventList{}))
}
