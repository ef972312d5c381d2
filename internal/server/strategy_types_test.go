package server_test

import (
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

func TestStrategyTypesLifecycle(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		var list struct {
			Version    int
			Strategies []map[string]any
		}
		h.Do(t, "GET", "/api/admin/strategies", h.AdminToken, nil).Want(t, 200).JSON(t, &list)
		if list.Version != 1 || len(list.Strategies) != 4 || list.Strategies[0]["name"] != "flexibleRollout" || list.Strategies[0]["editable"] != false {
			t.Fatalf("strategies: %+v", list)
		}
		create := map[string]any{"name": "byCountry", "description": "Countries", "title": "By country",
			"parameters": []map[string]any{{"name": "countries", "type": "list", "description": "codes", "required": true}}}
		res := h.Do(t, "POST", "/api/admin/strategies", h.AdminToken, create).Want(t, 201)
		if res.Header.Get("Location") != "strategies/byCountry" || res.Map(t)["editable"] != true {
			t.Fatalf("create: %s %v", res, res.Header)
		}
		h.Do(t, "POST", "/api/admin/strategies", h.AdminToken, create).WantError(t, 409, "NameExistsError", "byCountry")
		h.Do(t, "POST", "/api/admin/strategies", h.AdminToken, map[string]any{"name": "a b", "parameters": []any{}}).WantError(t, 400, "ValidationError", "name")
		h.Do(t, "POST", "/api/admin/strategies", h.AdminToken, map[string]any{"name": "x"}).WantError(t, 400, "ValidationError", "parameters")
		h.Do(t, "POST", "/api/admin/strategies", h.AdminToken, map[string]any{"name": "x", "parameters": []map[string]any{{"name": "p", "type": "date"}}}).
			WantError(t, 400, "ValidationError", "type")

		// Update: parameters replaced; description (absent) and title untouched.
		h.Do(t, "PUT", "/api/admin/strategies/byCountry", h.AdminToken, map[string]any{"parameters": []map[string]any{{"name": "c", "type": "string"}}}).Want(t, 200)
		got := h.Do(t, "GET", "/api/admin/strategies/byCountry", h.AdminToken, nil).Want(t, 200).Map(t)
		params := got["parameters"].([]any)
		if got["description"] != "Countries" || got["title"] != "By country" || len(params) != 1 || params[0].(map[string]any)["name"] != "c" ||
			params[0].(map[string]any)["required"] != false {
			t.Fatalf("after update: %v", got)
		}
		h.Do(t, "PUT", "/api/admin/strategies/byCountry", h.AdminToken, map[string]any{"description": "New", "parameters": []any{}}).Want(t, 200)
		if got := h.Do(t, "GET", "/api/admin/strategies/byCountry", h.AdminToken, nil).Map(t); got["description"] != "New" {
			t.Fatalf("description not updated: %v", got)
		}
		h.Do(t, "PUT", "/api/admin/strategies/flexibleRollout", h.AdminToken, map[string]any{"parameters": []any{}}).WantError(t, 403, "InvalidOperationError", "flexibleRollout")
		h.Do(t, "PUT", "/api/admin/strategies/nope", h.AdminToken, map[string]any{"parameters": []any{}}).WantError(t, 404, "NotFoundError")
		h.Do(t, "PUT", "/api/admin/strategies/byCountry", h.AdminToken, map[string]any{"description": "x"}).WantError(t, 400, "ValidationError", "parameters")
		h.Do(t, "PUT", "/api/admin/strategies/byCountry", h.AdminToken, `{"parameters":`).WantError(t, 400, "ValidationError")
		h.Do(t, "PUT", "/api/admin/strategies/byCountry", h.AdminToken, "{}", "Content-Type", "text/plain").WantError(t, 415, "ContentTypeError")
		h.Do(t, "GET", "/api/admin/strategies/nope", h.AdminToken, nil).WantError(t, 404, "NotFoundError", "No strategy found")

		// Deprecate / reactivate (built-ins too), then delete.
		h.Do(t, "POST", "/api/admin/strategies/byCountry/deprecate", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "POST", "/api/admin/strategies/byCountry/deprecate", h.AdminToken, nil).Want(t, 200)
		if got := h.Do(t, "GET", "/api/admin/strategies/byCountry", h.AdminToken, nil).Map(t); got["deprecated"] != true {
			t.Fatalf("not deprecated: %v", got)
		}
		h.Do(t, "POST", "/api/admin/strategies/byCountry/reactivate", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "POST", "/api/admin/strategies/default/deprecate", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "POST", "/api/admin/strategies/nope/deprecate", h.AdminToken, nil).WantError(t, 404, "NotFoundError", "nope")
		h.Do(t, "DELETE", "/api/admin/strategies/default", h.AdminToken, nil).WantError(t, 403, "InvalidOperationError")
		h.Do(t, "DELETE", "/api/admin/strategies/byCountry", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "DELETE", "/api/admin/strategies/byCountry", h.AdminToken, nil).WantError(t, 404, "NotFoundError")

		for typ, want := range map[string]int{"strategy-created": 1, "strategy-updated": 2, "strategy-deprecated": 2, "strategy-reactivated": 1, "strategy-deleted": 1} {
			if evs := eventsOfType(t, h, typ); len(evs) != want {
				t.Errorf("%s: %d events, want %d", typ, len(evs), want)
			}
		}
		upd := eventsOfType(t, h, "strategy-updated")[1]
		if upd["preData"] == nil || upd["data"].(map[string]any)["description"] != "Countries" || upd["createdBy"] != "admin" {
			t.Errorf("strategy-updated event: %v", upd)
		}
	})
}

func TestFeatureTypeLifetime(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		got := h.Do(t, "PUT", "/api/admin/feature-types/Release/lifetime", h.AdminToken, map[string]any{"lifetimeDays": 10}).Want(t, 200).Map(t)
		if got["id"] != "release" || got["lifetimeDays"] != float64(10) {
			t.Fatalf("updated: %v", got)
		}
		got = h.Do(t, "PUT", "/api/admin/feature-types/experiment/lifetime", h.AdminToken, map[string]any{"lifetimeDays": 0}).Want(t, 200).Map(t)
		if got["lifetimeDays"] != nil {
			t.Fatalf("0 should mean never: %v", got)
		}
		h.Do(t, "PUT", "/api/admin/feature-types/operational/lifetime", h.AdminToken, map[string]any{"lifetimeDays": nil}).Want(t, 200)
		var body struct {
			Types []struct {
				ID           string
				LifetimeDays *int
			}
		}
		h.Do(t, "GET", "/api/admin/feature-types", h.AdminToken, nil).Want(t, 200).JSON(t, &body)
		if *body.Types[0].LifetimeDays != 10 || body.Types[1].LifetimeDays != nil || body.Types[2].LifetimeDays != nil {
			t.Fatalf("types: %+v", body)
		}
		h.Do(t, "PUT", "/api/admin/feature-types/nope/lifetime", h.AdminToken, map[string]any{"lifetimeDays": 1}).WantError(t, 404, "NotFoundError", "nope")
		h.Do(t, "PUT", "/api/admin/feature-types/release/lifetime", h.AdminToken, map[string]any{}).WantError(t, 400, "ValidationError", "lifetimeDays")
		h.Do(t, "PUT", "/api/admin/feature-types/release/lifetime", h.AdminToken, map[string]any{"lifetimeDays": -1}).WantError(t, 400, "ValidationError", "lifetimeDays")
		h.Do(t, "PUT", "/api/admin/feature-types/release/lifetime", h.AdminToken, map[string]any{"lifetimeDays": "ten"}).WantError(t, 400, "ValidationError", "lifetimeDays")
		evs := eventsOfType(t, h, "feature-type-updated")
		if len(evs) != 3 || evs[2]["data"].(map[string]any)["lifetimeDays"] != float64(10) || evs[2]["preData"].(map[string]any)["lifetimeDays"] != float64(40) {
			t.Fatalf("events: %v", evs)
		}
	})
}
