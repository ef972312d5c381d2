package server

import "github.com/bunting-flags/bunting/internal/domain"

// Paths and tags of the signal endpoint and action operations.
const (
	opsSignalEndpoints = "/api/admin/signal-endpoints"
	opsActions         = "/api/admin/projects/{projectId}/actions"
	opsTagSignals      = "Signals"
	opsTagActions      = "Actions"
)

// signalsOperations are the documented signal endpoint and action
// operations; OpenAPIDocument lists them after adminOperations.
var signalsOperations = []apiOperation{
	{"GET", opsSignalEndpoints, "List signal endpoints with their tokens", opsTagSignals, domain.PermAdmin, "", "Object", 200},
	{"POST", opsSignalEndpoints, "Create a signal endpoint (name URL-safe and unique, description, enabled)", opsTagSignals, domain.PermAdmin, "Object", "Object", 201},
	{"PUT", opsSignalEndpoints + "/{id}", "Update a signal endpoint", opsTagSignals, domain.PermAdmin, "Object", "Object", 200},
	{"DELETE", opsSignalEndpoints + "/{id}", "Delete a signal endpoint with its tokens and signals", opsTagSignals, domain.PermAdmin, "", "", 200},
	{"POST", opsSignalEndpoints + "/{id}/on", "Enable a signal endpoint", opsTagSignals, domain.PermAdmin, "", "Object", 200},
	{"POST", opsSignalEndpoints + "/{id}/off", "Disable a signal endpoint", opsTagSignals, domain.PermAdmin, "", "Object", 200},
	{"GET", opsSignalEndpoints + "/{id}/signals", "An endpoint's signals, newest first (limit, offset)", opsTagSignals, domain.PermAdmin, "", "Object", 200},
	{"GET", opsSignalEndpoints + "/{id}/tokens", "List an endpoint's tokens", opsTagSignals, domain.PermAdmin, "", "Object", 200},
	{"POST", opsSignalEndpoints + "/{id}/tokens", "Create an endpoint token (the secret is in this response only)", opsTagSignals, domain.PermAdmin, "Object", "Object", 201},
	{"PUT", opsSignalEndpoints + "/{id}/tokens/{tokenId}", "Rename an endpoint token", opsTagSignals, domain.PermAdmin, "Object", "Object", 200},
	{"DELETE", opsSignalEndpoints + "/{id}/tokens/{tokenId}", "Delete an endpoint token", opsTagSignals, domain.PermAdmin, "", "", 200},
	{"GET", "/api/admin/signals", "Every endpoint's signals, newest first (from, to, limit, offset)", opsTagSignals, domain.PermAdmin, "", "Object", 200},
	{"GET", opsActions, "List a project's action sets", opsTagActions, domain.PermAdmin, "", "Object", 200},
	{"POST", opsActions, "Create an action set", opsTagActions, domain.PermAdmin, "Object", "Object", 201},
	{"GET", opsActions + "/config", "The action types and their parameters", opsTagActions, "", "", "Object", 200},
	{"GET", opsActions + "/{id}", "Get an action set", opsTagActions, domain.PermAdmin, "", "Object", 200},
	{"PUT", opsActions + "/{id}", "Update an action set", opsTagActions, domain.PermAdmin, "Object", "Object", 200},
	{"DELETE", opsActions + "/{id}", "Delete an action set", opsTagActions, domain.PermAdmin, "", "", 200},
	{"POST", opsActions + "/{id}/on", "Enable an action set", opsTagActions, domain.PermAdmin, "", "Object", 200},
	{"POST", opsActions + "/{id}/off", "Disable an action set", opsTagActions, domain.PermAdmin, "", "Object", 200},
	{"GET", opsActions + "/{id}/events", "An action set's runs, newest first (limit, offset)", opsTagActions, domain.PermAdmin, "", "Object", 200},
}
