package proxy_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bunting-flags/bunting/internal/testutil"
)

// nodeScript prepares a run of one of test/node's scripts with the npm
// modules on its path, env added and a 30 s deadline; its stderr goes to
// the test log.
func nodeScript(t *testing.T, node, mods, script string, env ...string) *exec.Cmd {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, node, filepath.Join(filepath.Dir(mods), script))
	cmd.Dir = filepath.Dir(mods)
	cmd.Env = append(append(os.Environ(), "NODE_PATH="+mods), env...)
	cmd.Stderr = testWriter{t}
	return cmd
}

// TestBrowserSDK runs the real browser SDK (unleash-proxy-client 3.8.2)
// under Node against the proxy: it becomes ready, reads flags and
// variants, sees an upstream change, and its metrics arrive upstream.
func TestBrowserSDK(t *testing.T) {
	node, mods := testutil.Node(t), testutil.NodeModules(t, "unleash-proxy-client")
	for _, usePOST := range []string{"0", "1"} {
		t.Run("usePOST="+usePOST, func(t *testing.T) {
			u := newFakeUpstream(t, fixture)
			cfg := testConfig(u)
			cfg.MetricsInterval = 200 * time.Millisecond
			r := startReady(t, cfg)

			cmd := nodeScript(t, node, mods, "proxy-client.js", "PROXY_URL="+r.srv.URL+"/proxy", "CLIENT_KEY="+clientKey, "USE_POST="+usePOST)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			require.NoError(t, cmd.Start())
			lines := bufio.NewScanner(stdout)
			var seen []string
			for lines.Scan() {
				line := lines.Text()
				t.Log("sdk:", line)
				seen = append(seen, line)
				require.False(t, strings.HasPrefix(line, "FAIL"), line)
				if line == "READY" {
					u.setPayload(bootstrapPayload)
				}
			}
			require.NoError(t, cmd.Wait())
			assert.Equal(t, []string{"READY", "UPDATED", "SENT"}, seen)

			// The proxy's own evaluations never count the "disabled"
			// fallback of a flag without variants, so that count upstream
			// can only come from the SDK's metrics (its getVariant call).
			// The SDK's count of a name the proxy does not serve is
			// dropped.
			testutil.Eventually(t, 5*time.Second, "the SDK's counts upstream", func() bool {
				for _, m := range u.metricsPosts() {
					b := m["bucket"].(map[string]any)
					if tc, ok := b["toggles"].(map[string]any)["enabled-simple"].(map[string]any); ok && tc["variants"].(map[string]any)["disabled"] != nil {
						return true
					}
				}
				return false
			})
			for _, m := range u.metricsPosts() {
				assert.NotContains(t, m["bucket"].(map[string]any)["toggles"], "sdk-only-name")
			}
		})
	}
}
