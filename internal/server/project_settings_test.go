package server_test

import (
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestProjectSettingsAndEnvironments: Unleash Enterprise's project
// settings change the mode (with its event) and refuse what Bunting does
// not keep, rather than dropping it; the project's environments are those
// enabled in it; unknown projects and callers without the permission get
// Unleash's errors.
func TestProjectSettingsAndEnvironments(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		a := h.AdminToken
		h.Do(t, "POST", "/api/admin/projects", a, map[string]any{"id": "shop", "name": "Shop", "environments": []string{"production"}}).Want(t, 201)
		h.Do(t, "PUT", "/api/admin/projects/shop/settings", a, map[string]any{"mode": "protected"}).Want(t, 200)
		if got := h.Do(t, "GET", "/api/admin/projects/shop", a, nil).Want(t, 200).Map(t); got["mode"] != "protected" || got["name"] != "Shop" {
			t.Fatalf("project after settings: %v", got)
		}
		if n := len(eventsOf(t, h, "project-updated", "")); n != 1 {
			t.Errorf("%d project-updated events", n)
		}
		h.Do(t, "PUT", "/api/admin/projects/shop/settings", a, map[string]any{"mode": "open", "featureNaming": map[string]any{"pattern": ""}, "linkTemplates": []any{}}).Want(t, 200)
		h.Do(t, "PUT", "/api/admin/projects/shop/settings", a, map[string]any{"mode": "secret"}).WantError(t, 400, "ValidationError", "mode")
		h.Do(t, "PUT", "/api/admin/projects/shop/settings", a, map[string]any{"featureNaming": map[string]any{"pattern": "^shop-"}}).WantError(t, 400, "ValidationError", "featureNaming")
		h.Do(t, "PUT", "/api/admin/projects/shop/settings", a, map[string]any{"linkTemplates": []any{map[string]any{"urlTemplate": "https://x/{{feature}}"}}}).WantError(t, 400, "ValidationError", "linkTemplates")
		h.Do(t, "PUT", "/api/admin/projects/nope/settings", a, map[string]any{"mode": "open"}).WantError(t, 404, "NotFoundError")
		h.Do(t, "PUT", "/api/admin/projects/shop/settings", a, "[]").WantError(t, 400, "ValidationError")
		viewer := h.UserToken(t, "vi", "Viewer")
		h.Do(t, "PUT", "/api/admin/projects/shop/settings", viewer, map[string]any{"mode": "private"}).WantError(t, 403, "NoAccessError", "UPDATE_PROJECT")

		var envs struct {
			Version      int
			Environments []struct{ Name string }
		}
		h.Do(t, "GET", "/api/admin/environments/project/shop", a, nil).Want(t, 200).JSON(t, &envs)
		if envs.Version != 1 || len(envs.Environments) != 1 || envs.Environments[0].Name != "production" {
			t.Fatalf("project environments: %+v", envs)
		}
		h.Do(t, "GET", "/api/admin/environments/project/nope", a, nil).WantError(t, 404, "NotFoundError")
	})
}
