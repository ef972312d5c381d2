package proxy_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bunting-flags/bunting/internal/testutil"
)

const segmentFixture = `{"version":2,"features":[
 {"name":"segment-flag","enabled":true,"strategies":[{"name":"default","parameters":{},"constraints":[],"segments":[7]}],"variants":[]},
 {"name":"plain","enabled":true,"strategies":[{"name":"default","parameters":{}}],"variants":[]}
],"segments":[{"id":7,"name":"vips","constraints":[{"contextName":"userId","operator":"IN","values":["vip"]}]}]}`

// TestNodeServerSDK runs the real Node server SDK (unleash-client 6.12.1)
// against /proxy/client/features with a server-side SDK token, and against
// /api/client/features as if the proxy were Unleash Edge (only the URL
// changes): it gets the segments and evaluates segment flags right, and
// its metrics, posted to the proxy, arrive upstream.
func TestNodeServerSDK(t *testing.T) {
	node, mods := testutil.Node(t), testutil.NodeModules(t, "unleash-client")
	for _, base := range []string{"/proxy/", "/api/"} {
		t.Run(base, func(t *testing.T) {
			u := newFakeUpstream(t, segmentFixture)
			cfg := testConfig(u)
			cfg.MetricsInterval = 200 * time.Millisecond
			r := startReady(t, cfg)

			out, err := nodeScript(t, node, mods, "proxy-server-sdk.js", "PROXY_URL="+r.srv.URL+base, "SERVER_TOKEN=server-token").Output()
			require.NoError(t, err, string(out))
			require.Equal(t, "OK", strings.TrimSpace(string(out)))

			// The proxy evaluates nothing for a server-side SDK, so counts of
			// its flags upstream come from the SDK's metrics; the SDK's count
			// of a name the proxy does not serve is dropped.
			testutil.Eventually(t, 5*time.Second, "the Node SDK's counts upstream", func() bool {
				for _, m := range u.metricsPosts() {
					if tc, ok := m["bucket"].(map[string]any)["toggles"].(map[string]any)["segment-flag"].(map[string]any); ok && tc["yes"].(float64) >= 1 && tc["no"].(float64) >= 1 {
						return true
					}
				}
				return false
			})
			for _, m := range u.metricsPosts() {
				assert.NotContains(t, m["bucket"].(map[string]any)["toggles"], "node-sdk-only")
			}
		})
	}
}
