package proxy_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/proxy"
)

func TestRemoteAddressIsPlainIPv4(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	_, body := r.get(t, "/proxy")
	assert.Contains(t, names(toggles(t, body)), "ip-local", "127.0.0.1, not ::ffff:127.0.0.1")
	// Untrusted: X-Forwarded-For is ignored.
	_, body = r.get(t, "/proxy", "X-Forwarded-For", "203.0.113.7")
	assert.NotContains(t, names(toggles(t, body)), "ip-forwarded")
	assert.Contains(t, names(toggles(t, body)), "ip-local")
	// A remoteAddress in the context wins.
	_, body = r.get(t, "/proxy?remoteAddress=203.0.113.7")
	assert.Contains(t, names(toggles(t, body)), "ip-forwarded")
}

func TestTrustProxy(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	for _, tc := range []struct {
		trust, xff string
		forwarded  bool
	}{
		{"true", "203.0.113.7", true},
		{"true", "203.0.113.7, 10.0.0.1", true},
		{"false", "203.0.113.7", false},
		{"127.0.0.1", "203.0.113.7", true},
		{"loopback", "203.0.113.7", true},
		{"127.0.0.0/8, 10.0.0.0/8", "203.0.113.7, 10.1.2.3", true},
		{"127.0.0.1", "203.0.113.7, 198.51.100.1", false}, // 198.51.100.1 is not trusted
		{"10.0.0.0/8", "203.0.113.7", false},              // the peer itself is not trusted
	} {
		cfg := testConfig(u)
		var err error
		cfg, err = withEnv(cfg, map[string]string{"TRUST_PROXY": tc.trust})
		require.NoError(t, err)
		r := startReady(t, cfg)
		_, body := r.get(t, "/proxy", "X-Forwarded-For", tc.xff)
		got := names(toggles(t, body))
		if tc.forwarded {
			assert.Contains(t, got, "ip-forwarded", "%s / %s", tc.trust, tc.xff)
		} else {
			assert.NotContains(t, got, "ip-forwarded", "%s / %s", tc.trust, tc.xff)
		}
	}
}

// withEnv applies environment variables over a base configuration via
// LoadConfig, keeping the base's required options.
func withEnv(base proxy.Config, env map[string]string) (proxy.Config, error) {
	full := map[string]string{"UPSTREAM_URL": base.UpstreamURL, "UPSTREAM_API_TOKEN": base.UpstreamAPIToken,
		"UPSTREAM_PROXY_CLIENT_KEYS": clientKey, "UPSTREAM_FETCH_INTERVAL": "50", "UPSTREAM_METRICS_INTERVAL": "100",
		"EXP_SERVER_SIDE_SDK_CONFIG_TOKENS": "server-token"}
	for k, v := range env {
		full[k] = v
	}
	return proxy.LoadConfig(func(k string) (string, bool) { v, ok := full[k]; return v, ok }, nil)
}

func TestEnvironmentOverrideAndDefaultAppName(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	_, body := r.get(t, "/proxy?environment=production")
	assert.Contains(t, names(toggles(t, body)), "env-prod", "without the option SDKs choose")
	assert.Contains(t, names(toggles(t, body)), "app-default", "appName defaults to upstreamAppName")
	_, body = r.get(t, "/proxy?appName=web")
	assert.NotContains(t, names(toggles(t, body)), "app-default", "a client appName wins")

	cfg := testConfig(u)
	cfg.Environment = "staging"
	r = startReady(t, cfg)
	_, body = r.get(t, "/proxy?environment=production")
	assert.NotContains(t, names(toggles(t, body)), "env-prod", "the option cannot be overridden")
	_, body = r.post(t, "/proxy", `{"context":{"environment":"production"}}`)
	assert.NotContains(t, names(toggles(t, body)), "env-prod")

	cfg.Environment = "production"
	r = startReady(t, cfg)
	_, body = r.get(t, "/proxy?environment=dev")
	assert.Contains(t, names(toggles(t, body)), "env-prod")
}

type strategyFunc func(map[string]string, *engine.Context) (bool, error)

func (f strategyFunc) IsEnabled(p map[string]string, c *engine.Context) (bool, error) { return f(p, c) }

type enricherFunc func(engine.Context) (engine.Context, error)

func (f enricherFunc) Enrich(c engine.Context) (engine.Context, error) { return f(c) }

const customFixture = `{"version":2,"features":[
 {"name":"custom-on","enabled":true,"strategies":[{"name":"isTeam","parameters":{"team":"core"}}],"variants":[]},
 {"name":"custom-throws","enabled":true,"strategies":[{"name":"throws","parameters":{}}],"variants":[]},
 {"name":"custom-panics","enabled":true,"strategies":[{"name":"panics","parameters":{}}],"variants":[]},
 {"name":"plain","enabled":true,"strategies":[{"name":"default","parameters":{}}],"variants":[]}
]}`

func TestCustomStrategiesAndEnrichers(t *testing.T) {
	u := newFakeUpstream(t, customFixture)
	strategies := map[string]engine.CustomStrategy{
		"isTeam": strategyFunc(func(p map[string]string, c *engine.Context) (bool, error) {
			return c.Properties["team"] == p["team"], nil
		}),
		"throws": strategyFunc(func(map[string]string, *engine.Context) (bool, error) { return true, errors.New("boom") }),
		"panics": strategyFunc(func(map[string]string, *engine.Context) (bool, error) { panic("boom") }),
	}
	enrichers := []proxy.ContextEnricher{
		enricherFunc(func(c engine.Context) (engine.Context, error) { return c, errors.New("broken enricher") }),
		enricherFunc(func(c engine.Context) (engine.Context, error) {
			if c.UserID == "alice" {
				c.Properties = map[string]string{"team": "core"}
			}
			return c, nil
		}),
	}
	r := startReady(t, testConfig(u), proxy.WithCustomStrategies(strategies), proxy.WithEnrichers(enrichers...))
	resp, body := r.get(t, "/proxy?userId=alice")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, []string{"custom-on", "plain"}, names(toggles(t, body)), "failing strategies are false, a failing enricher is skipped")
	_, body = r.get(t, "/proxy?userId=bob")
	assert.Equal(t, []string{"plain"}, names(toggles(t, body)))
	resp, _ = r.do(t, http.MethodGet, "/proxy/health", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode, "the proxy is still up")
}

func TestUnreadableScriptFileStopsStartup(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	cfg := testConfig(u)
	cfg.CustomStrategies = []string{"/nonexistent/strategies.js"}
	_, err := proxy.New(cfg, proxy.WithStorageProvider(nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "customStrategies")
	assert.Contains(t, err.Error(), "UPSTREAM_CUSTOM_STRATEGIES_FILE")

	cfg = testConfig(u)
	cfg.ExpCustomEnrichers = []string{"/nonexistent/enrichers.js"}
	_, err = proxy.New(cfg, proxy.WithStorageProvider(nil))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "EXP_CUSTOM_ENRICHERS_FILE")
}
