package server_test

import (
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		h.Do(t, "GET", "/api/admin/projects", "", nil).WantError(t, 401, "AuthenticationRequired")
		h.Do(t, "GET", "/api/admin/projects", "*:*.wrong", nil).WantError(t, 401, "AuthenticationRequired")
		h.Do(t, "GET", "/api/admin/projects", h.ClientToken, nil).WantError(t, 403, "NoAccessError", "different token type")
		h.Do(t, "GET", "/api/admin/projects", h.FrontendToken, nil).WantError(t, 403, "NoAccessError")
		h.Do(t, "GET", "/api/admin/projects", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "GET", "/api/admin/projects", "Bearer "+h.AdminToken, nil).Want(t, 200)
		h.Do(t, "GET", "/api/admin/projects", "bearer   "+h.AdminToken, nil).Want(t, 200)
		h.Do(t, "GET", "/api/admin/projects", "Basic "+h.AdminToken, nil).WantError(t, 401, "AuthenticationRequired")
	})
}

func TestCrossCuttingErrors(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		h.Do(t, "GET", "/api/admin/nope", h.AdminToken, nil).WantError(t, 404, "NotFoundError", "/api/admin/nope")
		h.Do(t, "DELETE", "/health", "", nil).WantError(t, 404, "NotFoundError")
		h.Do(t, "POST", "/api/admin/events/search", h.AdminToken, "{}", "Content-Type", "text/plain").
			WantError(t, 415, "ContentTypeError", "text/plain")
		h.Do(t, "POST", "/api/admin/events/search", h.AdminToken, "{}", "Content-Type", "").
			WantError(t, 415, "ContentTypeError", "didn't provide one")
		h.Do(t, "POST", "/api/admin/events/search", h.AdminToken, `{"limit":`).WantError(t, 400, "ValidationError")
		h.Do(t, "POST", "/api/admin/events/search", h.AdminToken, `{"limit":"ten"}`).WantError(t, 400, "ValidationError", "limit")
		h.Do(t, "POST", "/api/admin/events/search", h.AdminToken, `[1,2]`).WantError(t, 400, "ValidationError")
		big := `{"query":"` + strings.Repeat("x", 200*1024) + `"}`
		h.Do(t, "POST", "/api/admin/events/search", h.AdminToken, big).WantError(t, 413, "ContentTooLargeError")
		h.Do(t, "GET", "/health", "", nil).Want(t, 200)
	})
}

func TestFeatureTypes(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		var body struct {
			Version int
			Types   []struct {
				ID           string
				LifetimeDays *int
			}
		}
		h.Do(t, "GET", "/api/admin/feature-types", h.AdminToken, nil).Want(t, 200).JSON(t, &body)
		want := map[string]int{"release": 40, "experiment": 40, "operational": 7, "kill-switch": -1, "permission": -1, "sunset": 90}
		if body.Version != 1 || len(body.Types) != len(want) {
			t.Fatalf("types: %+v", body)
		}
		for _, ty := range body.Types {
			w, ok := want[ty.ID]
			got := -1
			if ty.LifetimeDays != nil {
				got = *ty.LifetimeDays
			}
			if !ok || got != w {
				t.Errorf("type %s lifetime %d, want %d", ty.ID, got, w)
			}
		}
	})
}

func TestProjectsListOnFreshDatabase(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		var body struct {
			Version  int
			Projects []map[string]any
		}
		h.Do(t, "GET", "/api/admin/projects", h.AdminToken, nil).Want(t, 200).JSON(t, &body)
		if body.Version != 1 || len(body.Projects) != 1 || body.Projects[0]["id"] != "default" ||
			body.Projects[0]["health"] != float64(100) || body.Projects[0]["mode"] != "open" {
			t.Fatalf("projects: %+v", body)
		}
	})
}

func TestBootstrapTokensWriteEvents(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		var body struct {
			Version     int
			TotalEvents int
			Events      []map[string]any
		}
		h.Do(t, "POST", "/api/admin/events/search", h.AdminToken, map[string]any{"type": "api-token-created"}).Want(t, 200).JSON(t, &body)
		if body.Version != 1 || body.TotalEvents != 4 || len(body.Events) != 4 {
			t.Fatalf("events: %+v", body)
		}
		for _, ev := range body.Events {
			if strings.Contains(string(mustJSON(t, ev)), "secret") {
				t.Fatalf("event leaks a secret: %v", ev)
			}
		}
		h.Do(t, "POST", "/api/admin/events/search", h.AdminToken, map[string]any{"type": "no-such-type"}).WantError(t, 400, "ValidationError", "type")
		h.Do(t, "POST", "/api/admin/events/search", h.AdminToken, map[string]any{"limit": 101}).WantError(t, 400, "ValidationError", "limit")
		h.Do(t, "POST", "/api/admin/events/search", h.AdminToken, map[string]any{"limit": 0}).WantError(t, 400, "ValidationError", "limit")
	})
}
