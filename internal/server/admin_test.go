package server_test

import (
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

func TestProjects(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		created := h.Do(t, "POST", "/api/admin/projects", h.AdminToken, map[string]any{"name": "Mobile App", "mode": "protected", "description": "d"}).Want(t, 201).Map(t)
		if created["id"] != "mobile-app" || created["mode"] != "protected" {
			t.Fatalf("created: %v", created)
		}
		h.Do(t, "POST", "/api/admin/projects", h.AdminToken, map[string]any{"id": "mobile-app", "name": "again"}).WantError(t, 409, "NameExistsError")
		h.Do(t, "POST", "/api/admin/projects", h.AdminToken, map[string]any{"name": " "}).WantError(t, 400, "ValidationError", "name")
		h.Do(t, "POST", "/api/admin/projects", h.AdminToken, map[string]any{"name": "x", "mode": "secret"}).WantError(t, 400, "ValidationError", "mode")
		h.Do(t, "POST", "/api/admin/projects", h.AdminToken, map[string]any{"name": "x", "environments": []string{"nope"}}).WantError(t, 400, "ValidationError", "nope")
		got := h.Do(t, "GET", "/api/admin/projects/mobile-app", h.AdminToken, nil).Want(t, 200).Map(t)
		if envs := got["environments"].([]any); len(envs) != 2 {
			t.Fatalf("environments: %v", got)
		}
		h.Do(t, "PUT", "/api/admin/projects/mobile-app", h.AdminToken, map[string]any{"name": "Mobile", "mode": "private"}).Want(t, 200)
		h.Do(t, "PUT", "/api/admin/projects/nope", h.AdminToken, map[string]any{"name": "x"}).WantError(t, 404, "NotFoundError")

		h.Do(t, "POST", "/api/admin/projects/mobile-app/features", h.AdminToken, map[string]any{"name": "m1"}).Want(t, 201)
		h.Do(t, "PUT", "/api/admin/projects/mobile-app/features/m1", h.AdminToken, map[string]any{"stale": true}).Want(t, 200)
		h.Do(t, "POST", "/api/admin/projects/mobile-app/features", h.AdminToken, map[string]any{"name": "m2"}).Want(t, 201)
		var list struct {
			Version  int
			Projects []map[string]any
		}
		h.Do(t, "GET", "/api/admin/projects", h.AdminToken, nil).Want(t, 200).JSON(t, &list)
		var mobile map[string]any
		for _, p := range list.Projects {
			if p["id"] == "mobile-app" {
				mobile = p
			}
		}
		if list.Version != 1 || mobile == nil || mobile["featureCount"] != float64(2) || mobile["staleFeatureCount"] != float64(1) ||
			mobile["health"] != float64(50) || mobile["mode"] != "private" || mobile["name"] != "Mobile" {
			t.Fatalf("list: %+v", list)
		}

		h.Do(t, "DELETE", "/api/admin/projects/mobile-app", h.AdminToken, nil).WantError(t, 403, "NoAccessError", "active")
		h.Do(t, "DELETE", "/api/admin/projects/default", h.AdminToken, nil).WantError(t, 403, "NoAccessError", "default")
		h.Do(t, "DELETE", "/api/admin/projects/mobile-app/features/m1", h.AdminToken, nil).Want(t, 202)
		h.Do(t, "DELETE", "/api/admin/projects/mobile-app/features/m2", h.AdminToken, nil).Want(t, 202)
		h.Do(t, "DELETE", "/api/admin/projects/mobile-app", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "GET", "/api/admin/projects/mobile-app", h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		for _, typ := range []string{"project-created", "project-updated", "project-deleted"} {
			var body struct{ Events []map[string]any }
			h.Do(t, "POST", "/api/admin/events/search", h.AdminToken, map[string]any{"type": typ, "project": "mobile-app"}).Want(t, 200).JSON(t, &body)
			if len(body.Events) != 1 {
				t.Errorf("%s events: %v", typ, body.Events)
			}
		}
		editor := h.UserToken(t, "ed", "Editor")
		h.Do(t, "POST", "/api/admin/projects", editor, map[string]any{"name": "Ed"}).Want(t, 201)
		viewer := h.UserToken(t, "vi", "Viewer")
		h.Do(t, "POST", "/api/admin/projects", viewer, map[string]any{"name": "Vi"}).WantError(t, 403, "NoAccessError", "CREATE_PROJECT")
		h.Do(t, "GET", "/api/admin/projects", viewer, nil).Want(t, 200)
	})
}

func TestEnvironments(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "f1")
		h.Do(t, "POST", "/api/admin/environments", h.AdminToken, map[string]any{"name": "staging", "type": "test", "sortOrder": 5}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/environments", h.AdminToken, map[string]any{"name": "staging", "type": "test"}).WantError(t, 409, "NameExistsError")
		h.Do(t, "POST", "/api/admin/environments", h.AdminToken, map[string]any{"name": "qa"}).WantError(t, 400, "ValidationError", "type")
		var list struct {
			Version      int
			Environments []map[string]any
		}
		h.Do(t, "GET", "/api/admin/environments", h.AdminToken, nil).Want(t, 200).JSON(t, &list)
		if len(list.Environments) != 3 || list.Environments[2]["name"] != "staging" || list.Environments[0]["projectCount"] != float64(1) {
			t.Fatalf("list: %+v", list)
		}
		// Connect it to the project: the flag gets a disabled state there.
		h.Do(t, "POST", "/api/admin/projects/default/environments", h.AdminToken, map[string]any{"environment": "staging"}).Want(t, 200)
		h.Do(t, "POST", "/api/admin/projects/default/environments", h.AdminToken, map[string]any{"environment": "staging"}).WantError(t, 409, "NameExistsError")
		h.Do(t, "POST", envPath("f1", "staging")+"/on", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "PUT", "/api/admin/environments/staging", h.AdminToken, map[string]any{"sortOrder": 1}).Want(t, 200)
		h.Do(t, "POST", "/api/admin/environments/staging/off", h.AdminToken, nil).Want(t, 204)
		h.Do(t, "GET", "/api/admin/environments/staging", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "DELETE", "/api/admin/projects/default/environments/staging", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "POST", envPath("f1", "staging")+"/on", h.AdminToken, nil).WantError(t, 404, "NotFoundError", "staging")
		h.Do(t, "DELETE", "/api/admin/environments/staging", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "DELETE", "/api/admin/environments/staging", h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		editor := h.UserToken(t, "ed", "Editor")
		h.Do(t, "POST", "/api/admin/environments", editor, map[string]any{"name": "x", "type": "test"}).WantError(t, 403, "NoAccessError", "ADMIN")
		for _, typ := range []string{"environment-created", "environment-updated", "environment-deleted", "project-environment-added", "project-environment-removed"} {
			var body struct{ TotalEvents int }
			h.Do(t, "POST", "/api/admin/events/search", h.AdminToken, map[string]any{"type": typ}).Want(t, 200).JSON(t, &body)
			if body.TotalEvents == 0 {
				t.Errorf("no %s event", typ)
			}
		}
	})
}

func TestSegments(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		c := []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"a"}}}
		sg := h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "s1", "constraints": c}).Want(t, 201).Map(t)
		id := jsonNum(sg["id"])
		h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "s1", "constraints": c}).WantError(t, 409, "NameExistsError")
		h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "s2"}).WantError(t, 400, "ValidationError", "constraints")
		h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "s2", "constraints": c, "project": "nope"}).WantError(t, 400, "ValidationError", "project")
		h.Do(t, "PUT", "/api/admin/segments/"+id, h.AdminToken, map[string]any{"name": "s1b", "constraints": []any{}}).Want(t, 204)
		got := h.Do(t, "GET", "/api/admin/segments/"+id, h.AdminToken, nil).Want(t, 200).Map(t)
		if got["name"] != "s1b" {
			t.Fatalf("get: %v", got)
		}
		list := h.Do(t, "GET", "/api/admin/segments", h.AdminToken, nil).Want(t, 200).Map(t)
		if len(list["segments"].([]any)) != 1 {
			t.Fatalf("list: %v", list)
		}
		h.Do(t, "GET", "/api/admin/segments/99", h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		h.Do(t, "GET", "/api/admin/segments/abc", h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		h.Do(t, "DELETE", "/api/admin/segments/"+id, h.AdminToken, nil).Want(t, 204)
		h.Do(t, "DELETE", "/api/admin/segments/"+id, h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		for _, typ := range []string{"segment-created", "segment-updated", "segment-deleted"} {
			var body struct{ TotalEvents int }
			h.Do(t, "POST", "/api/admin/events/search", h.AdminToken, map[string]any{"type": typ}).Want(t, 200).JSON(t, &body)
			if body.TotalEvents != 1 {
				t.Errorf("%s: %d events", typ, body.TotalEvents)
			}
		}
	})
}

func TestAPITokens(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		created := h.Do(t, "POST", "/api/admin/api-tokens", h.AdminToken, map[string]any{"tokenName": "sdk", "type": "backend", "environment": "production"}).Want(t, 201).Map(t)
		secret := created["secret"].(string)
		if !strings.HasPrefix(secret, "*:production.") || created["type"] != "client" {
			t.Fatalf("created: %v", created)
		}
		h.Do(t, "GET", "/api/client/features", secret, nil).Want(t, 200)
		fe := h.Do(t, "POST", "/api/admin/api-tokens", h.AdminToken, map[string]any{"tokenName": "web", "type": "frontend"}).Want(t, 201).Map(t)
		if !strings.HasPrefix(fe["secret"].(string), "*:development.") {
			t.Fatalf("frontend: %v", fe)
		}
		h.Do(t, "POST", "/api/admin/api-tokens", h.AdminToken, map[string]any{"tokenName": "x", "type": "client", "environment": "*"}).WantError(t, 400, "ValidationError", "all environments")
		h.Do(t, "POST", "/api/admin/api-tokens", h.AdminToken, map[string]any{"tokenName": "x", "type": "client", "environment": "nope"}).WantError(t, 400, "ValidationError", "nope")
		h.Do(t, "POST", "/api/admin/api-tokens", h.AdminToken, map[string]any{"tokenName": "x", "type": "client", "projects": []string{"nope"}}).WantError(t, 400, "ValidationError", "nope")
		h.Do(t, "POST", "/api/admin/api-tokens", h.AdminToken, map[string]any{"tokenName": "x", "type": "root"}).WantError(t, 400, "ValidationError", "type")
		h.Do(t, "POST", "/api/admin/api-tokens", h.AdminToken, map[string]any{"type": "client"}).WantError(t, 400, "ValidationError", "tokenName")

		list := h.Do(t, "GET", "/api/admin/api-tokens", h.AdminToken, nil).Want(t, 200)
		// Client and frontend secrets are read back (token_secrets_test.go);
		// admin tokens' never are.
		if !strings.Contains(string(list.Body), secret) || strings.Contains(string(list.Body), servertest.AdminToken) {
			t.Fatalf("list: %s", list.Body)
		}
		if n := len(list.Map(t)["tokens"].([]any)); n != 6 {
			t.Fatalf("%d tokens", n)
		}

		editor := h.UserToken(t, "ed", "Editor")
		h.Do(t, "GET", "/api/admin/api-tokens", editor, nil).WantError(t, 403, "NoAccessError", "API_TOKEN")
		h.Do(t, "POST", "/api/admin/api-tokens", editor, map[string]any{"tokenName": "x", "type": "client"}).WantError(t, 403, "NoAccessError", "CREATE_CLIENT_API_TOKEN")
		h.Do(t, "DELETE", "/api/admin/api-tokens/"+secret, editor, nil).WantError(t, 403, "NoAccessError")

		// An expired token stops working; a later expiry revives it.
		h.Do(t, "PUT", "/api/admin/api-tokens/"+secret, h.AdminToken, map[string]any{"expiresAt": "2020-01-01T00:00:00Z"}).Want(t, 200)
		h.Do(t, "GET", "/api/client/features", secret, nil).WantError(t, 401, "AuthenticationRequired")
		h.Do(t, "PUT", "/api/admin/api-tokens/"+secret, h.AdminToken, map[string]any{"expiresAt": "2999-01-01T00:00:00Z"}).Want(t, 200)
		h.Do(t, "GET", "/api/client/features", secret, nil).Want(t, 200)
		h.Do(t, "PUT", "/api/admin/api-tokens/"+secret, h.AdminToken, map[string]any{}).WantError(t, 400, "ValidationError", "expiresAt")
		h.Do(t, "PUT", "/api/admin/api-tokens/"+secret, h.AdminToken, map[string]any{"expiresAt": "soon"}).WantError(t, 400, "ValidationError")
		h.Do(t, "PUT", "/api/admin/api-tokens/"+secret, editor, map[string]any{"expiresAt": "2999-01-01T00:00:00Z"}).WantError(t, 403, "NoAccessError")
		if n := len(eventsOf(t, h, "api-token-updated", "")); n != 2 {
			t.Fatalf("%d api-token-updated events", n)
		}

		h.Do(t, "DELETE", "/api/admin/api-tokens/"+secret, h.AdminToken, nil).Want(t, 200)
		h.Do(t, "GET", "/api/client/features", secret, nil).WantError(t, 401, "AuthenticationRequired")
		h.Do(t, "DELETE", "/api/admin/api-tokens/unknown", h.AdminToken, nil).Want(t, 200)

		var body struct{ Events []map[string]any }
		h.Do(t, "POST", "/api/admin/events/search", h.AdminToken, map[string]any{"type": "api-token-deleted"}).Want(t, 200).JSON(t, &body)
		if len(body.Events) != 1 || body.Events[0]["environment"] != "production" || strings.Contains(string(mustJSON(t, body.Events[0])), secret) {
			t.Fatalf("delete event: %v", body.Events)
		}
		// The list's id revokes a token without its secret (as the web UI does).
		var tokens struct {
			Tokens []struct{ ID, TokenName string }
		}
		h.Do(t, "GET", "/api/admin/api-tokens", h.AdminToken, nil).Want(t, 200).JSON(t, &tokens)
		feSecret := fe["secret"].(string)
		for _, tk := range tokens.Tokens {
			if tk.TokenName == "web" {
				if len(tk.ID) != 64 || strings.Contains(feSecret, tk.ID) {
					t.Fatalf("token id %q", tk.ID)
				}
				h.Do(t, "DELETE", "/api/admin/api-tokens/"+tk.ID, editor, nil).WantError(t, 403, "NoAccessError")
				h.Do(t, "GET", "/api/frontend", feSecret, nil).Want(t, 200)
				h.Do(t, "DELETE", "/api/admin/api-tokens/"+tk.ID, h.AdminToken, nil).Want(t, 200)
			}
		}
		h.Do(t, "GET", "/api/frontend", feSecret, nil).Want(t, 401)
	})
}

func TestEventsListAndSearch(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		for i := range 3 {
			createFlag(t, h, "f"+string(rune('0'+i)))
		}
		h.Do(t, "POST", envPath("f1", "production")+"/on", h.AdminToken, nil).Want(t, 200)
		var all struct {
			Version     int
			Events      []map[string]any
			TotalEvents int
		}
		h.Do(t, "GET", "/api/admin/events", h.AdminToken, nil).Want(t, 200).JSON(t, &all)
		if all.Version != 1 || all.TotalEvents != len(all.Events) || all.Events[0]["type"] != "feature-environment-enabled" {
			t.Fatalf("list: %+v", all)
		}
		for i := 1; i < len(all.Events); i++ {
			if all.Events[i-1]["id"].(float64) <= all.Events[i]["id"].(float64) {
				t.Fatal("events not newest first")
			}
		}
		var proj struct {
			Events      []map[string]any
			TotalEvents int
		}
		h.Do(t, "GET", "/api/admin/events?project=default", h.AdminToken, nil).Want(t, 200).JSON(t, &proj)
		if proj.TotalEvents != 8 || len(proj.Events) != 8 { // 5 flag events and 3 project-scoped token events
			t.Fatalf("project events: %+v", proj)
		}
		h.Do(t, "GET", "/api/admin/events?project=nope", h.AdminToken, nil).Want(t, 200).JSON(t, &proj)
		if proj.TotalEvents != 0 || len(proj.Events) != 0 {
			t.Fatalf("unknown project: %+v", proj)
		}
		viewer := h.UserToken(t, "vi", "Viewer")
		h.Do(t, "GET", "/api/admin/events", viewer, nil).WantError(t, 403, "NoAccessError", "ADMIN")
		var one struct {
			ToggleName  string
			Events      []map[string]any
			TotalEvents int
		}
		h.Do(t, "GET", "/api/admin/events/f1", viewer, nil).Want(t, 200).JSON(t, &one)
		if one.ToggleName != "f1" || one.TotalEvents != 3 || len(one.Events) != 3 {
			t.Fatalf("flag events: %+v", one)
		}

		search := func(body map[string]any) (int, []map[string]any) {
			var res struct {
				Version     int
				Events      []map[string]any
				TotalEvents int
			}
			h.Do(t, "POST", "/api/admin/events/search", viewer, body).Want(t, 200).JSON(t, &res)
			if res.Version != 1 {
				t.Fatalf("version %d", res.Version)
			}
			return res.TotalEvents, res.Events
		}
		if total, evs := search(map[string]any{"type": "feature-created"}); total != 3 || len(evs) != 3 {
			t.Fatalf("type: %d %v", total, evs)
		}
		if total, evs := search(map[string]any{"feature": "f1"}); total != 3 || len(evs) != 3 {
			t.Fatalf("feature: %d %v", total, evs)
		}
		if _, evs := search(map[string]any{"type": "feature-created", "limit": 1}); len(evs) != 1 || evs[0]["featureName"] != "f2" {
			t.Fatalf("limit: %v", evs)
		}
		if _, evs := search(map[string]any{"type": "feature-created", "limit": 1, "offset": 1}); len(evs) != 1 || evs[0]["featureName"] != "f1" {
			t.Fatalf("offset: %v", evs)
		}
		// Free text over type, creator and data; totalEvents ignores it.
		if total, evs := search(map[string]any{"query": "ENVIRONMENT-ENABLED"}); len(evs) != 1 || total < 5 {
			t.Fatalf("query type: %d %v", total, evs)
		}
		if _, evs := search(map[string]any{"query": "vi", "type": "user-created"}); len(evs) != 1 {
			t.Fatalf("query data: %v", evs)
		}
		// The system user made the four initial API tokens and the first admin.
		if _, evs := search(map[string]any{"query": "unleash_system"}); len(evs) != 5 {
			t.Fatalf("query creator: %v", evs)
		}
		if total, evs := search(map[string]any{"project": "nope"}); total != 0 || len(evs) != 0 {
			t.Fatalf("unknown project: %v", evs)
		}
		h.Do(t, "POST", "/api/admin/events/search", viewer, map[string]any{"offset": -1}).WantError(t, 400, "ValidationError", "offset")
	})
}
