package scripts_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/scripts"
	"github.com/stretchr/testify/require"
)

// nodeModules finds the pinned npm fixtures (test/node/node_modules). When
// they are missing the test skips, unless BUNTING_REQUIRE_FIXTURES=1.
func nodeModules(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("BUNTING_NODE_MODULES")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "test", "node", "node_modules")
	}
	if _, err := os.Stat(filepath.Join(dir, "@unleash", "proxy")); err != nil {
		if os.Getenv("BUNTING_REQUIRE_FIXTURES") == "1" {
			t.Fatalf("npm fixtures missing in %s (run make node-deps): %v", dir, err)
		}
		t.Skipf("npm fixtures missing in %s (run make node-deps)", dir)
	}
	return dir
}

// TestNodeProxyExampleLoadsUnchanged loads the example strategy file that
// ships with the Node proxy (@unleash/proxy 1.4.19), as its own test does:
// one strategy named FromFile, enabled.
func TestNodeProxyExampleLoadsUnchanged(t *testing.T) {
	path := filepath.Join(nodeModules(t), "@unleash", "proxy", "src", "examples", "custom-strategies.js")
	strategies, err := scripts.LoadStrategies([]string{path}, calm)
	require.NoError(t, err)
	require.Len(t, strategies, 1)
	require.Contains(t, strategies, "FromFile")
	enabled, err := strategies["FromFile"].IsEnabled(map[string]string{}, &engine.Context{UserID: "1"})
	require.NoError(t, err)
	require.True(t, enabled)
}
