package proxy_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bunting-flags/bunting/internal/testutil"
)

// rawClient sends exactly the Accept-Encoding a test sets and hands back
// the bytes as they came (net/http's default client asks for gzip itself
// and decodes the answer).
var rawClient = &http.Client{Transport: &http.Transport{DisableCompression: true}}

// raw sends a request through rawClient and returns the response with its
// undecoded body.
func (r *running) raw(t *testing.T, method, path, body string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	return r.send(t, rawClient, method, path, body, headers...)
}

// gunzip decodes a gzip body, failing the test if it is not one.
func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	require.NoError(t, err)
	out, err := io.ReadAll(zr)
	require.NoError(t, err)
	return out
}

// manyFlags is an upstream payload of n flags whose answers do not depend
// on chance: default strategies, and variants sticky on userId. Its
// toggle answers are kilobytes.
func manyFlags(n int) string {
	var b strings.Builder
	b.WriteString(`{"version":2,"features":[`)
	for i := range n {
		if i > 0 {
			b.WriteString(",")
		}
		variants := `[]`
		if i%3 == 0 {
			variants = fmt.Sprintf(`[{"name":"blue","weight":500,"stickiness":"userId","payload":{"type":"string","value":"b%d"}},{"name":"red","weight":500,"stickiness":"userId"}]`, i)
		}
		fmt.Fprintf(&b, `{"name":"flag-%03d","enabled":%t,"impressionData":%t,"strategies":[{"name":"default","parameters":{},"constraints":[]}],"variants":%s}`,
			i, i%5 != 4, i%2 == 0, variants)
	}
	b.WriteString(`],"segments":[]}`)
	return b.String()
}

func TestCORSPreflightAsTheReference(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	// Default options: the configured methods whatever the request asks
	// for, and the request's headers mirrored, on every path.
	asked := "authorization,unleash-sdk,unleash-appname,unleash-connection-id,if-none-match,content-type,x-anything"
	for _, path := range []string{"/proxy", "/api/frontend", "/api/client/features", "/nowhere"} {
		resp, body := r.raw(t, http.MethodOptions, path, "", "Origin", "https://app.example",
			"Access-Control-Request-Method", "PUT", "Access-Control-Request-Headers", asked)
		assert.Equal(t, http.StatusNoContent, resp.StatusCode, path)
		assert.Empty(t, body)
		h := resp.Header
		assert.Equal(t, "*", h.Get("Access-Control-Allow-Origin"), path)
		assert.Equal(t, "GET, POST", h.Get("Access-Control-Allow-Methods"), path)
		assert.Equal(t, asked, h.Get("Access-Control-Allow-Headers"), path)
		assert.Contains(t, h.Values("Vary"), "Access-Control-Request-Headers", path)
		assert.Equal(t, "172800", h.Get("Access-Control-Max-Age"), path)
		assert.Equal(t, "ETag", h.Get("Access-Control-Expose-Headers"), path)
		assert.Empty(t, h.Get("Access-Control-Allow-Credentials"), path)
	}
	// Nothing asked, nothing mirrored.
	resp, _ := r.raw(t, http.MethodOptions, "/proxy", "", "Origin", "https://app.example", "Access-Control-Request-Method", "GET")
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Empty(t, resp.Header.Values("Access-Control-Allow-Headers"))

	// Configured lists are sent whole, whatever subset the request names.
	cfg := testConfig(u)
	cfg.CORS.Origin = []string{"https://example.com", "https://demo.example.org"}
	cfg.CORS.Methods = []string{"GET", "POST", "HEAD"}
	cfg.CORS.AllowedHeaders = []string{"authorization", "unleash-sdk", "x-custom-header"}
	cfg.CORS.ExposedHeaders = []string{"ETag", "X-Custom-Header"}
	cfg.CORS.Credentials = true
	cfg.CORS.MaxAge = 60
	r = startReady(t, cfg)
	resp, _ = r.raw(t, http.MethodOptions, "/api/frontend", "", "Origin", "https://demo.example.org",
		"Access-Control-Request-Method", "GET", "Access-Control-Request-Headers", "authorization")
	h := resp.Header
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Equal(t, "https://demo.example.org", h.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "true", h.Get("Access-Control-Allow-Credentials"))
	assert.Equal(t, "GET, POST, HEAD", h.Get("Access-Control-Allow-Methods"))
	assert.Equal(t, "authorization, unleash-sdk, x-custom-header", h.Get("Access-Control-Allow-Headers"))
	assert.Equal(t, "ETag, X-Custom-Header", h.Get("Access-Control-Expose-Headers"))
	assert.Equal(t, "60", h.Get("Access-Control-Max-Age"))
	assert.Contains(t, h.Values("Vary"), "Origin")
	assert.NotContains(t, h.Values("Vary"), "Access-Control-Request-Headers", "nothing is mirrored")
	// A foreign origin is not allowed, the rest is still answered.
	resp, _ = r.raw(t, http.MethodOptions, "/proxy", "", "Origin", "https://evil.example", "Access-Control-Request-Method", "GET")
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "GET, POST, HEAD", resp.Header.Get("Access-Control-Allow-Methods"))
}

// wireRoute is one compressible answer of the proxy.
type wireRoute struct {
	method, path, body, key string
}

func (w wireRoute) String() string { return w.method + " " + w.path }

func TestCompressionOnEveryRoute(t *testing.T) {
	u := newFakeUpstream(t, manyFlags(60))
	cfg := testConfig(u)
	cfg.EnableAllEndpoint = true
	r := startReady(t, cfg)
	var list []string
	for i := range 60 {
		list = append(list, fmt.Sprintf(`"flag-%03d"`, i))
	}
	toggleList := `{"toggles":[` + strings.Join(list, ",") + `],"context":{"userId":"u7","sessionId":"s7"}}`
	const query = "?userId=u7&sessionId=s7&properties%5Bregion%5D=eu"
	const context = `{"context":{"userId":"u7","sessionId":"s7","properties":{"region":"eu"}}}`
	routes := []wireRoute{
		{"GET", "/proxy" + query, "", clientKey},
		{"POST", "/proxy", context, clientKey},
		{"POST", "/proxy", toggleList, clientKey},
		{"GET", "/proxy/all" + query, "", clientKey},
		{"POST", "/proxy/all", context, clientKey},
		{"GET", "/proxy/client/features", "", "server-token"},
		{"GET", "/api/frontend" + query, "", clientKey},
		{"POST", "/api/frontend", context, clientKey},
		{"GET", "/api/frontend/all" + query, "", clientKey},
		{"POST", "/api/frontend/all", toggleList, clientKey},
		{"GET", "/api/client/features", "", "server-token"},
	}
	// Accept-Encoding values and whether each gets gzip.
	encodings := []struct {
		accept string
		gzip   bool
	}{
		{"", false},
		{"gzip", true},
		{"gzip, deflate, br, zstd", true}, // Chromium's
		{"br;q=1.0, gzip;q=0.8, *;q=0.1", true},
		{"GZIP", true},
		{"identity", false},
		{"br, zstd", false},
		{"deflate", false},
		{"gzip;q=0", false},
		{"gzip;q=bad", false},
		{"*", true},
		{"*;q=0", false},
		{"gzip;q=0, *", false},
		{"identity, *;q=0.5", true},
	}
	for _, rt := range routes {
		t.Run(rt.String(), func(t *testing.T) {
			plainResp, plain := r.raw(t, rt.method, rt.path, rt.body, "Authorization", rt.key)
			require.Equal(t, http.StatusOK, plainResp.StatusCode, string(plain))
			require.Greater(t, len(plain), 1024, "the answer must be large enough to compress")
			require.True(t, json.Valid(plain), string(plain))
			etag := plainResp.Header.Get("ETag")
			require.NotEmpty(t, etag)
			for _, enc := range encodings {
				resp, body := r.raw(t, rt.method, rt.path, rt.body, "Authorization", rt.key, "Accept-Encoding", enc.accept)
				require.Equal(t, http.StatusOK, resp.StatusCode, enc.accept)
				h := resp.Header
				assert.Contains(t, h.Values("Vary"), "Accept-Encoding", enc.accept)
				assert.Equal(t, etag, h.Get("ETag"), "the ETag is the uncompressed body's: %s", enc.accept)
				assert.Equal(t, fmt.Sprint(len(body)), h.Get("Content-Length"), enc.accept)
				assert.Equal(t, "application/json; charset=utf-8", h.Get("Content-Type"), enc.accept)
				assert.Equal(t, "public, max-age=2", h.Get("Cache-Control"), enc.accept)
				if !enc.gzip {
					assert.Empty(t, h.Get("Content-Encoding"), enc.accept)
					assert.Equal(t, string(plain), string(body), enc.accept)
					continue
				}
				assert.Equal(t, "gzip", h.Get("Content-Encoding"), enc.accept)
				assert.Less(t, len(body), len(plain)/2, enc.accept)
				assert.Equal(t, string(plain), string(gunzip(t, body)), "decoded once, the answer is the plain one: %s", enc.accept)
			}
		})
	}
}

func TestCompressionKeepsConditionalRequestsHEADAndErrors(t *testing.T) {
	u := newFakeUpstream(t, manyFlags(60))
	r := startReady(t, testConfig(u))
	const query = "/proxy?userId=u7&sessionId=s7"
	for _, path := range []string{query, "/api/frontend?userId=u7&sessionId=s7"} {
		resp, plain := r.raw(t, "GET", path, "", "Authorization", clientKey)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		etag := resp.Header.Get("ETag")
		// The ETag of a plain answer matches a compressed request and the
		// other way round: 304, no body, no Content-Encoding.
		resp, gz := r.raw(t, "GET", path, "", "Authorization", clientKey, "Accept-Encoding", "gzip")
		require.Equal(t, "gzip", resp.Header.Get("Content-Encoding"))
		require.Equal(t, etag, resp.Header.Get("ETag"))
		for _, accept := range []string{"gzip", ""} {
			resp, body := r.raw(t, "GET", path, "", "Authorization", clientKey, "Accept-Encoding", accept, "If-None-Match", etag)
			assert.Equal(t, http.StatusNotModified, resp.StatusCode, accept)
			assert.Empty(t, body)
			assert.Empty(t, resp.Header.Get("Content-Encoding"))
			assert.Equal(t, etag, resp.Header.Get("ETag"))
			assert.Contains(t, resp.Header.Values("Vary"), "Accept-Encoding")
		}
		// HEAD: the plain answer's headers, no body, never compressed.
		resp, body := r.raw(t, "HEAD", path, "", "Authorization", clientKey, "Accept-Encoding", "gzip")
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Empty(t, body)
		assert.Empty(t, resp.Header.Get("Content-Encoding"))
		assert.Equal(t, fmt.Sprint(len(plain)), resp.Header.Get("Content-Length"))
		assert.Equal(t, etag, resp.Header.Get("ETag"))
		assert.Contains(t, resp.Header.Values("Vary"), "Accept-Encoding")
		// A POST with the same ETag gets the full (compressed) answer.
		resp, body = r.raw(t, "POST", strings.Split(path, "?")[0], `{"context":{"userId":"u7","sessionId":"s7"}}`,
			"Authorization", clientKey, "Accept-Encoding", "gzip", "If-None-Match", etag)
		assert.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, string(gunzip(t, gz)), string(gunzip(t, body)))
	}
	// Below 1 kB an answer is sent as it is.
	resp, body := r.raw(t, "POST", "/proxy", `{"toggles":["flag-001"]}`, "Authorization", clientKey, "Accept-Encoding", "gzip")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, resp.Header.Get("Content-Encoding"))
	assert.True(t, json.Valid(body), string(body))
	// Errors keep their status and readable body.
	for _, path := range []string{query, "/api/client/features", "/proxy/nowhere"} {
		resp, body := r.raw(t, "GET", path, "", "Accept-Encoding", "gzip")
		assert.Contains(t, []int{http.StatusUnauthorized, http.StatusNotFound}, resp.StatusCode, path)
		assert.Empty(t, resp.Header.Get("Content-Encoding"), path)
		assert.Contains(t, string(body), `"message"`, path)
	}
	// The features answer is compressed once per configuration: the same
	// bytes every time.
	_, first := r.raw(t, "GET", "/proxy/client/features", "", "Authorization", "server-token", "Accept-Encoding", "gzip")
	_, second := r.raw(t, "GET", "/proxy/client/features", "", "Authorization", "server-token", "Accept-Encoding", "gzip")
	assert.Equal(t, first, second)
	resp, _ = r.raw(t, "GET", "/proxy/client/features", "", "Authorization", "server-token")
	_, plain := r.raw(t, "GET", "/proxy/client/features", "", "Authorization", "server-token")
	assert.Equal(t, string(plain), string(gunzip(t, first)))
	assert.Empty(t, resp.Header.Get("Content-Encoding"))
}

// edgeMetricsNo is the "no" count of edgeMetricsBody.
const edgeMetricsNo = 1_000_000

// edgeMetricsBody is an SDK's metrics post counting one flag.
func edgeMetricsBody(name string) string {
	return `{"appName":"web","instanceId":"browser","bucket":{"start":"2026-11-22T01:00:00.000Z","stop":"2026-11-22T01:00:10.000Z",
 "toggles":{"` + name + `":{"yes":1,"no":1000000,"variants":{}}}}}`
}

func TestEdgePathsAnswerAsTheProxy(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	cfg := testConfig(u)
	cfg.EnableAllEndpoint = true
	r := startReady(t, cfg)
	metricsPosted := 0
	// The front-end routes: the same answers, keys and errors as /proxy,
	// under Edge's /api/frontend and its older /api/proxy.
	for _, prefix := range []string{"/api/frontend", "/api/proxy"} {
		for _, c := range []struct{ method, sub, body string }{
			{"GET", "?userId=u1&sessionId=s1&properties%5Bregion%5D=eu", ""},
			{"GET", "/?userId=u1&sessionId=s1", ""},
			{"HEAD", "?userId=u1&sessionId=s1", ""},
			{"POST", "", `{"context":{"userId":"u1","sessionId":"s1"}}`},
			{"POST", "", `{"toggles":["enabled-simple","nope"],"context":{"userId":"u1"}}`},
			{"GET", "/all?userId=u1&sessionId=s1", ""},
			{"POST", "/all", `{"context":{"userId":"u2","sessionId":"s1"}}`},
			{"POST", "", `{not json`},
			{"GET", "?userId=1&userId=2", ""},
			{"PUT", "", ""},
		} {
			for _, key := range []string{clientKey, "other-key", "wrong-key", "", "server-token"} {
				want, wantBody := r.raw(t, c.method, "/proxy"+c.sub, c.body, "Authorization", key)
				got, gotBody := r.raw(t, c.method, prefix+c.sub, c.body, "Authorization", key)
				what := fmt.Sprintf("%s %s%s with key %q", c.method, prefix, c.sub, key)
				assert.Equal(t, want.StatusCode, got.StatusCode, what)
				assert.Equal(t, want.Header.Get("ETag"), got.Header.Get("ETag"), what)
				if want.StatusCode == http.StatusOK {
					assert.Equal(t, string(wantBody), string(gotBody), what)
				} else if c.method != "HEAD" {
					assert.Contains(t, string(gotBody), `"name"`, what) // an error body (its id differs)
				}
			}
		}
		// Usage is counted only for flags the proxy serves: each post adds
		// a million "no" counts to enabled-simple, far more than the
		// evaluations above, so the upstream total shows every post.
		for _, sub := range []string{"/client/metrics", "/all/client/metrics"} {
			resp, body := r.raw(t, "POST", prefix+sub, edgeMetricsBody("enabled-simple"), "Authorization", clientKey)
			assert.Equal(t, http.StatusOK, resp.StatusCode, prefix+sub)
			assert.Equal(t, "OK", string(body))
			resp, _ = r.raw(t, "POST", prefix+sub, edgeMetricsBody("enabled-simple"), "Authorization", "wrong-key")
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, prefix+sub)
			metricsPosted++
			testutil.Eventually(t, 5*time.Second, "the counts posted to "+prefix+sub+" upstream", func() bool {
				var no float64
				for _, m := range u.metricsPosts() {
					if c, ok := m["bucket"].(map[string]any)["toggles"].(map[string]any)["enabled-simple"].(map[string]any); ok {
						no += c["no"].(float64)
					}
				}
				return no >= float64(metricsPosted)*edgeMetricsNo
			})
		}
		for _, sub := range []string{"/client/register", "/all/client/register"} {
			resp, _ := r.raw(t, "POST", prefix+sub, `{"appName":"web","instanceId":"i1","interval":1000,"started":"2026-11-22T01:00:00Z","strategies":[]}`, "Authorization", clientKey)
			assert.Equal(t, http.StatusOK, resp.StatusCode, prefix+sub)
		}
		// The proxy's own routes stay under /proxy.
		for _, sub := range []string{"/health", "/client/features", "/internal-backstage/prometheus", "/unknown"} {
			resp, _ := r.raw(t, "GET", prefix+sub, "", "Authorization", "server-token")
			assert.Equal(t, http.StatusNotFound, resp.StatusCode, prefix+sub)
		}
	}
	// Server-side SDKs pointed at Edge's /api find the configuration, and
	// their registration and metrics, with the server-side tokens.
	want, wantBody := r.raw(t, "GET", "/proxy/client/features", "", "Authorization", "server-token")
	require.Equal(t, http.StatusOK, want.StatusCode)
	for _, path := range []string{"/api/client/features", "/api/client/features/"} {
		got, gotBody := r.raw(t, "GET", path, "", "Authorization", "server-token")
		assert.Equal(t, http.StatusOK, got.StatusCode, path)
		assert.Equal(t, string(wantBody), string(gotBody), path)
		assert.Equal(t, want.Header.Get("ETag"), got.Header.Get("ETag"), path)
		for _, key := range []string{clientKey, "", "wrong"} {
			resp, _ := r.raw(t, "GET", path, "", "Authorization", key)
			assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, "%s with key %q", path, key)
		}
	}
	resp, body := r.raw(t, "POST", "/api/client/metrics", edgeMetricsBody("edge-server-sdk"), "Authorization", "server-token")
	assert.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	resp, _ = r.raw(t, "POST", "/api/client/register", `{"appName":"svc","instanceId":"i1","interval":1000,"started":"2026-11-22T01:00:00Z","strategies":[]}`, "Authorization", "server-token")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	for _, path := range []string{"/api/client", "/api/client/unknown", "/api/clients/features", "/api/frontendx"} {
		resp, _ := r.raw(t, "GET", path, "", "Authorization", "server-token")
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}

	// /all stays behind enableAllEndpoint; the base path nests every route.
	cfg = testConfig(u)
	cfg.ProxyBasePath = "/base"
	r = startReady(t, cfg)
	resp, _ = r.raw(t, "GET", "/base/api/frontend/all", "", "Authorization", clientKey)
	assert.Equal(t, http.StatusNotImplemented, resp.StatusCode)
	for _, path := range []string{"/base/api/frontend", "/base/api/proxy"} {
		resp, _ = r.raw(t, "GET", path, "", "Authorization", clientKey)
		assert.Equal(t, http.StatusOK, resp.StatusCode, path)
	}
	resp, _ = r.raw(t, "GET", "/base/api/client/features", "", "Authorization", "server-token")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	for _, path := range []string{"/api/frontend", "/api/client/features"} {
		resp, _ = r.raw(t, "GET", path, "", "Authorization", clientKey)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, path)
	}
}
