package server_test

import (
	"fmt"
	"regexp"
	"strconv"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestFrontendAPIFollowsChangesAsCompiled: after each change to flags
// (toggles, edited strategies and constraints, variants, a dependency),
// the frontend API evaluates every flag as the playground does, which
// compiles the flags anew for each request, while the frontend API
// patches its compiled flags with the ones that changed (the Prometheus
// histogram counts one full build, then a patch per change).
func TestFrontendAPIFollowsChangesAsCompiled(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		const n = 80 // above the size from which the engine plans an all-flags evaluation
		var features, envs, strategies []map[string]any
		for i := range n {
			name := fmt.Sprintf("pf-%02d", i)
			features = append(features, map[string]any{"name": name, "project": "default", "type": "release"})
			envs = append(envs, map[string]any{"featureName": name, "environment": "development", "enabled": i%5 != 0})
			strategies = append(strategies, map[string]any{
				"featureName": name, "projectId": "default", "environment": "development", "name": "flexibleRollout",
				"parameters":  map[string]string{"rollout": strconv.Itoa(10 + i), "stickiness": "userId", "groupId": name},
				"constraints": []map[string]any{{"contextName": "country", "operator": "IN", "values": []string{"NO", "SE"}[:1+i%2]}},
			})
		}
		h.Do(t, "POST", "/api/admin/state/import", h.AdminToken, map[string]any{"version": 4, "features": features,
			"featureEnvironments": envs, "featureStrategies": strategies}).Want(t, 202)

		compare := func(step string) {
			t.Helper()
			for u := range 12 {
				ctx := map[string]any{"userId": fmt.Sprintf("user-%d", u), "properties": map[string]string{"country": []string{"NO", "SE", "DK"}[u%3], "plan": []string{"pro", "free"}[u%2]}}
				var front frontendToggles
				h.Do(t, "POST", "/api/frontend", h.FrontendToken, map[string]any{"context": ctx}).Want(t, 200).JSON(t, &front)
				got := map[string]string{}
				for _, tg := range front.Toggles {
					got[tg.Name] = tg.Variant.Name
				}
				var play playgroundAnswer
				h.Do(t, "POST", playgroundPath, h.AdminToken, map[string]any{"environment": "development", "projects": "*", "context": ctx}).Want(t, 200).JSON(t, &play)
				want := map[string]string{}
				for _, f := range play.Features {
					if f.IsEnabled {
						want[f.Name] = f.Variant.Name
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("%s, context %v: the frontend API has %v, the playground %v", step, ctx, got, want)
				}
			}
		}
		compare("start")
		strategyID := func(name string) string {
			var st []map[string]any
			h.Do(t, "GET", envPath(name, "development")+"/strategies", h.AdminToken, nil).Want(t, 200).JSON(t, &st)
			return st[0]["id"].(string)
		}
		changes := []struct {
			step   string
			method string
			path   string
			body   any
			// also is a flag turned off too before the comparison.
			also string
		}{
			{"a flag turned off", "POST", envPath("pf-01", "development") + "/off", nil, ""},
			{"a flag turned on", "POST", envPath("pf-05", "development") + "/on", nil, ""},
			{"a rollout and its constraints edited", "PUT", envPath("pf-02", "development") + "/strategies/" + strategyID("pf-02"), map[string]any{
				"name": "flexibleRollout", "parameters": map[string]string{"rollout": "100", "stickiness": "userId", "groupId": "pf-02"},
				"constraints": []map[string]any{{"contextName": "plan", "operator": "IN", "values": []string{"pro"}}}}, ""},
			{"variants added", "PUT", envPath("pf-03", "development") + "/variants", []map[string]any{
				{"name": "blue", "weight": 500, "weightType": "variable", "stickiness": "userId"},
				{"name": "green", "weight": 500, "weightType": "variable", "stickiness": "userId"}}, ""},
			{"a strategy on a context field no flag used", "POST", envPath("pf-04", "development") + "/strategies", map[string]any{
				"name": "default", "constraints": []map[string]any{{"contextName": "tenant", "operator": "NOT_IN", "values": []string{"acme"}}}}, ""},
			{"two flags changed between two requests", "POST", envPath("pf-06", "development") + "/off", nil, "pf-07"},
		}
		for _, c := range changes {
			h.Do(t, c.method, c.path, h.AdminToken, c.body).Want(t, 200)
			if c.also != "" {
				h.Do(t, "POST", envPath(c.also, "development")+"/off", h.AdminToken, nil).Want(t, 200)
			}
			compare(c.step)
		}
		metrics := string(h.Do(t, "GET", "/internal-backstage/prometheus", "", nil).Want(t, 200).Body)
		count := func(kind string) string {
			m := regexp.MustCompile(`bunting_frontend_snapshot_build_seconds_count\{kind="` + kind + `"\} (\d+)`).FindStringSubmatch(metrics)
			if m == nil {
				return "0"
			}
			return m[1]
		}
		if full, patched := count("full"), count("patched"); full != "1" || patched != strconv.Itoa(len(changes)) {
			t.Errorf("frontend snapshot builds: %s full, %s patched; want 1 full, then a patch per change (%d)", full, patched, len(changes))
		}
	})
}
