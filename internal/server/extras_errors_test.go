package server_test

import (
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestExtrasErrorPaths covers the 401/403/404/415/400 answers of the extras
// routes that the per-area tests do not reach.
func TestExtrasErrorPaths(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		viewer := accountToken(t, h, "viewer", 3)
		editor := accountToken(t, h, "editor", 2)
		for _, c := range []struct{ method, path string }{
			{"GET", "/api/admin/strategies"}, {"GET", "/api/admin/tag-types"}, {"GET", "/api/admin/context"},
			{"GET", "/api/admin/state/export"}, {"GET", "/api/admin/service-account"}, {"GET", "/api/admin/user/tokens"},
		} {
			h.Do(t, c.method, c.path, "", nil).WantError(t, 401, "AuthenticationRequired")
			h.Do(t, c.method, c.path, "*:*.not-a-token", nil).WantError(t, 401, "AuthenticationRequired")
			h.Do(t, c.method, c.path, h.FrontendToken, nil).WantError(t, 403, "NoAccessError", "different token type")
		}
		// Viewers read, but every change is refused with the permission named.
		h.Do(t, "GET", "/api/admin/context", viewer, nil).Want(t, 200)
		h.Do(t, "GET", "/api/admin/tag-types", viewer, nil).Want(t, 200)
		for _, c := range []struct {
			method, path, perm string
			body               any
		}{
			{"POST", "/api/admin/context", "CREATE_CONTEXT_FIELD", map[string]any{"name": "x"}},
			{"PUT", "/api/admin/context/userId", "UPDATE_CONTEXT_FIELD", map[string]any{}},
			{"DELETE", "/api/admin/context/userId", "DELETE_CONTEXT_FIELD", nil},
			{"PUT", "/api/admin/tag-types/simple", "UPDATE_TAG_TYPE", map[string]any{}},
			{"DELETE", "/api/admin/tag-types/simple", "DELETE_TAG_TYPE", nil},
			{"POST", "/api/admin/tags", "UPDATE_FEATURE", map[string]any{"type": "simple", "value": "x"}},
			{"DELETE", "/api/admin/strategies/x", "DELETE_STRATEGY", nil},
			{"POST", "/api/admin/strategies/default/deprecate", "UPDATE_STRATEGY", nil},
			{"POST", "/api/admin/state/import", "ADMIN", map[string]any{}},
			{"POST", "/api/admin/features/x/stale/on", "UPDATE_FEATURE", nil},
		} {
			h.Do(t, c.method, c.path, viewer, c.body).WantError(t, 403, "NoAccessError", c.perm)
		}
		// Editors change context fields but not accounts or the state.
		h.Do(t, "POST", "/api/admin/context", editor, map[string]any{"name": "tenant"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/service-account", editor, map[string]any{"username": "x", "rootRole": 3}).WantError(t, 403, "NoAccessError", "ADMIN")
		h.Do(t, "GET", "/api/admin/state/export", editor, nil).WantError(t, 403, "NoAccessError", "ADMIN")
		// Not found, wrong content type, malformed bodies.
		h.Do(t, "GET", "/api/admin/tag-types/nope", h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		h.Do(t, "POST", "/api/admin/context/nope/legal-values", h.AdminToken, map[string]any{"value": "a"}).WantError(t, 404, "NotFoundError")
		h.Do(t, "POST", "/api/admin/context/userId/legal-values", h.AdminToken, map[string]any{}).WantError(t, 400, "ValidationError", "value")
		h.Do(t, "PUT", "/api/admin/service-account/999", h.AdminToken, map[string]any{"name": "x"}).WantError(t, 404, "NotFoundError")
		h.Do(t, "POST", "/api/admin/context", h.AdminToken, "name=x", "Content-Type", "application/x-www-form-urlencoded").WantError(t, 415, "ContentTypeError")
		h.Do(t, "POST", "/api/admin/tag-types", h.AdminToken, `{"name": 5}`).WantError(t, 400, "ValidationError", "name")
		h.Do(t, "PUT", "/api/admin/features/x/tags", h.AdminToken, `{"addedTags": {}}`).WantError(t, 400, "ValidationError", "addedTags")
		h.Do(t, "POST", "/api/admin/service-account", h.AdminToken, `[]`).WantError(t, 400, "ValidationError")
	})
}
