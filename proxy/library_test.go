package proxy_test

import (
	"bytes"
	ctxpkg "context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/upstream"
	"github.com/bunting-flags/bunting/proxy"
)

func TestOpenAPIDocsServedFromTheBinary(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	cfg := testConfig(u)
	r := startReady(t, cfg)
	resp, _ := r.do(t, http.MethodGet, "/docs/openapi.json", "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "off by default")

	cfg.EnableOAS = true
	cfg.ClientKeysHeaderName = "X-Client-Key"
	r = startReady(t, cfg)
	resp, body := r.do(t, http.MethodGet, "/docs/openapi.json", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "application/json; charset=utf-8", resp.Header.Get("Content-Type"))
	var doc struct {
		OpenAPI    string                    `json:"openapi"`
		Paths      map[string]map[string]any `json:"paths"`
		Components struct {
			SecuritySchemes map[string]struct{ Name string } `json:"securitySchemes"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &doc))
	assert.Equal(t, "3.0.3", doc.OpenAPI)
	for _, p := range []string{"/proxy", "/proxy/all", "/proxy/health", "/proxy/client/metrics", "/proxy/client/register", "/proxy/client/features", "/proxy/internal-backstage/prometheus",
		"/api/frontend", "/api/frontend/all", "/api/frontend/client/metrics", "/api/frontend/client/register", "/api/client/features", "/api/client/metrics", "/api/client/register"} {
		assert.Contains(t, doc.Paths, p)
	}
	assert.Contains(t, doc.Paths["/proxy"], "get")
	assert.Contains(t, doc.Paths["/proxy"], "post")
	assert.Equal(t, "X-Client-Key", doc.Components.SecuritySchemes["apiKey"].Name)

	for _, page := range []string{"/docs/openapi", "/docs/openapi/"} {
		resp, body = r.do(t, http.MethodGet, page, "")
		require.Equal(t, http.StatusOK, resp.StatusCode, page)
		assert.Contains(t, body, "swagger-ui")
		assert.Contains(t, body, "/docs/openapi.json")
		assert.NotRegexp(t, `(src|href)="(https?:)?//`, body, "no CDN: every asset comes from the binary")
	}
	resp, body = r.do(t, http.MethodGet, "/docs/openapi/swagger-ui-bundle.js", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Greater(t, len(body), 100000)

	// proxyBasePath prefixes the docs and the paths they describe.
	cfg.ProxyBasePath = "/base"
	r = startReady(t, cfg)
	resp, body = r.do(t, http.MethodGet, "/base/docs/openapi.json", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, `"/base/proxy"`)
	resp, body = r.do(t, http.MethodGet, "/base/docs/openapi/", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, "/base/docs/openapi.json")
	resp, _ = r.do(t, http.MethodGet, "/docs/openapi.json", "")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// TestFrontendHandlerMountedElsewhere uses the evaluation endpoints alone,
// as the server does at /api/frontend.
func TestFrontendHandlerMountedElsewhere(t *testing.T) {
	cf, err := upstream.DecodeFeatures([]byte(fixture))
	require.NoError(t, err)
	snap := engine.Compile(cf, engine.Options{})
	usage := proxy.NewUsage()
	var calls atomic.Int64
	h := proxy.NewFrontendHandler(proxy.FrontendOptions{
		Snapshot: func(r *http.Request) (*engine.Snapshot, error) {
			if r.Header.Get("Authorization") != "frontend-token" {
				return nil, apierr.Unauthenticated("no")
			}
			return snap, nil
		},
		EnableAllEndpoint: true,
		Counter:           usage.Counter,
		Complete: func(r *http.Request, ctx *engine.Context) error {
			calls.Add(1)
			ctx.AppName = "server"
			return nil
		},
	})
	mux := http.NewServeMux()
	mux.Handle("/api/frontend/", http.StripPrefix("/api/frontend", h))
	mux.Handle("/api/frontend", http.StripPrefix("/api/frontend", h))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	get := func(path, token string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.Header.Set("Authorization", token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	code, body := get("/api/frontend?userId=u1", "frontend-token")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, names(toggles(t, body)), "user-only")
	code, body = get("/api/frontend/all", "frontend-token")
	require.Equal(t, http.StatusOK, code)
	assert.Len(t, toggles(t, body), 10)
	code, _ = get("/api/frontend", "wrong")
	assert.Equal(t, http.StatusUnauthorized, code)
	assert.EqualValues(t, 2, calls.Load())

	b := usage.Flush()
	assert.EqualValues(t, 1, b.Toggles["user-only"].Yes)
	assert.EqualValues(t, 1, b.Toggles["user-only"].No)
	assert.EqualValues(t, 2, b.Toggles["disabled-flag"].No, "evaluated by both requests")
	b = usage.Flush()
	assert.True(t, b.Empty(), "a flush drains the counts")
}

func TestUsageRestoreKeepsCounts(t *testing.T) {
	u := proxy.NewUsage()
	u.Add("a", 1, 2, map[string]int64{"v": 3})
	b := u.Flush()
	u.Add("a", 1, 0, nil)
	u.Restore(b)
	got := u.Flush()
	assert.EqualValues(t, 2, got.Toggles["a"].Yes)
	assert.EqualValues(t, 2, got.Toggles["a"].No)
	assert.EqualValues(t, 3, got.Toggles["a"].Variants["v"])
	assert.Equal(t, b.Start, got.Start, "the restored bucket's start is kept")
}

func TestLoggerFormats(t *testing.T) {
	var buf bytes.Buffer
	cfg := proxy.DefaultConfig()
	cfg.UseJSONLogger = true
	cfg.LogLevel = slog.LevelInfo
	log := proxy.NewLogger(cfg, &buf)
	log.Debug("hidden")
	log.Info("shown", "k", "v")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, lines, 1)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &m))
	assert.Equal(t, "shown", m["msg"])

	buf.Reset()
	cfg.UseJSONLogger = false
	proxy.NewLogger(cfg, &buf).Warn("text")
	assert.Contains(t, buf.String(), "level=WARN msg=text")
}

func TestStorageProviderErrorsAreNotFatal(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u), proxy.WithStorageProvider(failingStorage{}))
	resp, _ := r.get(t, "/proxy")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

type failingStorage struct{}

func (failingStorage) Get(_ ctxT, _ string) ([]byte, error) { return nil, errors.New("disk on fire") }
func (failingStorage) Set(_ ctxT, _ string, _ []byte) error { return errors.New("disk on fire") }

type ctxT = ctxpkg.Context

func ctxpkgWithCancel() (ctxT, func()) {
	ctx, cancel := ctxpkg.WithCancel(ctxpkg.Background())
	return ctx, cancel
}

func TestWithRegistryAndHTTPClient(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	reg := prometheus.NewRegistry()
	var used atomic.Int64
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		used.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	r := startReady(t, testConfig(u), proxy.WithRegistry(reg), proxy.WithHTTPClient(hc))
	r.get(t, "/proxy")
	assert.Positive(t, used.Load(), "upstream requests go through the given client")
	families, err := reg.Gather()
	require.NoError(t, err)
	var got []string
	for _, f := range families {
		got = append(got, f.GetName())
	}
	assert.Contains(t, got, "bunting_proxy_flags_loaded")
	assert.Contains(t, got, "bunting_proxy_http_requests_total")
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
