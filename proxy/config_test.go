package proxy_test

import (
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bunting-flags/bunting/proxy"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

var required = map[string]string{
	"UPSTREAM_URL":               "http://up.example/api",
	"UPSTREAM_API_TOKEN":         "tok",
	"UPSTREAM_PROXY_CLIENT_KEYS": "k1",
}

func load(t *testing.T, env map[string]string, args ...string) (proxy.Config, error) {
	t.Helper()
	all := map[string]string{}
	for k, v := range required {
		all[k] = v
	}
	for k, v := range env {
		all[k] = v
	}
	return proxy.LoadConfigTo(envOf(all), args, io.Discard)
}

func TestConfigDefaults(t *testing.T) {
	cfg, err := load(t, nil)
	require.NoError(t, err)
	assert.Equal(t, "http://up.example/api/", cfg.UpstreamURL)
	assert.Equal(t, "tok", cfg.UpstreamAPIToken)
	assert.Equal(t, []string{"k1"}, cfg.ClientKeys)
	assert.Equal(t, 3000, cfg.Port)
	assert.Equal(t, "", cfg.ProxyBasePath)
	assert.Equal(t, "upstream-proxy", cfg.UpstreamAppName)
	assert.Equal(t, 5*time.Second, cfg.RefreshInterval)
	assert.Equal(t, 30*time.Second, cfg.MetricsInterval)
	assert.Equal(t, time.Duration(0), cfg.MetricsJitter)
	assert.Equal(t, slog.LevelWarn, cfg.LogLevel)
	assert.Equal(t, "authorization", cfg.ClientKeysHeaderName)
	assert.False(t, cfg.EnableOAS)
	assert.False(t, cfg.EnableAllEndpoint)
	assert.False(t, cfg.TrustProxy.Enabled())
	assert.Equal(t, proxy.CORSConfig{Origin: []string{"*"}, Methods: []string{"GET", "POST"}, ExposedHeaders: []string{"ETag"},
		MaxAge: 172800, OptionsSuccessStatus: 204}, cfg.CORS)
	assert.True(t, cfg.HTTPOptions.RejectUnauthorized)
	assert.Nil(t, cfg.Tags)
	assert.Equal(t, int64(100*1024), cfg.MaxBodyBytes)
}

func TestConfigEveryVariable(t *testing.T) {
	cfg, err := load(t, map[string]string{
		"UPSTREAM_PROXY_CLIENT_KEYS":        "a, b,c",
		"PROXY_PORT":                        "4242",
		"PROXY_BASE_PATH":                   "  base/path/  ",
		"UPSTREAM_APP_NAME":                 "app",
		"UPSTREAM_INSTANCE_ID":              "i1",
		"UPSTREAM_FETCH_INTERVAL":           "1500",
		"UPSTREAM_METRICS_INTERVAL":         "0",
		"UPSTREAM_METRICS_JITTER":           "250",
		"UPSTREAM_ENVIRONMENT":              "production",
		"UPSTREAM_PROJECT_NAME":             "web",
		"UPSTREAM_NAME_PREFIX":              "web.",
		"UPSTREAM_TAGS":                     "simple:proxy, demo:test",
		"JSON_LOGGER":                       "true",
		"LOG_LEVEL":                         "debug",
		"UPSTREAM_CUSTOM_STRATEGIES_FILE":   "a.js, b.js",
		"TRUST_PROXY":                       "10.0.0.0/8, 192.168.1.1, loopback",
		"CLIENT_KEY_HEADER_NAME":            "X-Key",
		"ENABLE_OAS":                        "true",
		"ENABLE_ALL_ENDPOINT":               "1",
		"CORS_ORIGIN":                       "https://my-custom-domain.com,https://example.com/my-custom-page",
		"CORS_METHODS":                      "GET, POST",
		"CORS_ALLOWED_HEADERS":              "X-Custom-Header",
		"CORS_EXPOSED_HEADERS":              "ETag, X-Custom-Header",
		"CORS_CREDENTIALS":                  "true",
		"CORS_MAX_AGE":                      "1234567",
		"CORS_PREFLIGHT_CONTINUE":           "true",
		"CORS_OPTIONS_SUCCESS_STATUS":       "200",
		"HTTP_OPTIONS_REJECT_UNAUTHORIZED":  "false",
		"EXP_BOOTSTRAP_URL":                 "https://boot.example/features.json",
		"EXP_BOOTSTRAP_AUTHORIZATION":       "AUTH-BOOTSTRAP",
		"EXP_SERVER_SIDE_SDK_CONFIG_TOKENS": "super1, super2",
		"EXP_CUSTOM_ENRICHERS_FILE":         "e.js",
		"LISTEN_ADDRESS":                    "127.0.0.1",
		"EXP_SCRIPT_TIMEOUT":                "250",
		"EXP_MAX_BODY_BYTES":                "2048",
		"EXP_BACKUP_DIR":                    "/var/lib/proxy",
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b", "c"}, cfg.ClientKeys)
	assert.Equal(t, 4242, cfg.Port)
	assert.Equal(t, "/base/path", cfg.ProxyBasePath)
	assert.Equal(t, "app", cfg.UpstreamAppName)
	assert.Equal(t, "i1", cfg.UpstreamInstanceID)
	assert.Equal(t, 1500*time.Millisecond, cfg.RefreshInterval)
	assert.Equal(t, time.Duration(0), cfg.MetricsInterval)
	assert.Equal(t, 250*time.Millisecond, cfg.MetricsJitter)
	assert.Equal(t, "production", cfg.Environment)
	assert.Equal(t, "web", cfg.ProjectName)
	assert.Equal(t, "web.", cfg.NamePrefix)
	assert.Equal(t, []proxy.Tag{{Name: "simple", Value: "proxy"}, {Name: "demo", Value: "test"}}, cfg.Tags)
	assert.True(t, cfg.UseJSONLogger)
	assert.Equal(t, slog.LevelDebug, cfg.LogLevel)
	assert.Equal(t, []string{"a.js", "b.js"}, cfg.CustomStrategies)
	assert.Equal(t, []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("192.168.1.1/32"),
		netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}, cfg.TrustProxy.Prefixes)
	assert.Equal(t, "X-Key", cfg.ClientKeysHeaderName)
	assert.True(t, cfg.EnableOAS)
	assert.True(t, cfg.EnableAllEndpoint)
	assert.Equal(t, proxy.CORSConfig{
		Origin:         []string{"https://my-custom-domain.com", "https://example.com/my-custom-page"},
		Methods:        []string{"GET", "POST"},
		AllowedHeaders: []string{"X-Custom-Header"}, ExposedHeaders: []string{"ETag", "X-Custom-Header"},
		Credentials: true, MaxAge: 1234567, PreflightContinue: true, OptionsSuccessStatus: 200,
	}, cfg.CORS)
	assert.False(t, cfg.HTTPOptions.RejectUnauthorized)
	assert.Equal(t, proxy.Bootstrap{URL: "https://boot.example/features.json", Authorization: "AUTH-BOOTSTRAP"}, cfg.ExpBootstrap)
	assert.Equal(t, []string{"super1", "super2"}, cfg.ExpServerSideSDKTokens)
	assert.Equal(t, []string{"e.js"}, cfg.ExpCustomEnrichers)
	assert.Equal(t, "127.0.0.1", cfg.ListenAddress)
	assert.Equal(t, 250*time.Millisecond, cfg.ScriptTimeout)
	assert.Equal(t, int64(2048), cfg.MaxBodyBytes)
	assert.Equal(t, "/var/lib/proxy", cfg.BackupDir)
}

func TestConfigAliasesAndPorts(t *testing.T) {
	env := map[string]string{"UPSTREAM_URL": "http://u/api", "UPSTREAM_API_TOKEN": "t", "UPSTREAM_PROXY_SECRETS": "s1-token, s2-token", "PORT": "8080", "PROXY_PORT": "9090"}
	cfg, err := proxy.LoadConfigTo(envOf(env), nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, []string{"s1-token", "s2-token"}, cfg.ClientKeys, "proxySecrets is the deprecated alias")
	assert.Equal(t, 8080, cfg.Port, "PORT comes before PROXY_PORT")

	env["UPSTREAM_PROXY_CLIENT_KEYS"] = "k"
	cfg, err = proxy.LoadConfigTo(envOf(env), nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, []string{"k"}, cfg.ClientKeys, "clientKeys wins over the alias")

	// The reference's UNLEASH_* names work for drop-in use.
	cfg, err = proxy.LoadConfigTo(envOf(map[string]string{"UNLEASH_URL": "http://u/api/features", "UNLEASH_API_TOKEN": "t", "UNLEASH_PROXY_CLIENT_KEYS": "k"}), nil, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "http://u/api/", cfg.UpstreamURL, "a trailing /features is removed")
}

func TestConfigFlagsWin(t *testing.T) {
	cfg, err := load(t, map[string]string{"UPSTREAM_FETCH_INTERVAL": "1000", "ENABLE_OAS": "true", "TRUST_PROXY": "true"},
		"-refresh-interval", "2000", "-enable-oas=false", "-port=1234", "-client-keys", "f1,f2",
		"-trust-proxy", "false", "-tags", "a:b", "-cors-origin", "https://x.example", "-enable-all-endpoint",
		"-upstream-url", "https://other/api", "-log-level", "error", "-json-logger")
	require.NoError(t, err)
	assert.Equal(t, 2*time.Second, cfg.RefreshInterval)
	assert.False(t, cfg.EnableOAS)
	assert.True(t, cfg.EnableAllEndpoint)
	assert.Equal(t, 1234, cfg.Port)
	assert.Equal(t, []string{"f1", "f2"}, cfg.ClientKeys)
	assert.False(t, cfg.TrustProxy.Enabled())
	assert.Equal(t, []proxy.Tag{{Name: "a", Value: "b"}}, cfg.Tags)
	assert.Equal(t, []string{"https://x.example"}, cfg.CORS.Origin)
	assert.Equal(t, "https://other/api/", cfg.UpstreamURL)
	assert.Equal(t, slog.LevelError, cfg.LogLevel)
	assert.True(t, cfg.UseJSONLogger)

	// Required options may come from flags alone.
	cfg, err = proxy.LoadConfigTo(envOf(nil), []string{"-upstream-url", "http://u/api", "-upstream-api-token", "t", "-proxy-secrets", "s"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, []string{"s"}, cfg.ClientKeys)

	_, err = proxy.LoadConfigTo(envOf(nil), []string{"-h"}, io.Discard)
	assert.True(t, errors.Is(err, flag.ErrHelp))
}

func TestConfigBadValuesNameTheOption(t *testing.T) {
	for _, tc := range []struct {
		env      map[string]string
		args     []string
		contains []string
	}{
		{map[string]string{"UPSTREAM_FETCH_INTERVAL": "5s"}, nil, []string{"refreshInterval", "UPSTREAM_FETCH_INTERVAL", `"5s"`}},
		{map[string]string{"UPSTREAM_FETCH_INTERVAL": "0"}, nil, []string{"refreshInterval", "UPSTREAM_FETCH_INTERVAL"}},
		{map[string]string{"UPSTREAM_METRICS_INTERVAL": "abc"}, nil, []string{"metricsInterval", "UPSTREAM_METRICS_INTERVAL"}},
		{map[string]string{"UPSTREAM_METRICS_JITTER": "-1"}, nil, []string{"metricsJitter", "UPSTREAM_METRICS_JITTER"}},
		{map[string]string{"PORT": "70000"}, nil, []string{"port", "PORT"}},
		{map[string]string{"PROXY_PORT": "x"}, nil, []string{"port"}},
		{map[string]string{"UPSTREAM_TAGS": "simple"}, nil, []string{"tags", "UPSTREAM_TAGS", "name:value"}},
		{map[string]string{"UPSTREAM_TAGS": "a:b,:c"}, nil, []string{"tags", "UPSTREAM_TAGS"}},
		{map[string]string{"TRUST_PROXY": "10.0.0.0/33"}, nil, []string{"trustProxy", "TRUST_PROXY"}},
		{map[string]string{"TRUST_PROXY": "not-an-ip"}, nil, []string{"trustProxy", "TRUST_PROXY"}},
		{map[string]string{"LOG_LEVEL": "loud"}, nil, []string{"logLevel", "LOG_LEVEL"}},
		{map[string]string{"JSON_LOGGER": "maybe"}, nil, []string{"useJsonLogger", "JSON_LOGGER"}},
		{map[string]string{"ENABLE_OAS": "yes please"}, nil, []string{"enableOAS", "ENABLE_OAS"}},
		{map[string]string{"ENABLE_ALL_ENDPOINT": "2"}, nil, []string{"enableAllEndpoint", "ENABLE_ALL_ENDPOINT"}},
		{map[string]string{"CORS_MAX_AGE": "forever"}, nil, []string{"cors.maxAge", "CORS_MAX_AGE"}},
		{map[string]string{"CORS_OPTIONS_SUCCESS_STATUS": "404"}, nil, []string{"cors.optionsSuccessStatus", "CORS_OPTIONS_SUCCESS_STATUS"}},
		{map[string]string{"CORS_CREDENTIALS": "sure"}, nil, []string{"cors.credentials", "CORS_CREDENTIALS"}},
		{map[string]string{"CORS_PREFLIGHT_CONTINUE": "x"}, nil, []string{"cors.preflightContinue", "CORS_PREFLIGHT_CONTINUE"}},
		{map[string]string{"HTTP_OPTIONS_REJECT_UNAUTHORIZED": "nah"}, nil, []string{"httpOptions.rejectUnauthorized", "HTTP_OPTIONS_REJECT_UNAUTHORIZED"}},
		{map[string]string{"UPSTREAM_URL": "not a url"}, nil, []string{"upstreamUrl", "UPSTREAM_URL"}},
		{map[string]string{"UPSTREAM_URL": "ftp://x/api"}, nil, []string{"upstreamUrl", "UPSTREAM_URL"}},
		{map[string]string{"EXP_BOOTSTRAP_URL": "nope"}, nil, []string{"expBootstrap.url", "EXP_BOOTSTRAP_URL"}},
		{map[string]string{"UPSTREAM_APP_NAME": " "}, nil, []string{"upstreamAppName", "UPSTREAM_APP_NAME"}},
		{map[string]string{"EXP_SCRIPT_TIMEOUT": "0"}, nil, []string{"scriptTimeout", "EXP_SCRIPT_TIMEOUT"}},
		{map[string]string{"EXP_MAX_BODY_BYTES": "lots"}, nil, []string{"maxBodyBytes", "EXP_MAX_BODY_BYTES"}},
		{nil, []string{"-refresh-interval", "soon"}, []string{"refreshInterval", "UPSTREAM_FETCH_INTERVAL", "-refresh-interval"}},
		{nil, []string{"-no-such-flag"}, []string{"no-such-flag"}},
		{nil, []string{"stray"}, []string{"stray"}},
	} {
		_, err := load(t, tc.env, tc.args...)
		require.Error(t, err, "%v %v", tc.env, tc.args)
		for _, c := range tc.contains {
			assert.Contains(t, err.Error(), c, "%v %v", tc.env, tc.args)
		}
	}
}

func TestConfigMissingRequired(t *testing.T) {
	_, err := proxy.LoadConfigTo(envOf(nil), nil, io.Discard)
	require.Error(t, err)
	for _, want := range []string{"upstreamUrl option (UPSTREAM_URL", "upstreamApiToken option (UPSTREAM_API_TOKEN", "clientKeys option (UPSTREAM_PROXY_CLIENT_KEYS"} {
		assert.Contains(t, err.Error(), want)
	}
	_, err = proxy.LoadConfigTo(envOf(map[string]string{"UPSTREAM_URL": "http://u/api"}), nil, io.Discard)
	require.Error(t, err)
	assert.False(t, strings.Contains(err.Error(), "UPSTREAM_URL"), err.Error())
}

func TestConfigBasePathNormalisation(t *testing.T) {
	for in, want := range map[string]string{"/base/path": "/base/path", "base/path/": "/base/path", "base/path": "/base/path",
		"     base/path     ": "/base/path", "   ": "", "/": ""} {
		cfg, err := load(t, map[string]string{"PROXY_BASE_PATH": in})
		require.NoError(t, err)
		assert.Equal(t, want, cfg.ProxyBasePath, in)
	}
}
