package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

func TestFeatureLifecycle(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		created := h.Do(t, "POST", featuresURL, h.AdminToken, map[string]any{"name": "f1", "description": "first", "type": "kill-switch"}).Want(t, 201).Map(t)
		if created["name"] != "f1" || created["type"] != "kill-switch" || created["project"] != "default" || created["archived"] != false {
			t.Fatalf("created: %v", created)
		}
		if env := envOf(t, created, "production"); env["enabled"] != false || len(env["strategies"].([]any)) != 0 {
			t.Fatalf("new flag env: %v", env)
		}
		ev := eventsOf(t, h, "feature-created", "f1")
		if len(ev) != 1 || ev[0]["project"] != "default" || ev[0]["createdBy"] != "admin" || ev[0]["createdByUserId"] != float64(-42) ||
			ev[0]["data"].(map[string]any)["name"] != "f1" {
			t.Fatalf("feature-created: %v", ev)
		}

		// Errors on create.
		h.Do(t, "POST", featuresURL, h.AdminToken, map[string]any{"name": "f1"}).WantError(t, 409, "NameExistsError")
		h.Do(t, "POST", featuresURL, h.AdminToken, map[string]any{"name": "f 2"}).WantError(t, 400, "ValidationError", "name")
		h.Do(t, "POST", featuresURL, h.AdminToken, map[string]any{}).WantError(t, 400, "ValidationError", "name")
		h.Do(t, "POST", featuresURL, h.AdminToken, map[string]any{"name": "x", "type": "nope"}).WantError(t, 400, "ValidationError", "type")
		h.Do(t, "POST", featuresURL, h.AdminToken, map[string]any{"name": 5}).WantError(t, 400, "ValidationError", "name")
		h.Do(t, "POST", "/api/admin/projects/nope/features", h.AdminToken, map[string]any{"name": "x"}).WantError(t, 404, "NotFoundError", "nope")

		// Get and update.
		got := h.Do(t, "GET", featurePath("f1"), h.AdminToken, nil).Want(t, 200).Map(t)
		if got["description"] != "first" {
			t.Fatalf("get: %v", got)
		}
		h.Do(t, "GET", featurePath("zz"), h.AdminToken, nil).WantError(t, 404, "NotFoundError", `no feature named "zz"`)
		upd := h.Do(t, "PUT", featurePath("f1"), h.AdminToken, map[string]any{"description": "second", "stale": true}).Want(t, 200).Map(t)
		if upd["description"] != "second" || upd["stale"] != true {
			t.Fatalf("update: %v", upd)
		}
		h.Do(t, "PUT", featurePath("f1"), h.AdminToken, map[string]any{"name": "other"}).WantError(t, 400, "ValidationError", "name")
		meta := eventsOf(t, h, "feature-metadata-updated", "f1")
		if len(meta) != 1 || meta[0]["preData"].(map[string]any)["description"] != "first" || meta[0]["data"].(map[string]any)["description"] != "second" {
			t.Fatalf("metadata event: %v", meta)
		}
		if len(eventsOf(t, h, "feature-stale-on", "f1")) != 1 {
			t.Fatal("no feature-stale-on event")
		}
		list := h.Do(t, "GET", featuresURL, h.AdminToken, nil).Want(t, 200).Map(t)
		if list["version"] != float64(2) || len(list["features"].([]any)) != 1 {
			t.Fatalf("list: %v", list)
		}

		// Archive, revive, archive again, hard delete.
		h.Do(t, "DELETE", featurePath("f1"), h.AdminToken, nil).Want(t, 202)
		if len(h.Do(t, "GET", featuresURL, h.AdminToken, nil).Map(t)["features"].([]any)) != 0 {
			t.Fatal("archived flag still listed")
		}
		h.Do(t, "POST", envPath("f1", "development")+"/on", h.AdminToken, nil).WantError(t, 400, "ArchivedFeatureError")
		h.Do(t, "GET", featurePath("f1"), h.AdminToken, nil).WantError(t, 404, "NotFoundError", "archived")
		h.Do(t, "POST", "/api/admin/archive/revive/f1", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "POST", "/api/admin/archive/revive/nope", h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		h.Do(t, "DELETE", "/api/admin/archive/f1", h.AdminToken, nil).WantError(t, 400, "ValidationError", "not archived")
		h.Do(t, "DELETE", featurePath("f1"), h.AdminToken, nil).Want(t, 202)
		h.Do(t, "DELETE", "/api/admin/archive/f1", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "GET", featurePath("f1"), h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		for _, typ := range []string{"feature-archived", "feature-revived", "feature-deleted"} {
			if len(eventsOf(t, h, typ, "f1")) == 0 {
				t.Errorf("no %s event", typ)
			}
		}
		if del := eventsOf(t, h, "feature-deleted", "f1"); del[0]["preData"] == nil {
			t.Errorf("feature-deleted without preData: %v", del[0])
		}
	})
}

func TestEnvironmentOnOff(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "f1")
		on := h.Do(t, "POST", envPath("f1", "production")+"/on", h.AdminToken, nil).Want(t, 200).Map(t)
		prod := envOf(t, on, "production")
		if on["name"] != "f1" || prod["enabled"] != true || len(prod["strategies"].([]any)) != 1 {
			t.Fatalf("on: %v", on)
		}
		st := prod["strategies"].([]any)[0].(map[string]any)
		if st["name"] != "flexibleRollout" || st["parameters"].(map[string]any)["rollout"] != "100" || st["parameters"].(map[string]any)["groupId"] != "f1" {
			t.Fatalf("default strategy: %v", st)
		}
		if envOf(t, on, "development")["enabled"] != false {
			t.Fatal("development switched too")
		}
		// Repeating "on" changes nothing and logs nothing.
		h.Do(t, "POST", envPath("f1", "production")+"/on", h.AdminToken, nil).Want(t, 200)
		if n := len(eventsOf(t, h, "feature-environment-enabled", "f1")); n != 1 {
			t.Fatalf("enabled events: %d", n)
		}
		if n := len(eventsOf(t, h, "feature-strategy-add", "f1")); n != 1 {
			t.Fatalf("strategy-add events: %d", n)
		}
		off := h.Do(t, "POST", envPath("f1", "production")+"/off", h.AdminToken, nil).Want(t, 200).Map(t)
		if envOf(t, off, "production")["enabled"] != false {
			t.Fatalf("off: %v", off)
		}
		ev := eventsOf(t, h, "feature-environment-disabled", "f1")
		if len(ev) != 1 || ev[0]["environment"] != "production" || ev[0]["project"] != "default" || ev[0]["featureName"] != "f1" {
			t.Fatalf("disabled event: %v", ev)
		}
		// Error paths: unknown flag, flag of another project, unknown environment, auth.
		h.Do(t, "POST", envPath("nope", "production")+"/off", h.AdminToken, nil).WantError(t, 404, "NotFoundError", "nope")
		h.Do(t, "POST", "/api/admin/projects/other/features/f1/environments/production/off", h.AdminToken, nil).
			WantError(t, 404, "NotFoundError", `project "default"`)
		h.Do(t, "POST", envPath("f1", "staging")+"/off", h.AdminToken, nil).WantError(t, 404, "NotFoundError", "staging")
		h.Do(t, "POST", envPath("f1", "production")+"/off", "", nil).WantError(t, 401, "AuthenticationRequired")
		h.Do(t, "POST", envPath("f1", "production")+"/off", h.ClientToken, nil).WantError(t, 403, "NoAccessError")
		viewer := h.UserToken(t, "viewer", "Viewer")
		h.Do(t, "POST", envPath("f1", "production")+"/off", viewer, nil).
			WantError(t, 403, "NoAccessError", "UPDATE_FEATURE_ENVIRONMENT", `"production" environment`)
		h.Do(t, "GET", featurePath("f1"), viewer, nil).Want(t, 200)
		editor := h.UserToken(t, "editor", "Editor")
		h.Do(t, "POST", envPath("f1", "production")+"/on", editor, nil).Want(t, 200)
		if ev := eventsOf(t, h, "feature-environment-enabled", "f1"); ev[0]["createdBy"] != "editor" {
			t.Fatalf("editor event: %v", ev[0])
		}
	})
}

func TestStrategies(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "f1")
		seg := h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "beta",
			"constraints": []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"u1"}}}}).Want(t, 201).Map(t)
		segID := seg["id"]
		base := envPath("f1", "development") + "/strategies"
		body := map[string]any{"name": "flexibleRollout", "parameters": map[string]any{"rollout": 50, "stickiness": "userId"},
			"constraints": []any{map[string]any{"contextName": "appName", "operator": "STR_CONTAINS", "values": []string{"my"}, "caseInsensitive": true}},
			"variants":    []any{map[string]any{"name": "a", "weight": 0, "weightType": "variable", "stickiness": "default"}, map[string]any{"name": "b", "weight": 200, "weightType": "fix", "stickiness": "default"}},
			"segments":    []any{segID}}
		st := h.Do(t, "POST", base, h.AdminToken, body).Want(t, 200).Map(t)
		id := st["id"].(string)
		params := st["parameters"].(map[string]any)
		if params["rollout"] != "50" || params["groupId"] != "f1" || params["stickiness"] != "userId" {
			t.Fatalf("parameters: %v", params)
		}
		vs := st["variants"].([]any)
		if vs[0].(map[string]any)["weight"] != float64(800) || vs[1].(map[string]any)["weight"] != float64(200) {
			t.Fatalf("variant weights: %v", vs)
		}
		if segs := st["segments"].([]any); len(segs) != 1 || segs[0] != segID {
			t.Fatalf("segments: %v", st)
		}
		second := h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "default"}).Want(t, 200).Map(t)

		// Validation.
		h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "nope"}).WantError(t, 400, "ValidationError", "nope")
		h.Do(t, "POST", base, h.AdminToken, map[string]any{}).WantError(t, 400, "ValidationError", "name")
		h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "default", "constraints": []any{map[string]any{"contextName": "x", "operator": "LIKE"}}}).
			WantError(t, 400, "ValidationError", "operator")
		h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "default", "constraints": []any{map[string]any{"operator": "IN"}}}).
			WantError(t, 400, "ValidationError", "contextName")
		h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "default", "segments": []int{999}}).WantError(t, 404, "NotFoundError", "999")
		h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "default", "variants": []any{map[string]any{"name": "a", "weight": 1001, "weightType": "fix", "stickiness": "default"}}}).
			WantError(t, 400, "ValidationError", "weight")
		h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "default", "variants": []any{map[string]any{"name": "a", "weight": 5, "weightType": "variable", "stickiness": "default", "payload": map[string]any{"type": "json", "value": "{"}}}}).
			WantError(t, 400, "ValidationError", "payload")
		h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "default", "parameters": "x"}).WantError(t, 400, "ValidationError", "parameters")

		// List, get, update, disable.
		var list []map[string]any
		h.Do(t, "GET", base, h.AdminToken, nil).Want(t, 200).JSON(t, &list)
		if len(list) != 2 || list[0]["id"] != id {
			t.Fatalf("list: %v", list)
		}
		h.Do(t, "GET", base+"/"+id, h.AdminToken, nil).Want(t, 200)
		h.Do(t, "GET", base+"/nope", h.AdminToken, nil).WantError(t, 404, "NotFoundError", "nope")
		h.Do(t, "PUT", base+"/"+id, h.AdminToken, map[string]any{"name": "default", "title": "all"}).Want(t, 200)
		upd := eventsOf(t, h, "feature-strategy-update", "f1")
		if len(upd) != 1 || upd[0]["preData"].(map[string]any)["name"] != "flexibleRollout" || upd[0]["data"].(map[string]any)["title"] != "all" || upd[0]["environment"] != "development" {
			t.Fatalf("update event: %v", upd)
		}
		h.Do(t, "PUT", base+"/nope", h.AdminToken, map[string]any{"name": "default"}).WantError(t, 404, "NotFoundError")

		// Reorder.
		h.Do(t, "POST", base+"/set-sort-order", h.AdminToken, []any{map[string]any{"id": second["id"], "sortOrder": 0}, map[string]any{"id": id, "sortOrder": 1}}).Want(t, 200)
		h.Do(t, "GET", base, h.AdminToken, nil).Want(t, 200).JSON(t, &list)
		if list[0]["id"] != second["id"] {
			t.Fatalf("order: %v", list)
		}
		if ev := eventsOf(t, h, "strategy-order-changed", "f1"); len(ev) != 1 {
			t.Fatalf("order event: %v", ev)
		}
		h.Do(t, "POST", base+"/set-sort-order", h.AdminToken, []any{map[string]any{"id": "nope", "sortOrder": 0}}).WantError(t, 400, "ValidationError")
		h.Do(t, "POST", base+"/set-sort-order", h.AdminToken, map[string]any{"id": "x"}).WantError(t, 400, "ValidationError")

		// Disabling every strategy turns the environment off; deleting works too.
		h.Do(t, "POST", envPath("f1", "development")+"/on", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "PUT", base+"/"+id, h.AdminToken, map[string]any{"name": "default", "disabled": true}).Want(t, 200)
		h.Do(t, "PUT", base+"/"+second["id"].(string), h.AdminToken, map[string]any{"name": "default", "disabled": true}).Want(t, 200)
		f := h.Do(t, "GET", featurePath("f1"), h.AdminToken, nil).Map(t)
		if envOf(t, f, "development")["enabled"] != false {
			t.Fatal("environment still on after disabling every strategy")
		}
		h.Do(t, "POST", envPath("f1", "development")+"/on?shouldActivateDisabledStrategies=true", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "GET", base, h.AdminToken, nil).Want(t, 200).JSON(t, &list)
		if len(list) != 2 || list[0]["disabled"] != false || list[1]["disabled"] != false {
			t.Fatalf("reactivated: %v", list)
		}
		h.Do(t, "DELETE", base+"/"+id, h.AdminToken, nil).Want(t, 200)
		h.Do(t, "DELETE", base+"/"+id, h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		if ev := eventsOf(t, h, "feature-strategy-remove", "f1"); len(ev) != 1 || ev[0]["preData"] == nil {
			t.Fatalf("remove event: %v", ev)
		}
		// Segment in use cannot be deleted.
		h.Do(t, "PUT", base+"/"+second["id"].(string), h.AdminToken, map[string]any{"name": "default", "segments": []any{segID}}).Want(t, 200)
		h.Do(t, "DELETE", "/api/admin/segments/"+jsonNum(segID), h.AdminToken, nil).WantError(t, 409, "NameExistsError", "used")

		// Permissions: a viewer cannot add strategies.
		viewer := h.UserToken(t, "viewer", "Viewer")
		h.Do(t, "POST", base, viewer, map[string]any{"name": "default"}).WantError(t, 403, "NoAccessError", "CREATE_FEATURE_STRATEGY", "development")
	})
}

func jsonNum(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestEnvironmentVariants(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "f1")
		path := envPath("f1", "production") + "/variants"
		res := h.Do(t, "PUT", path, h.AdminToken, []any{
			map[string]any{"name": "a", "weight": 100, "weightType": "fix", "stickiness": "userId",
				"overrides": []any{map[string]any{"contextName": "userId", "values": []string{"u1"}}}},
			map[string]any{"name": "b", "weight": 1, "payload": map[string]any{"type": "json", "value": `{"x":1}`}},
			map[string]any{"name": "c", "weight": 1},
		}).Want(t, 200).Map(t)
		vs := res["variants"].([]any)
		if vs[0].(map[string]any)["weight"] != float64(100) || vs[1].(map[string]any)["weight"] != float64(450) || vs[2].(map[string]any)["weight"] != float64(450) {
			t.Fatalf("weights: %v", vs)
		}
		got := h.Do(t, "GET", path, h.AdminToken, nil).Want(t, 200).Map(t)
		if got["version"] != float64(1) || len(got["variants"].([]any)) != 3 {
			t.Fatalf("get: %v", got)
		}
		if ev := eventsOf(t, h, "feature-environment-variants-updated", "f1"); len(ev) != 1 || ev[0]["environment"] != "production" {
			t.Fatalf("event: %v", ev)
		}
		h.Do(t, "PUT", path, h.AdminToken, []any{map[string]any{"name": "a", "weight": 100, "weightType": "fix"}}).WantError(t, 400, "ValidationError", "variable weight")
		h.Do(t, "PUT", path, h.AdminToken, []any{map[string]any{"name": "a", "weight": 1001, "weightType": "fix"}, map[string]any{"name": "b", "weight": 0}}).WantError(t, 400, "ValidationError", "1000")
		h.Do(t, "PUT", path, h.AdminToken, []any{map[string]any{"name": "a", "weight": 1}, map[string]any{"name": "a", "weight": 1}}).WantError(t, 400, "ValidationError", "unique")
		h.Do(t, "PUT", path, h.AdminToken, []any{map[string]any{"name": "a", "weight": 1, "weightType": "half"}}).WantError(t, 400, "ValidationError", "weightType")
		h.Do(t, "PUT", path, h.AdminToken, []any{map[string]any{"name": "a"}}).WantError(t, 400, "ValidationError", "weight")
		h.Do(t, "PUT", path, h.AdminToken, map[string]any{"name": "a"}).WantError(t, 400, "ValidationError")
	})
}

func TestDependencies(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		for _, n := range []string{"a0", "child", "parent", "other"} {
			createFlag(t, h, n)
		}
		var parents []string
		h.Do(t, "GET", featurePath("child")+"/parents", h.AdminToken, nil).Want(t, 200).JSON(t, &parents)
		if len(parents) != 3 || parents[0] != "a0" || parents[1] != "other" || parents[2] != "parent" {
			t.Fatalf("parents: %v", parents)
		}
		dep := featurePath("child") + "/dependencies"
		h.Do(t, "POST", dep, h.AdminToken, map[string]any{"feature": "parent", "variants": []string{"v1"}}).Want(t, 200)
		h.Do(t, "GET", featurePath("parent")+"/parents", h.AdminToken, nil).Want(t, 200).JSON(t, &parents)
		if len(parents) != 2 || parents[0] != "a0" || parents[1] != "other" {
			t.Fatalf("parents of parent: %v", parents)
		}
		h.Do(t, "GET", "/api/admin/projects/default/features/unknown/parents", h.AdminToken, nil).Want(t, 200).JSON(t, &parents)
		if len(parents) != 0 {
			t.Fatalf("unknown child: %v", parents)
		}
		f := h.Do(t, "GET", featurePath("child"), h.AdminToken, nil).Map(t)
		if deps := f["dependencies"].([]any); len(deps) != 1 || deps[0].(map[string]any)["feature"] != "parent" {
			t.Fatalf("dependencies: %v", f)
		}
		h.Do(t, "POST", dep, h.AdminToken, map[string]any{"feature": "child"}).WantError(t, 403, "InvalidOperationError", "itself")
		h.Do(t, "POST", featurePath("parent")+"/dependencies", h.AdminToken, map[string]any{"feature": "a0"}).WantError(t, 403, "InvalidOperationError", "Transitive")
		h.Do(t, "POST", featurePath("other")+"/dependencies", h.AdminToken, map[string]any{"feature": "child"}).WantError(t, 403, "InvalidOperationError", "Transitive")
		h.Do(t, "POST", dep, h.AdminToken, map[string]any{"feature": "ghost"}).WantError(t, 403, "InvalidOperationError", "ghost")
		h.Do(t, "POST", dep, h.AdminToken, map[string]any{}).WantError(t, 400, "ValidationError", "feature")
		h.Do(t, "DELETE", featurePath("parent"), h.AdminToken, nil).WantError(t, 403, "NoAccessError", "depend")
		if ev := eventsOf(t, h, "feature-dependency-added", "child"); len(ev) != 1 || ev[0]["data"].(map[string]any)["feature"] != "parent" {
			t.Fatalf("added event: %v", ev)
		}
		h.Do(t, "DELETE", dep+"/parent", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "POST", dep, h.AdminToken, map[string]any{"feature": "parent", "enabled": false}).Want(t, 200)
		h.Do(t, "DELETE", dep, h.AdminToken, nil).Want(t, 200)
		if len(eventsOf(t, h, "feature-dependency-removed", "child")) != 1 || len(eventsOf(t, h, "feature-dependencies-removed", "child")) != 1 {
			t.Fatal("removal events missing")
		}

		// A new dependency replaces the child's others (Unleash 8 keeps one
		// parent per flag); the admin view always shows the variants.
		h.Do(t, "POST", dep, h.AdminToken, map[string]any{"feature": "parent", "variants": []string{"v1"}}).Want(t, 200)
		h.Do(t, "POST", dep, h.AdminToken, map[string]any{"feature": "other", "enabled": false}).Want(t, 200)
		f = h.Do(t, "GET", featurePath("child"), h.AdminToken, nil).Map(t)
		if deps := fmt.Sprint(f["dependencies"]); deps != "[map[enabled:false feature:other variants:[]]]" {
			t.Fatalf("dependencies after a second one: %s", deps)
		}
		h.Do(t, "DELETE", featurePath("parent"), h.AdminToken, nil).Want(t, 202)
	})
}

func TestBulkToggle(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "b1")
		createFlag(t, h, "b2")
		bulk := "/api/admin/projects/default/bulk_features/environments/production"
		h.Do(t, "POST", bulk+"/on", h.AdminToken, map[string]any{"features": []string{"b1", "b2"}}).Want(t, 200)
		for _, n := range []string{"b1", "b2"} {
			if envOf(t, h.Do(t, "GET", featurePath(n), h.AdminToken, nil).Map(t), "production")["enabled"] != true {
				t.Fatalf("%s not on", n)
			}
		}
		// All or nothing: an unknown flag leaves the others untouched.
		h.Do(t, "POST", bulk+"/off", h.AdminToken, map[string]any{"features": []string{"b1", "nope"}}).WantError(t, 404, "NotFoundError", "nope")
		if envOf(t, h.Do(t, "GET", featurePath("b1"), h.AdminToken, nil).Map(t), "production")["enabled"] != true {
			t.Fatal("b1 switched off by a failed bulk call")
		}
		h.Do(t, "POST", bulk+"/off", h.AdminToken, map[string]any{"features": []string{}}).WantError(t, 400, "ValidationError", "features")
		h.Do(t, "POST", bulk+"/off", h.AdminToken, map[string]any{"features": []string{"b1", "b2"}}).Want(t, 200)
		if n := len(eventsOf(t, h, "feature-environment-disabled", "b2")); n != 1 {
			t.Fatalf("%d disabled events", n)
		}
	})
}

func TestSetFeatureEnabledChecksPermission(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "k1")
		setEnabled := func(p *domain.Principal, feature string, enabled bool) error {
			return h.Server.Store().Tx(context.Background(), func(tx *store.Tx) error {
				_, _, err := domain.SetEnabled(tx, p, "default", feature, "production", enabled, false)
				return err
			})
		}
		viewer := &domain.Principal{Kind: domain.KindUser, Name: "svc-viewer", RootRole: domain.RoleViewer}
		err := setEnabled(viewer, "k1", true)
		if !apierr.IsKind(err, apierr.KindForbidden) {
			t.Fatalf("viewer: %v", err)
		}
		id := int64(7)
		editor := &domain.Principal{Kind: domain.KindUser, Name: "svc-editor", UserID: &id, RootRole: domain.RoleEditor}
		if err := setEnabled(editor, "k1", true); err != nil {
			t.Fatal(err)
		}
		ev := eventsOf(t, h, "feature-environment-enabled", "k1")
		if len(ev) != 1 || ev[0]["createdBy"] != "svc-editor" || ev[0]["createdByUserId"] != float64(7) {
			t.Fatalf("events: %v", ev)
		}
		if err := setEnabled(editor, "nope", false); !apierr.IsKind(err, apierr.KindNotFound) {
			t.Fatalf("unknown flag: %v", err)
		}
	})
}

func TestCloneFeature(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "src")
		h.Do(t, "POST", envPath("src", "development")+"/strategies", h.AdminToken, map[string]any{"name": "flexibleRollout", "parameters": map[string]any{"rollout": "20"}}).Want(t, 200)
		h.Do(t, "PUT", envPath("src", "production")+"/variants", h.AdminToken, []any{map[string]any{"name": "v", "weight": 1000}}).Want(t, 200)
		h.Do(t, "POST", envPath("src", "development")+"/on", h.AdminToken, nil).Want(t, 200)
		clone := h.Do(t, "POST", featurePath("src")+"/clone", h.AdminToken, map[string]any{"name": "copy"}).Want(t, 201).Map(t)
		dev := envOf(t, clone, "development")
		st := dev["strategies"].([]any)
		if dev["enabled"] != false || len(st) != 1 || st[0].(map[string]any)["parameters"].(map[string]any)["groupId"] != "copy" ||
			st[0].(map[string]any)["parameters"].(map[string]any)["rollout"] != "20" || len(envOf(t, clone, "production")["variants"].([]any)) != 1 {
			t.Fatalf("clone: %v", clone)
		}
		h.Do(t, "POST", featurePath("src")+"/clone", h.AdminToken, map[string]any{"name": "copy"}).WantError(t, 409, "NameExistsError")
		h.Do(t, "POST", featurePath("nope")+"/clone", h.AdminToken, map[string]any{"name": "x"}).WantError(t, 404, "NotFoundError")
		if len(eventsOf(t, h, "feature-created", "copy")) != 1 || len(eventsOf(t, h, "feature-strategy-add", "copy")) != 1 {
			t.Fatal("clone events missing")
		}
		h.Do(t, "DELETE", featurePath("copy"), h.AdminToken, nil).Want(t, 202)
		archived := h.Do(t, "GET", "/api/admin/archive/features", h.AdminToken, nil).Want(t, 200).Map(t)
		if fs := archived["features"].([]any); len(fs) != 1 || fs[0].(map[string]any)["name"] != "copy" {
			t.Fatalf("archived: %v", archived)
		}
	})
}
