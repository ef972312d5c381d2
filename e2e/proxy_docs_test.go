package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/proxy"
)

// fakeUpstream serves a small client-features payload so the proxy becomes
// ready.
func fakeUpstream(t *testing.T) *httptest.Server {
	t.Helper()
	payload, err := json.Marshal(engine.ClientFeatures{Version: 2, Features: []engine.Feature{
		{Name: "docs-demo", Enabled: true, Strategies: []engine.Strategy{{Name: "default"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/client/features", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(payload)
	})
	mux.HandleFunc("POST /api/client/", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// startProxy runs the real proxy with enableOAS on loopback and waits
// until it has synced.
func startProxy(t *testing.T, upstreamURL string) string {
	t.Helper()
	p := syncedProxy(t, map[string]string{
		"UPSTREAM_URL":               upstreamURL + "/api",
		"UPSTREAM_API_TOKEN":         "e2e-token",
		"UPSTREAM_PROXY_CLIENT_KEYS": "e2e-key",
		"ENABLE_OAS":                 "true",
	})
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv.URL
}

// syncedProxy builds the real proxy from environment variables, runs its
// sync loop until the test ends and waits for its first configuration.
func syncedProxy(t *testing.T, env map[string]string) *proxy.Proxy {
	t.Helper()
	cfg, err := proxy.LoadConfig(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, nil)
	if err != nil {
		t.Fatalf("proxy config: %v", err)
	}
	p, err := proxy.New(cfg, proxy.WithStorageProvider(proxy.FileStorage{Dir: t.TempDir()}))
	if err != nil {
		t.Fatalf("proxy.New: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = p.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	select {
	case <-p.ReadyChan():
	case <-time.After(20 * time.Second):
		t.Fatal("the proxy did not sync with the fake upstream")
	}
	return p
}

// TestProxyDocsPageWorksOffline proves the proxy's interactive API page is
// served entirely by the proxy: Swagger UI renders every operation with no
// request leaving for a CDN.
func TestProxyDocsPageWorksOffline(t *testing.T) {
	upstream := fakeUpstream(t)
	base := startProxy(t, upstream.URL)
	checkDocsPageOffline(t, base, "/docs/openapi", "/docs/openapi.json")
}
