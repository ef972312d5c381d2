package proxy

import (
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/engine"
)

// TestRouteTablePaths pins which route each path reaches, trailing slashes
// and the base path included, as the proxy resolved them before the table.
func TestRouteTablePaths(t *testing.T) {
	cases := map[string]string{
		"/proxy": routeFrontend, "/proxy/": routeFrontend, "/proxy//": routeFrontend,
		"/api/frontend": routeFrontend, "/api/frontend/": routeFrontend, "/api/proxy": routeFrontend,
		"/proxy/all": routeAllEndpoint, "/proxy/all/": routeAllEndpoint, "/api/frontend/all": routeAllEndpoint, "/proxy/all//": routeUnknown,
		"/proxy/client/metrics": routeMetrics, "/proxy/all/client/metrics/": routeMetrics,
		"/api/frontend/client/metrics": routeMetrics, "/api/proxy/all/client/metrics": routeMetrics,
		"/api/client/metrics": routeMetrics, "/api/client/register/": routeRegister,
		"/proxy/client/register": routeRegister,
		"/proxy/health":          routeHealth, "/api/frontend/health": routeUnknown,
		"/proxy/client/features": routeFeatures, "/api/client/features": routeFeatures,
		"/api/frontend/client/features":        routeUnknown,
		"/proxy/internal-backstage/prometheus": routePrometheus, "/api/proxy/internal-backstage/prometheus": routeUnknown,
		"/proxyx": routeUnknown, "/": routeUnknown, "/api/client": routeUnknown, "/api/client/features//": routeUnknown,
	}
	for _, base := range []string{"", "/base/path"} {
		// A prefix route (one more line in the table) takes the paths under it.
		ix := newRouteIndex(base, append(slices.Clone(routeTable), route{name: "param", paths: []string{"/proxy/param/"}, prefix: true}))
		for path, want := range map[string]string{"/proxy/param/a": "param", "/proxy/param/a/b": "param", "/proxy/param": routeUnknown} {
			if got := ix.lookup(base + path).name; got != want {
				t.Errorf("base %q: %s reaches %s, want %s", base, path, got, want)
			}
		}
		for path, want := range cases {
			if got := ix.lookup(base + path).name; got != want {
				t.Errorf("base %q: %s reaches %s, want %s", base, path, got, want)
			}
		}
		if base != "" {
			if got := ix.lookup("/proxy").name; got != routeUnknown {
				t.Errorf("base %q: /proxy outside the base path reaches %s", base, got)
			}
		}
	}
}

// TestRouteTableChecks runs the table's checks on a route of each kind:
// the 405 lists the route's methods, and each key kind lets in only its
// credentials.
func TestRouteTableChecks(t *testing.T) {
	cfg := DefaultConfig()
	cfg.UpstreamURL, cfg.UpstreamAPIToken = "http://127.0.0.1:1/api", "t"
	cfg.ClientKeys, cfg.ExpServerSideSDKTokens = []string{"client"}, []string{"sdk"}
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.install(p.compile(&engine.ClientFeatures{Version: 2}), "test")
	for _, c := range []struct {
		method, path, key string
		status            int
		allow             string
	}{
		{"PUT", "/proxy", "client", 405, "GET, HEAD, POST"},
		{"GET", "/proxy/client/metrics", "client", 405, "POST"},
		{"DELETE", "/proxy/health", "", 405, "GET, HEAD"},
		{"GET", "/proxy", "", 401, ""},
		{"GET", "/proxy", "sdk", 401, ""},
		{"GET", "/proxy", "client", 200, ""},
		{"GET", "/proxy/client/features", "client", 401, ""},
		{"GET", "/proxy/client/features", "sdk", 200, ""},
		{"POST", "/proxy/client/register", "sdk", 200, ""},
		{"POST", "/proxy/client/register", "client", 200, ""},
		{"POST", "/proxy/client/register", "other", 401, ""},
		{"PUT", "/nowhere", "", 404, ""},
	} {
		body := httptest.NewRecorder()
		req := httptest.NewRequest(c.method, c.path, strings.NewReader(`{"appName":"a"}`))
		if c.key != "" {
			req.Header.Set("Authorization", c.key)
		}
		p.ServeHTTP(body, req)
		if body.Code != c.status || body.Header().Get("Allow") != c.allow {
			t.Errorf("%s %s with %q: %d Allow %q, want %d Allow %q (%s)", c.method, c.path, c.key, body.Code, body.Header().Get("Allow"), c.status, c.allow, body.Body)
		}
	}
}
