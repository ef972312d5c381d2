package server_test

import (
	"slices"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// These tests pin what Unleash 8.2.0 stores and serves, and what it
// refuses, for the same admin calls (issue 14); each subtest is one rule.

// variant is a strategy variant as Unleash requires it.
func variant(name string, weight int, weightType string) map[string]any {
	return map[string]any{"name": name, "weight": weight, "weightType": weightType, "stickiness": "default"}
}

// clientStrategies is the strategies of a flag in the client API.
func clientStrategies(t *testing.T, h *servertest.Harness, flag string) []map[string]any {
	t.Helper()
	var body struct {
		Features []struct {
			Name       string
			Strategies []map[string]any
		}
	}
	h.Do(t, "GET", "/api/client/features", h.ClientToken, nil).Want(t, 200).JSON(t, &body)
	for _, f := range body.Features {
		if f.Name == flag {
			return f.Strategies
		}
	}
	t.Fatalf("flag %s not in the client API", flag)
	return nil
}

// namesAndWeights lists variants as name=weight.
func namesAndWeights(vs []any) []string {
	var out []string
	for _, v := range vs {
		m := v.(map[string]any)
		out = append(out, m["name"].(string)+"="+itoaFloat(m["weight"]))
	}
	return out
}

func itoaFloat(v any) string { return itoa(int64(v.(float64))) }

func TestStoredConfigurationAsUnleash(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		strategies := func(flag string) string { return envPath(flag, "development") + "/strategies" }

		t.Run("strategy variants are sorted by name after their weights are fixed", func(t *testing.T) {
			createFlag(t, h, "sorted")
			st := h.Do(t, "POST", strategies("sorted"), h.AdminToken, map[string]any{"name": "flexibleRollout",
				"variants": []any{variant("zeta", 0, "variable"), variant("Beta", 0, "variable"), variant("beta", 100, "fix"),
					variant("alpha", 0, "variable")}}).Want(t, 200).Map(t)
			// 900 over three variable variants, the first of them in the
			// request (zeta) getting the remainder; then localeCompare order.
			want := []string{"alpha=300", "beta=100", "Beta=300", "zeta=300"}
			if got := namesAndWeights(st["variants"].([]any)); !slices.Equal(got, want) {
				t.Fatalf("stored variants %v, want %v", got, want)
			}
			h.Do(t, "POST", envPath("sorted", "development")+"/on", h.AdminToken, nil).Want(t, 200)
			served := clientStrategies(t, h, "sorted")[0]["variants"].([]any)
			if got := namesAndWeights(served); !slices.Equal(got, want) {
				t.Fatalf("served variants %v, want %v", got, want)
			}
			st = h.Do(t, "POST", strategies("sorted"), h.AdminToken, map[string]any{"name": "flexibleRollout",
				"variants": []any{variant("c", 0, "variable"), variant("b", 0, "variable"), variant("a", 0, "variable")}}).Want(t, 200).Map(t)
			if got, want := namesAndWeights(st["variants"].([]any)), []string{"a=333", "b=333", "c=334"}; !slices.Equal(got, want) {
				t.Fatalf("remainder: %v, want %v", got, want)
			}
		})

		t.Run("parameters of other strategies are stored as given", func(t *testing.T) {
			createFlag(t, h, "params")
			st := h.Do(t, "POST", strategies("params"), h.AdminToken, map[string]any{"name": "remoteAddress",
				"parameters": map[string]any{"IPs": "10.0.0.1"}, "variants": []any{variant("v", 0, "variable")}}).Want(t, 200).Map(t)
			h.Do(t, "POST", envPath("params", "development")+"/on", h.AdminToken, nil).Want(t, 200)
			if p := st["parameters"].(map[string]any); len(p) != 1 || p["IPs"] != "10.0.0.1" {
				t.Fatalf("stored parameters %v", p)
			}
			for _, s := range clientStrategies(t, h, "params") {
				if s["name"] == "remoteAddress" {
					if p := s["parameters"].(map[string]any); len(p) != 1 {
						t.Fatalf("served parameters %v", p)
					}
				}
			}
			// flexibleRollout still gets its defaults.
			st = h.Do(t, "POST", strategies("params"), h.AdminToken, map[string]any{"name": "flexibleRollout"}).Want(t, 200).Map(t)
			if p := st["parameters"].(map[string]any); p["rollout"] != "100" || p["stickiness"] != "default" || p["groupId"] != "params" {
				t.Fatalf("flexibleRollout parameters %v", p)
			}
		})

		t.Run("a strategy PUT without segments keeps its segments and title", func(t *testing.T) {
			createFlag(t, h, "keeps")
			seg := h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "keeps-seg",
				"constraints": []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"u1"}}}}).Want(t, 201).Map(t)
			st := h.Do(t, "POST", strategies("keeps"), h.AdminToken, map[string]any{"name": "default", "title": "Beta users",
				"segments": []any{seg["id"]}}).Want(t, 200).Map(t)
			path := strategies("keeps") + "/" + st["id"].(string)
			put := h.Do(t, "PUT", path, h.AdminToken, map[string]any{"name": "default"}).Want(t, 200).Map(t)
			if segs := put["segments"].([]any); len(segs) != 1 || segs[0] != seg["id"] || put["title"] != "Beta users" {
				t.Fatalf("after a PUT without segments and title: %v", put)
			}
			got := h.Do(t, "GET", path, h.AdminToken, nil).Want(t, 200).Map(t)
			if segs := got["segments"].([]any); len(segs) != 1 || got["title"] != "Beta users" {
				t.Fatalf("stored: %v", got)
			}
			put = h.Do(t, "PUT", path, h.AdminToken, map[string]any{"name": "default", "title": nil, "segments": []any{}}).Want(t, 200).Map(t)
			if segs := put["segments"].([]any); len(segs) != 0 || put["title"] != "Beta users" {
				t.Fatalf("segments [] clears them, title null keeps it: %v", put)
			}
		})

		t.Run("sortOrder in a strategy PUT is ignored", func(t *testing.T) {
			createFlag(t, h, "order")
			first := h.Do(t, "POST", strategies("order"), h.AdminToken, map[string]any{"name": "default"}).Want(t, 200).Map(t)
			h.Do(t, "POST", strategies("order"), h.AdminToken, map[string]any{"name": "default"}).Want(t, 200)
			path := strategies("order") + "/" + first["id"].(string)
			before := first["sortOrder"]
			put := h.Do(t, "PUT", path, h.AdminToken, map[string]any{"name": "default", "sortOrder": 7}).Want(t, 200).Map(t)
			got := h.Do(t, "GET", path, h.AdminToken, nil).Want(t, 200).Map(t)
			if put["sortOrder"] != before || got["sortOrder"] != before {
				t.Fatalf("sortOrder %v after PUT (answer %v), want %v", got["sortOrder"], put["sortOrder"], before)
			}
			h.Do(t, "POST", strategies("order")+"/set-sort-order", h.AdminToken, []any{map[string]any{"id": first["id"], "sortOrder": 7}}).Want(t, 200)
			if got := h.Do(t, "GET", path, h.AdminToken, nil).Want(t, 200).Map(t); got["sortOrder"] != float64(7) {
				t.Fatalf("set-sort-order did not reorder: %v", got)
			}
		})

		t.Run("shouldActivateDisabledStrategies re-enables disabled strategies", func(t *testing.T) {
			createFlag(t, h, "reactivate")
			env := envPath("reactivate", "development")
			h.Do(t, "POST", env+"/strategies", h.AdminToken, map[string]any{"name": "default"}).Want(t, 200)
			off := h.Do(t, "POST", env+"/strategies", h.AdminToken, map[string]any{"name": "remoteAddress",
				"parameters": map[string]any{"IPs": "10.0.0.1"}, "disabled": true}).Want(t, 200).Map(t)
			h.Do(t, "POST", env+"/on", h.AdminToken, nil).Want(t, 200)
			// Already on, one strategy active: the disabled one comes back
			// (an update event for it; the unchanged one writes none).
			h.Do(t, "POST", env+"/on?shouldActivateDisabledStrategies=true", h.AdminToken, nil).Want(t, 200)
			got := h.Do(t, "GET", env+"/strategies/"+off["id"].(string), h.AdminToken, nil).Want(t, 200).Map(t)
			if got["disabled"] != false {
				t.Fatalf("strategy still disabled: %v", got)
			}
			if ev := eventsOf(t, h, "feature-strategy-update", "reactivate"); len(ev) != 1 || ev[0]["data"].(map[string]any)["id"] != off["id"] {
				t.Fatalf("feature-strategy-update events %v, want one for the re-enabled strategy", ev)
			}
			if n := len(eventsOf(t, h, "feature-strategy-add", "reactivate")); n != 2 {
				t.Fatalf("%d feature-strategy-add events, want 2 (no default strategy added)", n)
			}
			// Only disabled strategies and the flag off: re-enabled, no
			// default strategy; without the parameter a default is added.
			createFlag(t, h, "reactivate-off")
			env = envPath("reactivate-off", "development")
			h.Do(t, "POST", env+"/strategies", h.AdminToken, map[string]any{"name": "default", "disabled": true}).Want(t, 200)
			h.Do(t, "POST", env+"/on?shouldActivateDisabledStrategies=true", h.AdminToken, nil).Want(t, 200)
			var list []map[string]any
			h.Do(t, "GET", env+"/strategies", h.AdminToken, nil).Want(t, 200).JSON(t, &list)
			if len(list) != 1 || list[0]["disabled"] != false {
				t.Fatalf("strategies: %v", list)
			}
			createFlag(t, h, "no-reactivate")
			env = envPath("no-reactivate", "development")
			h.Do(t, "POST", env+"/strategies", h.AdminToken, map[string]any{"name": "default", "disabled": true}).Want(t, 200)
			h.Do(t, "POST", env+"/on", h.AdminToken, nil).Want(t, 200)
			h.Do(t, "GET", env+"/strategies", h.AdminToken, nil).Want(t, 200).JSON(t, &list)
			if len(list) != 2 || list[0]["disabled"] != true {
				t.Fatalf("without the parameter: %v", list)
			}
			// Re-enabling saves the strategy again, as Unleash does: its
			// weights are spread anew over the name-sorted variants, so the
			// remainder moves from c (first in the request) to a.
			createFlag(t, h, "reactivate-weights")
			env = envPath("reactivate-weights", "development")
			st := h.Do(t, "POST", env+"/strategies", h.AdminToken, map[string]any{"name": "flexibleRollout", "disabled": true,
				"variants": []any{variant("c", 0, "variable"), variant("b", 0, "variable"), variant("a", 0, "variable")}}).Want(t, 200).Map(t)
			if got, want := namesAndWeights(st["variants"].([]any)), []string{"a=333", "b=333", "c=334"}; !slices.Equal(got, want) {
				t.Fatalf("stored: %v, want %v", got, want)
			}
			h.Do(t, "POST", env+"/on?shouldActivateDisabledStrategies=true", h.AdminToken, nil).Want(t, 200)
			st = h.Do(t, "GET", env+"/strategies/"+st["id"].(string), h.AdminToken, nil).Want(t, 200).Map(t)
			if got, want := namesAndWeights(st["variants"].([]any)), []string{"a=334", "b=333", "c=333"}; !slices.Equal(got, want) {
				t.Fatalf("re-enabled: %v, want %v", got, want)
			}
		})

		t.Run("a flag PUT replaces the metadata", func(t *testing.T) {
			h.Do(t, "POST", featuresURL, h.AdminToken, map[string]any{"name": "meta", "type": "kill-switch",
				"description": "first", "impressionData": true}).Want(t, 201)
			h.Do(t, "PUT", featurePath("meta"), h.AdminToken, map[string]any{"stale": true}).Want(t, 200)
			got := h.Do(t, "GET", featurePath("meta"), h.AdminToken, nil).Want(t, 200).Map(t)
			if got["type"] != "release" || got["description"] != nil || got["impressionData"] != false || got["stale"] != true {
				t.Fatalf("after a PUT of only stale: %v", got)
			}
			h.Do(t, "PUT", featurePath("meta"), h.AdminToken, map[string]any{"type": "experiment", "description": ""}).Want(t, 200)
			got = h.Do(t, "GET", featurePath("meta"), h.AdminToken, nil).Want(t, 200).Map(t)
			if got["type"] != "experiment" || got["description"] != nil || got["stale"] != false {
				t.Fatalf("after a PUT of type and an empty description: %v", got)
			}
		})

		t.Run("the sunset flag type", func(t *testing.T) {
			var types struct {
				Types []struct {
					ID           string
					LifetimeDays *int
				}
			}
			h.Do(t, "GET", "/api/admin/feature-types", h.AdminToken, nil).Want(t, 200).JSON(t, &types)
			last := types.Types[len(types.Types)-1]
			if last.ID != "sunset" || last.LifetimeDays == nil || *last.LifetimeDays != 90 {
				t.Fatalf("types: %+v", types)
			}
			created := h.Do(t, "POST", featuresURL, h.AdminToken, map[string]any{"name": "retiring", "type": "sunset"}).Want(t, 201).Map(t)
			if created["type"] != "sunset" {
				t.Fatalf("created: %v", created)
			}
		})
	})
}

func TestConstraintAndVariantValidationAsUnleash(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "checked")
		base := envPath("checked", "development") + "/strategies"
		withConstraint := func(c map[string]any) map[string]any {
			c["contextName"] = "f"
			return map[string]any{"name": "default", "constraints": []any{c}}
		}
		refused := func(t *testing.T, c map[string]any, property string) {
			t.Helper()
			h.Do(t, "POST", base, h.AdminToken, withConstraint(c)).WantError(t, 400, "ValidationError", property)
		}
		accepted := func(t *testing.T, c map[string]any) {
			t.Helper()
			h.Do(t, "POST", base, h.AdminToken, withConstraint(c)).Want(t, 200)
		}

		t.Run("NUM operators need a number", func(t *testing.T) {
			refused(t, map[string]any{"operator": "NUM_GT", "value": "ten"}, "constraints[0].value")
			refused(t, map[string]any{"operator": "NUM_GT", "value": "9007199254740993"}, "constraints[0].value")
			accepted(t, map[string]any{"operator": "NUM_GT", "value": " 1e3 "})
		})
		t.Run("DATE operators need a date", func(t *testing.T) {
			refused(t, map[string]any{"operator": "DATE_AFTER", "value": "not-a-date"}, "constraints[0].value")
			refused(t, map[string]any{"operator": "DATE_AFTER", "value": "2024-13-01"}, "constraints[0].value")
			accepted(t, map[string]any{"operator": "DATE_AFTER", "value": "2024-01-01T10:00:00.000Z"})
			accepted(t, map[string]any{"operator": "DATE_AFTER", "value": "Jan 5 2024 10:00 PM"})
		})
		t.Run("SEMVER operators need a strict version", func(t *testing.T) {
			refused(t, map[string]any{"operator": "SEMVER_EQ", "value": "v1.2.3"}, "constraints[0].value")
			refused(t, map[string]any{"operator": "SEMVER_EQ", "value": "1.2"}, "constraints[0].value")
			accepted(t, map[string]any{"operator": "SEMVER_EQ", "value": "1.2.3-rc.1+build.5"})
		})
		t.Run("list operators need values", func(t *testing.T) {
			refused(t, map[string]any{"operator": "IN", "value": "a"}, "constraints[0].values")
			refused(t, map[string]any{"operator": "NOT_IN", "values": []string{}}, "constraints[0].values")
			refused(t, map[string]any{"operator": "STR_CONTAINS", "values": []string{""}}, "constraints[0].values[0]")
			accepted(t, map[string]any{"operator": "STR_CONTAINS", "values": []string{"a"}})
		})
		t.Run("REGEX cannot be inverted", func(t *testing.T) {
			refused(t, map[string]any{"operator": "REGEX", "value": "^a", "inverted": true}, "constraints[0].inverted")
			refused(t, map[string]any{"operator": "REGEX", "value": "(a"}, "constraints[0].value")
			accepted(t, map[string]any{"operator": "REGEX", "value": "^a", "caseInsensitive": true})
		})
		t.Run("strategy variants need stickiness and weightType", func(t *testing.T) {
			h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "default",
				"variants": []any{map[string]any{"name": "a", "weight": 0, "weightType": "variable"}}}).
				WantError(t, 400, "ValidationError", "variants[0].stickiness")
			h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "default",
				"variants": []any{map[string]any{"name": "a", "weight": 0, "stickiness": "default"}}}).
				WantError(t, 400, "ValidationError", "variants[0].weightType")
			h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "default",
				"variants": []any{variant("a", 1000, "fix")}}).WantError(t, 400, "ValidationError", "variable weight")
		})
		t.Run("strategy PUT and PATCH check the same rules", func(t *testing.T) {
			st := h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "default"}).Want(t, 200).Map(t)
			path := base + "/" + st["id"].(string)
			h.Do(t, "PUT", path, h.AdminToken, withConstraint(map[string]any{"operator": "NUM_EQ", "value": "x"})).
				WantError(t, 400, "ValidationError", "constraints[0].value")
			h.Do(t, "PATCH", path, h.AdminToken, []any{map[string]any{"op": "add", "path": "/constraints/-",
				"value": map[string]any{"contextName": "f", "operator": "SEMVER_GT", "value": "v2"}}}).
				WantError(t, 400, "ValidationError", "constraints[0].value")
			h.Do(t, "PATCH", path, h.AdminToken, []any{map[string]any{"op": "add", "path": "/variants/-",
				"value": map[string]any{"name": "a", "weight": 0, "weightType": "variable"}}}).
				WantError(t, 400, "ValidationError", "variants[0].stickiness")
		})
		t.Run("segments check the same rules", func(t *testing.T) {
			bad := []any{map[string]any{"contextName": "f", "operator": "DATE_BEFORE", "value": "someday"}}
			h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "bad-seg", "constraints": bad}).
				WantError(t, 400, "ValidationError", "constraints[0].value")
			seg := h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "good-seg", "constraints": []any{}}).Want(t, 201).Map(t)
			h.Do(t, "PUT", "/api/admin/segments/"+itoaFloat(seg["id"]), h.AdminToken, map[string]any{"name": "good-seg", "constraints": bad}).
				WantError(t, 400, "ValidationError", "constraints[0].value")
		})
		t.Run("state import checks the same rules", func(t *testing.T) {
			doc := map[string]any{"version": 4,
				"features": []any{map[string]any{"name": "imported", "project": "default"}},
				"featureStrategies": []any{map[string]any{"featureName": "imported", "environment": "development", "name": "default",
					"constraints": []any{map[string]any{"contextName": "f", "operator": "REGEX", "value": "x", "inverted": true}}}}}
			h.Do(t, "POST", "/api/admin/state/import", h.AdminToken, doc).
				WantError(t, 400, "ValidationError", "featureStrategies[0].constraints[0].inverted")
			doc = map[string]any{"version": 4, "segments": []any{map[string]any{"id": 1, "name": "imported-seg",
				"constraints": []any{map[string]any{"contextName": "f", "operator": "IN"}}}}}
			h.Do(t, "POST", "/api/admin/state/import", h.AdminToken, doc).
				WantError(t, 400, "ValidationError", "segments[0].constraints[0].values")
		})
		t.Run("environment variants need a weight and a variable variant", func(t *testing.T) {
			path := envPath("checked", "production") + "/variants"
			h.Do(t, "PUT", path, h.AdminToken, []any{map[string]any{"name": "a", "weightType": "variable"}}).
				WantError(t, 400, "ValidationError", "variants[0].weight")
			h.Do(t, "PUT", path, h.AdminToken, []any{map[string]any{"name": "a", "weight": 1000, "weightType": "fix"}}).
				WantError(t, 400, "ValidationError", "variable weight")
			res := h.Do(t, "PUT", path, h.AdminToken, []any{map[string]any{"name": "b", "weight": 1}, map[string]any{"name": "a", "weight": 1}}).Want(t, 200).Map(t)
			if got, want := namesAndWeights(res["variants"].([]any)), []string{"a=500", "b=500"}; !slices.Equal(got, want) {
				t.Fatalf("environment variants %v, want %v", got, want)
			}
		})
	})
}
