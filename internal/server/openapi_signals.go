package server

// The signals part's admin operations, added to the OpenAPI document here
// so the hand-maintained list in openapi.go stays the extras part's.
func init() {
	const (
		ep  = "/api/admin/signal-endpoints"
		act = "/api/admin/projects/{projectId}/actions"
		sig = "Signals"
		acs = "Actions"
	)
	adminOperations = append(adminOperations,
		apiOperation{"GET", ep, "List signal endpoints with their tokens", sig, PermAdmin, "", "Object", 200},
		apiOperation{"POST", ep, "Create a signal endpoint (name URL-safe and unique, description, enabled)", sig, PermAdmin, "Object", "Object", 201},
		apiOperation{"PUT", ep + "/{id}", "Update a signal endpoint", sig, PermAdmin, "Object", "Object", 200},
		apiOperation{"DELETE", ep + "/{id}", "Delete a signal endpoint with its tokens and signals", sig, PermAdmin, "", "", 200},
		apiOperation{"POST", ep + "/{id}/on", "Enable a signal endpoint", sig, PermAdmin, "", "Object", 200},
		apiOperation{"POST", ep + "/{id}/off", "Disable a signal endpoint", sig, PermAdmin, "", "Object", 200},
		apiOperation{"GET", ep + "/{id}/signals", "An endpoint's signals, newest first (limit, offset)", sig, PermAdmin, "", "Object", 200},
		apiOperation{"GET", ep + "/{id}/tokens", "List an endpoint's tokens", sig, PermAdmin, "", "Object", 200},
		apiOperation{"POST", ep + "/{id}/tokens", "Create an endpoint token (the secret is in this response only)", sig, PermAdmin, "Object", "Object", 201},
		apiOperation{"PUT", ep + "/{id}/tokens/{tokenId}", "Rename an endpoint token", sig, PermAdmin, "Object", "Object", 200},
		apiOperation{"DELETE", ep + "/{id}/tokens/{tokenId}", "Delete an endpoint token", sig, PermAdmin, "", "", 200},
		apiOperation{"GET", "/api/admin/signals", "Every endpoint's signals, newest first (from, to, limit, offset)", sig, PermAdmin, "", "Object", 200},
		apiOperation{"GET", act, "List a project's action sets", acs, PermAdmin, "", "Object", 200},
		apiOperation{"POST", act, "Create an action set", acs, PermAdmin, "Object", "Object", 201},
		apiOperation{"GET", act + "/config", "The action types and their parameters", acs, "", "", "Object", 200},
		apiOperation{"GET", act + "/{id}", "Get an action set", acs, PermAdmin, "", "Object", 200},
		apiOperation{"PUT", act + "/{id}", "Update an action set", acs, PermAdmin, "Object", "Object", 200},
		apiOperation{"DELETE", act + "/{id}", "Delete an action set", acs, PermAdmin, "", "", 200},
		apiOperation{"POST", act + "/{id}/on", "Enable an action set", acs, PermAdmin, "", "Object", 200},
		apiOperation{"POST", act + "/{id}/off", "Disable an action set", acs, PermAdmin, "", "Object", 200},
		apiOperation{"GET", act + "/{id}/events", "An action set's runs, newest first (limit, offset)", acs, PermAdmin, "", "Object", 200},
	)
}
