package proxy_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/proxy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const scriptFixture = `{"version":2,"features":[
 {"name":"for-blue-team","enabled":true,"strategies":[{"name":"allowedTeams","parameters":{"teams":"blue, green"}}],"variants":[]},
 {"name":"script-throws","enabled":true,"strategies":[{"name":"flaky","parameters":{}}],"variants":[]},
 {"name":"for-example-com","enabled":true,"strategies":[{"name":"default","parameters":{},
   "constraints":[{"contextName":"emailDomain","operator":"IN","values":["example.com"]}]}],"variants":[]},
 {"name":"plain","enabled":true,"strategies":[{"name":"default","parameters":{}}],"variants":[]}
]}`

// writeJS stores a script in the test's directory.
func writeJS(t *testing.T, name, src string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(src), 0o600))
	return path
}

// TestScriptFilesEndToEnd configures script files the way operators do
// (customStrategies / expCustomEnrichers), including the repository's
// example files, and checks evaluation through GET /proxy: script
// strategies decide flags, enrichers feed constraints, and a throwing or
// looping script costs only its own result.
func TestScriptFilesEndToEnd(t *testing.T) {
	u := newFakeUpstream(t, scriptFixture)
	cfg := testConfig(u)
	cfg.ScriptTimeout = time.Second // generous: calls that must succeed run on a shared, loaded machine
	cfg.CustomStrategies = []string{
		filepath.Join("..", "examples", "custom-strategies.js"),
		writeJS(t, "flaky.js", `module.exports = [{ name: 'flaky', isEnabled(p, c) {
  if (c.properties.mode === 'loop') { for (;;) {} }
  throw new Error('flaky strategy broke');
} }]`),
	}
	cfg.ExpCustomEnrichers = []string{
		writeJS(t, "broken.js", `module.exports = [ c => { if (c.properties.mode === 'loop') { for (;;) {} } return 42 } ]`),
		filepath.Join("..", "examples", "enrichers.js"),
	}
	r := startReady(t, cfg)

	resp, body := r.get(t, "/proxy?properties[team]=blue&properties[email]=ann@Example.COM")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Equal(t, []string{"for-blue-team", "for-example-com", "plain"}, names(toggles(t, body)))

	_, body = r.get(t, "/proxy?properties[team]=red&properties[email]=bob@mail.test")
	assert.Equal(t, []string{"plain"}, names(toggles(t, body)))

	resp, body = r.get(t, "/proxy?properties[team]=green&properties[mode]=loop")
	require.Equal(t, http.StatusOK, resp.StatusCode, "runaway scripts are stopped, not waited for")
	assert.Equal(t, []string{"for-blue-team", "plain"}, names(toggles(t, body)))

	resp, _ = r.do(t, http.MethodGet, "/proxy/health", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the proxy is still up")
}

func TestBadScriptFileStopsStartupNamingTheOption(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	bad := writeJS(t, "bad.js", `module.exports = [ { name: 'x' ]`)

	cfg := testConfig(u)
	cfg.CustomStrategies = []string{bad}
	_, err := proxy.New(cfg, proxy.WithStorageProvider(nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "UPSTREAM_CUSTOM_STRATEGIES_FILE")
	assert.Contains(t, err.Error(), bad)

	cfg = testConfig(u)
	cfg.ExpCustomEnrichers = []string{writeJS(t, "not-fn.js", `module.exports = [ { enrich: c => c } ]`)}
	_, err = proxy.New(cfg, proxy.WithStorageProvider(nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "EXP_CUSTOM_ENRICHERS_FILE")
	assert.Contains(t, err.Error(), "must be a function")
}
