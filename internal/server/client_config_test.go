package server_test

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// configBuilds reads how often the server built its client configuration,
// by kind ("full", "changed"), from its Prometheus metrics.
func configBuilds(t testing.TB, h *servertest.Harness) map[string]int {
	t.Helper()
	res := h.Do(t, "GET", "/internal-backstage/prometheus", "", nil).Want(t, 200)
	out := map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(res.Body))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), `bunting_client_config_builds_total{kind="`)
		if kind, count, found := strings.Cut(line, `"} `); ok && found {
			n, _ := strconv.ParseFloat(count, 64)
			out[kind] = int(n)
		}
	}
	return out
}

// clientAnswers are the client API's answers a test compares: both
// environments, both segment forms, and filters by name prefix and tag.
func clientAnswers(t *testing.T, h *servertest.Harness) []string {
	t.Helper()
	var out []string
	for _, token := range []string{servertest.ClientToken, servertest.ProdToken} {
		for _, path := range []string{"/api/client/features", "/api/client/features?namePrefix=pa", "/api/client/features?tag=simple:x"} {
			for _, spec := range []string{"", "5.2.0"} {
				var headers []string
				if spec != "" {
					headers = []string{"Unleash-Client-Spec", spec}
				}
				res := h.Do(t, "GET", path, token, nil, headers...).Want(t, 200)
				out = append(out, fmt.Sprintf("%s %s spec %q: ETag %s\n%s", token, path, spec, res.Header.Get("ETag"), res.Body))
			}
		}
	}
	return out
}

// TestChangedConfigurationMatchesAFreshServer: after each kind of change,
// the configuration the running server brought up to date (only the flags
// a change touched, or the whole of it when a segment changed) answers
// SDKs with exactly the bytes and ETags of a server started afresh on the
// same database.
func TestChangedConfigurationMatchesAFreshServer(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		strategy := func(segments ...int) map[string]any {
			return map[string]any{"name": "flexibleRollout", "parameters": map[string]string{"rollout": "40", "stickiness": "default", "groupId": "g"},
				"constraints": []map[string]any{{"contextName": "country", "operator": "IN", "values": []string{"NO", "SE"}}},
				"segments":    segments}
		}
		var segment int
		steps := []struct {
			name string
			kind string // the build the change makes
			do   func()
		}{
			{"a flag with a strategy, on", "changed", func() {
				createFlag(t, h, "parent")
				h.Do(t, "POST", envPath("parent", "development")+"/strategies", h.AdminToken, strategy()).Want(t, 200)
				h.Do(t, "POST", envPath("parent", "development")+"/on", h.AdminToken, nil).Want(t, 200)
			}},
			{"a child depending on it", "changed", func() {
				createFlag(t, h, "child")
				h.Do(t, "POST", featurePath("child")+"/dependencies", h.AdminToken, map[string]any{"feature": "parent"}).Want(t, 200)
			}},
			{"variants in production", "changed", func() {
				h.Do(t, "PUT", envPath("parent", "production")+"/variants", h.AdminToken, []map[string]any{
					{"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "default"}}).Want(t, 200)
			}},
			{"a tag", "changed", func() {
				h.Do(t, "POST", "/api/admin/features/parent/tags", h.AdminToken, map[string]any{"type": "simple", "value": "x"}).Want(t, 201)
			}},
			{"a segment", "full", func() {
				sg := h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "nordics",
					"constraints": []map[string]any{{"contextName": "region", "operator": "IN", "values": []string{"north"}}}}).Want(t, 201).Map(t)
				segment = int(sg["id"].(float64))
			}},
			{"a strategy using the segment", "changed", func() {
				h.Do(t, "POST", envPath("child", "development")+"/strategies", h.AdminToken, strategy(segment)).Want(t, 200)
			}},
			{"the segment changed", "full", func() {
				h.Do(t, "PUT", "/api/admin/segments/"+strconv.Itoa(segment), h.AdminToken, map[string]any{"name": "nordics",
					"constraints": []map[string]any{{"contextName": "region", "operator": "IN", "values": []string{"north", "far-north"}}}}).Want(t, 204)
			}},
			{"an API token (nothing SDKs see)", "changed", func() {
				h.Do(t, "POST", "/api/admin/api-tokens", h.AdminToken, map[string]any{"tokenName": "other", "type": "client", "environment": "production"}).Want(t, 201)
			}},
			{"the dependency removed", "changed", func() {
				h.Do(t, "DELETE", featurePath("child")+"/dependencies/parent", h.AdminToken, nil).Want(t, 200)
			}},
			{"the parent archived", "changed", func() {
				h.Do(t, "DELETE", featurePath("parent"), h.AdminToken, nil).Want(t, 202)
			}},
			{"the parent deleted", "changed", func() {
				h.Do(t, "DELETE", "/api/admin/archive/parent", h.AdminToken, nil).Want(t, 200)
			}},
			{"the child stale", "changed", func() {
				h.Do(t, "POST", "/api/admin/features/child/stale/on", h.AdminToken, nil).Want(t, 200)
			}},
		}
		clientAnswers(t, h) // the configuration is built
		for _, step := range steps {
			before := configBuilds(t, h)
			step.do()
			got := clientAnswers(t, h)
			after := configBuilds(t, h)
			// (The revision poll may bring a second, empty build.)
			if after[step.kind] == before[step.kind] || step.kind == "changed" && after["full"] != before["full"] {
				t.Errorf("%s: builds went from %v to %v, want a %q one", step.name, before, after, step.kind)
			}
			fresh := servertest.Start(t, h.DB)
			want := clientAnswers(t, fresh)
			fresh.Stop()
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("%s: the running server answers\n%.1500s\na fresh one\n%.1500s", step.name, got[i], want[i])
				}
			}
		}
	})
}

// TestReadyOnceTheConfigurationIsBuilt: /health and /ready answer 200 only
// once the configuration SDKs are served from is built (at start-up,
// before any SDK asks), so that a load balancer sends no SDK to an
// instance that would make it wait, and the first SDK read builds nothing.
func TestReadyOnceTheConfigurationIsBuilt(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "f")
		addr := strings.TrimPrefix(h.URL, "http://")
		h.Stop()
		h = servertest.Start(t, h.DB, servertest.At(addr))
		for _, path := range []string{"/health", "/ready"} {
			testutil.Eventually(t, 30*time.Second, path+" to answer 200", func() bool {
				return h.Do(t, "GET", path, "", nil).Status == 200
			})
			if got := configBuilds(t, h); got["full"] != 1 {
				t.Fatalf("%s answered 200 after %v builds of the configuration, want one full build", path, got)
			}
		}
		if got := configBuilds(t, h); got["full"] != 1 {
			t.Fatalf("/ready answered 200 after %v builds of the configuration, want one full build", got)
		}
		res := h.Do(t, "GET", "/api/client/features", h.ClientToken, nil).Want(t, 200)
		if !strings.Contains(string(res.Body), `"name":"f"`) {
			t.Errorf("the configuration lacks the flag: %s", res.Body)
		}
		if got := configBuilds(t, h); got["full"] != 1 || got["changed"] != 0 {
			t.Errorf("the first SDK read built the configuration again: %v", got)
		}
	})
}
