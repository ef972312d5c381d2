package compat_test

import (
	"testing"

	"github.com/bunting-flags/bunting/compat/harness"
)

// TestRealClientsWithBuntingServer puts Unleash's own clients in front of
// Bunting's server, once on SQLite and once on PostgreSQL, configured through
// its admin API on the Unleash paths: the Node SDK, the Go SDK and the
// reference Node proxy, then Bunting's proxy. Each evaluates the scenario
// (strategy, constraint, segment, variants), sees a change, and has its
// metrics stored.
func TestRealClientsWithBuntingServer(t *testing.T) {
	harness.Require(t)
	t.Parallel()
	for _, database := range []string{harness.SQLite, harness.Postgres} {
		t.Run(database, func(t *testing.T) {
			up := harness.StartBuntingServer(t, database)
			harness.ApplyScenario(t, up.Admin())

			t.Run("Node SDK", func(t *testing.T) {
				checkSDK(t, up, harness.StartNodeSDK(t, up.ClientEndpoint(), "node-sdk-on-bunting"), direct("node-sdk-on-bunting"))
			})
			t.Run("Go SDK", func(t *testing.T) {
				checkSDK(t, up, startGoSDK(t, up.ClientEndpoint(), "go-sdk-on-bunting"), direct("go-sdk-on-bunting"))
			})
			t.Run("Node proxy", func(t *testing.T) {
				checkProxy(t, up, harness.StartNodeProxy(t, up, "node-proxy-on-bunting"))
			})
			t.Run("Bunting proxy", func(t *testing.T) {
				checkProxy(t, up, harness.StartBuntingProxy(t, up, "bunting-proxy-on-bunting", nil))
			})
		})
	}
}
