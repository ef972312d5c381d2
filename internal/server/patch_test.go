package server_test

import (
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

func TestPatchFeatureAndStrategy(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "f1")
		f := h.Do(t, "PATCH", featurePath("f1"), h.AdminToken, []any{
			map[string]any{"op": "replace", "path": "/description", "value": "patched"},
			map[string]any{"op": "replace", "path": "/stale", "value": true},
		}).Want(t, 200).Map(t)
		if f["description"] != "patched" || f["stale"] != true {
			t.Fatalf("patched flag: %v", f)
		}
		if len(eventsOf(t, h, "feature-stale-on", "f1")) != 1 || len(eventsOf(t, h, "feature-metadata-updated", "f1")) != 1 {
			t.Fatal("patch events missing")
		}
		h.Do(t, "PATCH", featurePath("f1"), h.AdminToken, []any{map[string]any{"op": "replace", "path": "/variants", "value": []any{}}}).WantError(t, 403, "NoAccessError", "variants")
		h.Do(t, "PATCH", featurePath("f1"), h.AdminToken, []any{map[string]any{"op": "replace", "path": "/nope", "value": 1}}).WantError(t, 400, "ValidationError", "/nope")
		h.Do(t, "PATCH", featurePath("f1"), h.AdminToken, []any{map[string]any{"op": "move", "path": "/description", "value": 1}}).WantError(t, 400, "ValidationError", "unsupported")
		h.Do(t, "PATCH", featurePath("f1"), h.AdminToken, []any{map[string]any{"op": "replace", "path": "/stale", "value": "yes"}}).WantError(t, 400, "ValidationError", "stale")
		h.Do(t, "PATCH", featurePath("f1"), h.AdminToken, map[string]any{"op": "replace"}).WantError(t, 400, "ValidationError")

		base := envPath("f1", "development") + "/strategies"
		st := h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "flexibleRollout",
			"constraints": []any{map[string]any{"contextName": "a", "operator": "IN", "values": []string{"1"}}}}).Want(t, 200).Map(t)
		id := st["id"].(string)
		patched := h.Do(t, "PATCH", base+"/"+id, h.AdminToken, []any{
			map[string]any{"op": "replace", "path": "/parameters/rollout", "value": "30"},
			map[string]any{"op": "add", "path": "/constraints/-", "value": map[string]any{"contextName": "b", "operator": "NOT_IN", "values": []string{"2"}}},
			map[string]any{"op": "remove", "path": "/constraints/0"},
		}).Want(t, 200).Map(t)
		cs := patched["constraints"].([]any)
		if patched["parameters"].(map[string]any)["rollout"] != "30" || len(cs) != 1 || cs[0].(map[string]any)["contextName"] != "b" {
			t.Fatalf("patched strategy: %v", patched)
		}
		h.Do(t, "PATCH", base+"/"+id, h.AdminToken, []any{map[string]any{"op": "replace", "path": "/constraints/5", "value": 1}}).WantError(t, 400, "ValidationError", "range")
		h.Do(t, "PATCH", base+"/"+id, h.AdminToken, []any{map[string]any{"op": "replace", "path": "/name", "value": "nope"}}).WantError(t, 400, "ValidationError", "nope")
		h.Do(t, "PATCH", base+"/nope", h.AdminToken, []any{}).WantError(t, 404, "NotFoundError")
		if n := len(eventsOf(t, h, "feature-strategy-update", "f1")); n != 1 {
			t.Fatalf("%d strategy update events", n)
		}
	})
}
