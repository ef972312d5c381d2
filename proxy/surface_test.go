package proxy_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bunting-flags/bunting/engine/enginetest"
	"github.com/bunting-flags/bunting/internal/testutil"
	"github.com/bunting-flags/bunting/proxy"
)

func TestNotReadyAnswers503Everywhere(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	u.setMode(modeFail)
	cfg := testConfig(u)
	cfg.EnableAllEndpoint = true
	r := startProxy(t, cfg)
	testutil.Eventually(t, 5*time.Second, "a failed fetch", func() bool { return u.fetchCount() > 0 })
	// Every route, every method, with or without credentials and with a
	// bad body: readiness comes first, as the specification says.
	for _, path := range []string{"/proxy", "/proxy/all", "/proxy/health", "/proxy/client/features", "/proxy/internal-backstage/prometheus",
		"/proxy/client/metrics", "/proxy/client/register", "/proxy/all/client/metrics", "/proxy/unknown",
		"/api/frontend", "/api/frontend/all", "/api/frontend/client/metrics", "/api/frontend/client/register", "/api/proxy",
		"/api/client/features", "/api/client/metrics", "/api/client/register", "/elsewhere"} {
		for _, req := range []struct{ method, body, key string }{
			{http.MethodGet, "", ""},
			{http.MethodPost, sdkMetricsBody, clientKey},
			{http.MethodPost, `{"appName":"web","instanceId":"i","interval":1000,"started":"2026-11-22T01:00:00Z","strategies":[]}`, "server-token"},
			{http.MethodPost, `{not json`, clientKey},
			{http.MethodPut, "", clientKey},
		} {
			resp, body := r.do(t, req.method, path, req.body, "Authorization", req.key)
			assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s %s", req.method, path)
			assert.Contains(t, body, "not ready to accept requests", "%s %s", req.method, path)
		}
	}
	// A CORS preflight is answered: it does not depend on flags.
	resp, _ := r.do(t, http.MethodOptions, "/proxy", "", "Origin", "https://app.example", "Access-Control-Request-Method", "GET")
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
	assert.False(t, r.p.Ready())

	u.setMode(modeOK)
	waitReady(t, r.p)
	resp, body := r.do(t, http.MethodGet, "/proxy/health", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "ok", body)
	assert.Equal(t, "text/html; charset=utf-8", resp.Header.Get("Content-Type"))
	resp, _ = r.post(t, "/proxy/client/metrics", sdkMetricsBody)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestGetProxyReturnsOnlyEnabledTogglesInExactShape(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	resp, body := r.get(t, "/proxy")
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Equal(t, "application/json; charset=utf-8", resp.Header.Get("Content-Type"))
	assert.Equal(t, "public, max-age=2", resp.Header.Get("Cache-Control"))
	assert.True(t, strings.HasPrefix(resp.Header.Get("ETag"), `W/"`), resp.Header.Get("ETag"))

	ts := toggles(t, body)
	got := byName(ts)
	assert.ElementsMatch(t, []string{"enabled-simple", "with-variant", "app-default", "ip-local", "user-named-disabled"}, names(ts))
	for _, tg := range ts {
		assert.True(t, tg.Enabled, tg.Name)
		require.NotNil(t, tg.Variant, "variant is always present: %s", tg.Name)
		require.NotNil(t, tg.ImpressionData, tg.Name)
	}
	assert.Equal(t, "disabled", got["enabled-simple"].Variant.Name)
	assert.False(t, got["enabled-simple"].Variant.Enabled, "fallback variant is not enabled")
	assert.True(t, *got["enabled-simple"].ImpressionData)
	// A user variant named "disabled" is enabled, unlike the fallback.
	assert.Equal(t, "disabled", got["user-named-disabled"].Variant.Name)
	assert.True(t, got["user-named-disabled"].Variant.Enabled)
	// Payload values are always strings, a JSON payload as a JSON string.
	v := got["with-variant"].Variant
	assert.Equal(t, "blue", v.Name)
	require.NotNil(t, v.Payload)
	assert.Equal(t, "json", v.Payload.Type)
	assert.Equal(t, `{"color":"blue"}`, v.Payload.Value)

	// Exact bytes of one toggle, key order as the reference.
	assert.Contains(t, body, `{"name":"enabled-simple","enabled":true,"variant":{"name":"disabled","enabled":false,"feature_enabled":true,"featureEnabled":true},"impressionData":true}`)
	// No configuration leaks.
	for _, leak := range []string{"strategies", "constraints", "parameters", "userIds", "u1", "disabled-flag", "region-eu", "stickiness", "weight"} {
		assert.NotContains(t, body, leak)
	}
}

func TestQueryContextAsTheBrowserSDKSendsIt(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	for _, tc := range []struct {
		query string
		want  []string
		not   []string
	}{
		{"?sessionId=123&appName=web&environment=default&userId=u1&properties%5Bregion%5D=eu", []string{"user-only", "region-eu"}, []string{"app-default"}},
		{"?userId=u2&properties[region]=eu", []string{"user-only", "region-eu", "app-default"}, nil},
		{"?region=eu", []string{"region-eu"}, nil}, // unknown top-level keys are properties
		// An explicit properties[region] wins over a top-level region,
		// in either order and either form of the brackets.
		{"?region=eu&properties[region]=us", nil, []string{"region-eu"}},
		{"?properties[region]=us&region=eu", nil, []string{"region-eu"}},
		{"?region=eu&properties%5Bregion%5D=us", nil, []string{"region-eu"}},
		{"?properties%5Bregion%5D=us&region=eu", nil, []string{"region-eu"}},
		{"?region=us&properties[region]=eu", []string{"region-eu"}, nil},
		{"?properties[region]=eu&region=us", []string{"region-eu"}, nil},
		{"?properties%5bregion%5d=eu&region=us", []string{"region-eu"}, nil},
		{"?userId=nobody", nil, []string{"user-only", "region-eu"}},
		{"?environment=production", []string{"env-prod"}, nil},
	} {
		resp, body := r.get(t, "/proxy"+tc.query)
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		got := names(toggles(t, body))
		for _, w := range tc.want {
			assert.Contains(t, got, w, tc.query)
		}
		for _, n := range tc.not {
			assert.NotContains(t, got, n, tc.query)
		}
	}
	for _, bad := range []string{"?properties=string", "?userId=1&userId=2", "?userId[]=1", "?properties[a][b]=1", "?userId=%zz", "?properties%5Ba%5D%5Bb%5D=1", "?properties%5B%5D=1", "?properties%5Ba%5D=%zz"} {
		resp, body := r.get(t, "/proxy"+bad)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, bad)
		assert.Contains(t, body, `"name":"ValidationError"`, bad)
	}
}

func TestPostWithToggleList(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	resp, body := r.post(t, "/proxy", `{"toggles":["nope","disabled-flag","enabled-simple","user-only","nope"],"context":{"userId":"u1"}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	ts := toggles(t, body)
	assert.Equal(t, []string{"nope", "disabled-flag", "enabled-simple", "user-only"}, names(ts), "a repeated name is answered once")
	want := []bool{false, false, true, true}
	for i, tg := range ts {
		assert.Equal(t, want[i], tg.Enabled, tg.Name)
		require.NotNil(t, tg.ImpressionData, "impressionData always present in a toggle list: %s", tg.Name)
		require.NotNil(t, tg.Variant)
	}
	assert.Contains(t, body, `{"name":"nope","enabled":false,"variant":{"name":"disabled","enabled":false,"feature_enabled":false,"featureEnabled":false},"impressionData":false}`)
	assert.Equal(t, "public, max-age=2", resp.Header.Get("Cache-Control"))
}

func TestPostWithoutToggleListReturnsEnabled(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	_, getBody := r.get(t, "/proxy")
	for _, body := range []string{`{}`, `{"blah":"hello"}`, `{"toggles":[]}`, `{"context":{"customProperty":"string","properties":{"otherCustomProperty":24}}}`, ""} {
		resp, got := r.post(t, "/proxy", body)
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		assert.ElementsMatch(t, names(toggles(t, getBody)), names(toggles(t, got)), body)
	}
	// Numbers and booleans in context fields are taken as strings.
	resp, got := r.post(t, "/proxy", `{"context":{"userId":"u1","properties":{"region":"eu"}}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, names(toggles(t, got)), "region-eu")
	assert.Contains(t, names(toggles(t, got)), "user-only")
}

// Requests reuse the memory they parse into; nothing of one request may
// reach the next: not its properties, its user, or its toggle list, on one
// connection in turn and on many at once.
func TestNothingCarriesOverBetweenRequests(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	_, plain := r.get(t, "/proxy")
	allEnabled := names(toggles(t, plain))
	require.NotContains(t, allEnabled, "region-eu")
	require.NotContains(t, allEnabled, "user-only")
	check := func(t *testing.T) {
		for range 20 {
			_, body := r.post(t, "/proxy", `{"toggles":["region-eu","user-only","nope"],"context":{"userId":"u1","properties":{"region":"eu"}}}`)
			assert.Equal(t, []string{"region-eu", "user-only", "nope"}, names(toggles(t, body)))
			_, body = r.post(t, "/proxy", `{}`)
			assert.ElementsMatch(t, allEnabled, names(toggles(t, body)), "after a request with a toggle list and properties")
			_, body = r.get(t, "/proxy?userId=u1&properties%5Bregion%5D=eu")
			assert.Contains(t, names(toggles(t, body)), "region-eu")
			_, body = r.get(t, "/proxy")
			assert.ElementsMatch(t, allEnabled, names(toggles(t, body)), "after a request with properties")
		}
	}
	check(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { check(t) })
	}
	wg.Wait()
}

func TestPostBadBodies(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	for _, tc := range []struct {
		body, ctype string
		status      int
	}{
		{`{ toggles": [] }`, "application/json", http.StatusBadRequest},
		{`"str"`, "application/json", http.StatusBadRequest},
		{`null`, "application/json", http.StatusBadRequest},
		{`[1]`, "application/json", http.StatusBadRequest},
		{`{"context":[1]}`, "application/json", http.StatusBadRequest},
		{`{"toggles":"x"}`, "application/json", http.StatusBadRequest},
		{`{"toggles":[1]}`, "application/json", http.StatusBadRequest},
		{`{"context":{"properties":{"a":{"b":1}}}}`, "application/json", http.StatusBadRequest},
		{`{"context":{"properties":"x"}}`, "application/json", http.StatusBadRequest},
		{`<em>reject me!</em>`, "application/html", http.StatusUnsupportedMediaType},
		{`{}`, "application/vnd.api+json", http.StatusUnsupportedMediaType},
		{`{}`, "application/json; charset=UTF-8", http.StatusOK},
	} {
		resp, body := r.post(t, "/proxy", tc.body, "Content-Type", tc.ctype)
		assert.Equal(t, tc.status, resp.StatusCode, "%s %s: %s", tc.ctype, tc.body, body)
		if tc.status != http.StatusOK {
			var e struct{ ID, Name, Message string }
			require.NoError(t, json.Unmarshal([]byte(body), &e), body)
			assert.NotEmpty(t, e.ID)
			assert.NotEmpty(t, e.Message)
		}
	}
	// A body without Content-Type is taken as JSON.
	resp, _ := r.do(t, http.MethodPost, "/proxy", `{"context":{"appName":"my-app"}}`, "Authorization", clientKey, "Content-Type", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	// Over the 100 kB limit: 413 with a clear body, not the reference's 500.
	big := `{"context":{"userId":"` + strings.Repeat("x", 110*1024) + `"}}`
	resp, body := r.post(t, "/proxy", big)
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	assert.Contains(t, body, "larger than the limit")
	// Chunked (no Content-Length) is limited too.
	req, _ := http.NewRequest(http.MethodPost, r.srv.URL+"/proxy", strings.NewReader(big))
	req.ContentLength = -1
	req.Header.Set("Authorization", clientKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, res.StatusCode)
}

func TestAllEndpoint(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		resp, body := r.do(t, m, "/proxy/all", "", "Authorization", clientKey)
		assert.Equal(t, http.StatusNotImplemented, resp.StatusCode, m)
		assert.Contains(t, body, "ENABLE_ALL_ENDPOINT")
	}
	resp, _ := r.do(t, http.MethodGet, "/proxy/all", "")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "auth comes before the 501")

	cfg := testConfig(u)
	cfg.EnableAllEndpoint = true
	r = startReady(t, cfg)
	resp, body := r.get(t, "/proxy/all")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	ts := toggles(t, body)
	assert.Len(t, ts, 10)
	assert.False(t, byName(ts)["disabled-flag"].Enabled)
	assert.Contains(t, body, `{"name":"disabled-flag","enabled":false,"variant":{"name":"disabled","enabled":false,"feature_enabled":false,"featureEnabled":false},"impressionData":false}`)
	resp, body = r.post(t, "/proxy/all", `{"toggles":["disabled-flag"],"context":{}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, []string{"disabled-flag"}, names(toggles(t, body)))
	resp, body = r.post(t, "/proxy/all", `{"context":{"customProperty":"string","properties":{"otherCustomProperty":24}}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Len(t, toggles(t, body), 10)
}

func TestClientKeyAuth(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	for _, path := range []string{"/proxy", "/proxy/all", "/proxy/client/features"} {
		for _, key := range []string{"", "I do not know your secret", "Bearer " + clientKey} {
			resp, body := r.do(t, http.MethodGet, path, "", "Authorization", key)
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s %q", path, key)
			assert.Contains(t, body, "AuthenticationRequired")
		}
	}
	resp, _ := r.do(t, http.MethodGet, "/proxy", "", "Authorization", "other-key")
	assert.Equal(t, http.StatusOK, resp.StatusCode)

	cfg := testConfig(u)
	cfg.ClientKeysHeaderName = "NotAuthorized"
	r = startReady(t, cfg)
	resp, _ = r.do(t, http.MethodGet, "/proxy", "", "notauthorized", clientKey)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = r.do(t, http.MethodGet, "/proxy", "", "Authorization", clientKey)
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

func TestETagAnd304(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	resp, body := r.get(t, "/proxy?userId=u1")
	etag := resp.Header.Get("ETag")
	require.NotEmpty(t, etag)
	for _, inm := range []string{etag, strings.TrimPrefix(etag, "W/"), `"other", ` + etag, "*"} {
		resp, b := r.get(t, "/proxy?userId=u1", "If-None-Match", inm)
		assert.Equal(t, http.StatusNotModified, resp.StatusCode, inm)
		assert.Empty(t, b)
		assert.Equal(t, etag, resp.Header.Get("ETag"))
		assert.Equal(t, "public, max-age=2", resp.Header.Get("Cache-Control"))
	}
	resp, _ = r.get(t, "/proxy?userId=u1", "If-None-Match", etag, "Cache-Control", "no-cache")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = r.get(t, "/proxy?userId=u2", "If-None-Match", `W/"different"`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	// A different context with a different result has a different ETag.
	resp, _ = r.get(t, "/proxy?userId=nobody")
	assert.NotEqual(t, etag, resp.Header.Get("ETag"))
	// POST never answers 304.
	resp, _ = r.post(t, "/proxy", `{"context":{"userId":"u1"}}`, "If-None-Match", etag)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	// HEAD: same headers, no body.
	resp, b := r.do(t, http.MethodHead, "/proxy?userId=u1", "", "Authorization", clientKey)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, etag, resp.Header.Get("ETag"))
	assert.Equal(t, fmt.Sprint(len(body)), resp.Header.Get("Content-Length"))
	assert.Empty(t, b)
}

func TestCORS(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	resp, _ := r.get(t, "/proxy", "Origin", "https://test.com")
	assert.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
	assert.True(t, strings.EqualFold("ETag", resp.Header.Get("Access-Control-Expose-Headers")), resp.Header.Get("Access-Control-Expose-Headers"))
	// Without an Origin header too, as the spec's header list says.
	resp, _ = r.get(t, "/proxy")
	assert.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
	assert.True(t, strings.EqualFold("ETag", resp.Header.Get("Access-Control-Expose-Headers")))
	// 401s carry CORS headers too, so browsers can read them.
	resp, _ = r.do(t, http.MethodGet, "/proxy", "", "Origin", "https://test.com")
	assert.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))

	resp, body := r.do(t, http.MethodOptions, "/proxy", "",
		"Origin", "https://app.example", "Access-Control-Request-Method", "GET",
		"Access-Control-Request-Headers", "authorization,unleash-sdk,unleash-appname,unleash-connection-id,if-none-match,content-type")
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Empty(t, body)
	assert.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, resp.Header.Get("Access-Control-Allow-Methods"), "GET")
	allowed := strings.ToLower(resp.Header.Get("Access-Control-Allow-Headers"))
	for _, h := range []string{"authorization", "unleash-sdk", "unleash-appname", "unleash-connection-id", "if-none-match", "content-type"} {
		assert.Contains(t, allowed, h)
	}
	assert.Equal(t, "172800", resp.Header.Get("Access-Control-Max-Age"))
	// A plain OPTIONS is answered without auth.
	resp, _ = r.do(t, http.MethodOptions, "/proxy/anything", "")
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)

	cfg := testConfig(u)
	cfg.CORS.Origin = []string{"https://example.com", "https://demo.example.org"}
	cfg.CORS.Credentials = true
	cfg.CORS.MaxAge = 60
	cfg.CORS.OptionsSuccessStatus = 200
	cfg.CORS.AllowedHeaders = []string{"authorization"}
	r = startReady(t, cfg)
	resp, _ = r.get(t, "/proxy", "Origin", "https://demo.example.org")
	assert.Equal(t, "https://demo.example.org", resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "true", resp.Header.Get("Access-Control-Allow-Credentials"))
	resp, _ = r.get(t, "/proxy", "Origin", "https://evil.example")
	assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, http.StatusOK, resp.StatusCode, "a foreign origin is still served")
	resp, _ = r.do(t, http.MethodOptions, "/proxy", "", "Origin", "https://example.com", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "60", resp.Header.Get("Access-Control-Max-Age"))

	// preflightContinue passes the preflight on to the routes (which
	// answer OPTIONS with optionsSuccessStatus) after the CORS headers.
	cfg = testConfig(u)
	cfg.CORS.PreflightContinue = true
	cfg.CORS.OptionsSuccessStatus = 202
	r = startReady(t, cfg)
	resp, _ = r.do(t, http.MethodOptions, "/proxy", "", "Origin", "https://example.com", "Access-Control-Request-Method", "GET")
	assert.Equal(t, http.StatusAccepted, resp.StatusCode)
	assert.Equal(t, "*", resp.Header.Get("Access-Control-Allow-Origin"))
}

func TestRoutesAndBasePath(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	cfg := testConfig(u)
	cfg.ProxyBasePath = "/base/path"
	r := startReady(t, cfg)
	resp, _ := r.get(t, "/base/path/proxy")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = r.get(t, "/base/path/proxy/")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, _ = r.do(t, http.MethodGet, "/base/path/proxy/health", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	resp, body := r.get(t, "/proxy")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Contains(t, body, "NotFoundError")
	resp, _ = r.get(t, "/base/path/proxy/unknown")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = r.get(t, "/base/path/proxyx")
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	resp, _ = r.do(t, http.MethodPut, "/base/path/proxy", "{}", "Authorization", clientKey)
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	resp, _ = r.do(t, http.MethodHead, "/base/path/proxy/health", "")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

const sdkMetricsBody = `{"appName":"web","instanceId":"browser","bucket":{"start":"2026-11-22T01:00:00.000Z","stop":"2026-11-22T01:00:10.000Z",
 "toggles":{"enabled-simple":{"yes":3,"no":1,"variants":{"blue":2,"disabled":1}},"sdk-only":{"yes":0,"no":2,"variants":{}}}},"impactMetrics":[]}`

func TestClientMetricsAndRegisterEndpoints(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	for _, path := range []string{"/proxy/client/metrics", "/proxy/all/client/metrics"} {
		resp, body := r.post(t, path, sdkMetricsBody)
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
		assert.Equal(t, "OK", body)
		resp, _ = r.do(t, http.MethodPost, path, sdkMetricsBody, "Authorization", "server-token")
		assert.Equal(t, http.StatusOK, resp.StatusCode, "server-side SDK tokens may post metrics")
		resp, _ = r.do(t, http.MethodPost, path, sdkMetricsBody)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	}
	for _, bad := range []string{`{"some":"blob"}`, `{"appName":"x"}`, `{"appName":"x","bucket":{"start":"yesterday","stop":"2026-11-22T01:00:10Z","toggles":{}}}`,
		`{"appName":"x","bucket":{"start":"2026-11-22T01:00:00Z","stop":"2026-11-22T01:00:10Z","toggles":{"a":{"yes":-1,"no":0}}}}`, `not json`} {
		resp, body := r.post(t, "/proxy/client/metrics", bad)
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, bad)
		assert.Equal(t, "application/json; charset=utf-8", resp.Header.Get("Content-Type"))
		assert.Contains(t, body, "ValidationError")
	}
	resp, body := r.post(t, "/proxy/client/register", `{"appName":"test","instanceId":"i1","sdkVersion":"custom1","environment":"prod","interval":10000,"started":"2026-11-22T01:00:00Z","strategies":["default"]}`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "OK", body)
	resp, _ = r.post(t, "/proxy/client/register", `{"instanceId":"i1"}`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
}

func TestClientFeaturesForServerSideTokens(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	resp, body := r.do(t, http.MethodGet, "/proxy/client/features", "", "Authorization", "server-token")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "public, max-age=2", resp.Header.Get("Cache-Control"))
	var cf struct {
		Version  int `json:"version"`
		Features []struct {
			Name       string `json:"name"`
			Strategies []any  `json:"strategies"`
		} `json:"features"`
		Segments []struct {
			ID int `json:"id"`
		} `json:"segments"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &cf))
	assert.Equal(t, 2, cf.Version)
	assert.Len(t, cf.Features, 10)
	assert.Len(t, cf.Features[0].Strategies, 1)
	require.Len(t, cf.Segments, 1, "segments are included, unlike the reference")
	resp2, _ := r.do(t, http.MethodGet, "/proxy/client/features", "", "Authorization", "server-token", "If-None-Match", resp.Header.Get("ETag"))
	assert.Equal(t, http.StatusNotModified, resp2.StatusCode)
	resp, _ = r.get(t, "/proxy/client/features")
	assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "client keys cannot read the configuration")
}

func TestPrometheusMetrics(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	r.get(t, "/proxy")
	r.get(t, "/proxy")
	resp, body := r.do(t, http.MethodGet, "/proxy/internal-backstage/prometheus", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	for _, want := range []string{
		`bunting_proxy_http_requests_total{code="200",method="GET",route="frontend"} 2`,
		`bunting_proxy_http_request_duration_seconds_count{route="frontend"} 2`,
		"bunting_proxy_flags_loaded 10",
		"bunting_proxy_upstream_up 1",
		`bunting_proxy_upstream_syncs_total{result="changed"} 1`,
		"bunting_proxy_ready 1",
		"unleash_proxy_up 1",
		"last_metrics_fetch_epoch_timestamp_ms",
	} {
		assert.Contains(t, body, want)
	}
}

// TestETagFollowsTheBody checks that the ETag of an all-flags response
// (digested from the evaluation outcomes, not the bytes) changes exactly
// when the body does: across many contexts over a generated payload, for
// GET /proxy and /proxy/all, and when the payload changes in ways that keep
// every outcome the same (a payload value, impressionData, a name). Equal
// payloads give equal ETags in separate proxies.
func TestETagFollowsTheBody(t *testing.T) {
	payload, err := json.Marshal(enginetest.Generate(100, 7))
	require.NoError(t, err)
	cfg := func(u *fakeUpstream) proxy.Config {
		c := testConfig(u)
		c.EnableAllEndpoint = true
		return c
	}
	a := startReady(t, cfg(newFakeUpstream(t, string(payload))))
	b := startReady(t, cfg(newFakeUpstream(t, string(payload))))
	byETag := map[string]string{}
	for i, c := range enginetest.Contexts(40) {
		// Every stickiness field is set, so that nothing is random.
		for _, path := range []string{"/proxy", "/proxy/all"} {
			target := fmt.Sprintf("%s?userId=u%s&sessionId=s%s&properties[tenantId]=t%s&properties[country]=%s",
				path, url.QueryEscape(c.UserID), url.QueryEscape(c.SessionID), c.Properties["tenantId"], c.Properties["country"])
			resp, body := a.get(t, target)
			require.Equal(t, http.StatusOK, resp.StatusCode, body)
			etag := resp.Header.Get("ETag")
			if seen, ok := byETag[etag]; ok {
				assert.Equal(t, seen, body, "one ETag, two bodies (context %d)", i)
			}
			byETag[etag] = body
			other, otherBody := b.get(t, target)
			assert.Equal(t, etag, other.Header.Get("ETag"), "another proxy with the same payload")
			assert.Equal(t, body, otherBody)
		}
	}
	assert.Greater(t, len(byETag), 20, "contexts should give many different bodies")

	etagOf := func(p string) string {
		r := startReady(t, testConfig(newFakeUpstream(t, p)))
		resp, _ := r.get(t, "/proxy?userId=u1")
		return resp.Header.Get("ETag")
	}
	base := etagOf(fixture)
	for name, changed := range map[string]string{
		"payload value":  strings.Replace(fixture, `\"color\":\"blue\"`, `\"color\":\"teal\"`, 1),
		"impressionData": strings.Replace(fixture, `"name":"enabled-simple","enabled":true,"impressionData":true`, `"name":"enabled-simple","enabled":true,"impressionData":false`, 1),
		"flag name":      strings.Replace(fixture, `"name":"enabled-simple"`, `"name":"enabled-simplE"`, 1),
	} {
		require.NotEqual(t, fixture, changed, name)
		assert.NotEqual(t, base, etagOf(changed), name)
	}
}
