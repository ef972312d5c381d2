package scripts_test

import (
	"path/filepath"
	"testing"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/scripts"
	"github.com/bunting-flags/bunting/internal/testutil"
	"github.com/stretchr/testify/require"
)

// TestNodeProxyExampleLoadsUnchanged loads the example strategy file that
// ships with the Node proxy (@unleash/proxy 1.4.19), as its own test does:
// one strategy named FromFile, enabled.
func TestNodeProxyExampleLoadsUnchanged(t *testing.T) {
	path := filepath.Join(testutil.NodeModules(t, "@unleash/proxy"), "@unleash", "proxy", "src", "examples", "custom-strategies.js")
	strategies, err := scripts.LoadStrategies([]string{path}, calm)
	require.NoError(t, err)
	require.Len(t, strategies, 1)
	require.Contains(t, strategies, "FromFile")
	enabled, err := strategies["FromFile"].IsEnabled(map[string]string{}, &engine.Context{UserID: "1"})
	require.NoError(t, err)
	require.True(t, enabled)
}
