package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/testutil"
	"github.com/bunting-flags/bunting/proxy"
)

// browserSDK finds the browser build of the real browser SDK
// (unleash-proxy-client) in the npm fixtures ($BUNTING_NODE_MODULES, or
// test/node/node_modules). Without it the test skips, or fails when
// BUNTING_REQUIRE_FIXTURES=1.
func browserSDK(t *testing.T) []byte {
	t.Helper()
	js, err := os.ReadFile(filepath.Join(testutil.NodeModules(t, "unleash-proxy-client"), "unleash-proxy-client", "build", "main.min.js"))
	if err != nil {
		t.Fatalf("the browser SDK is installed without its browser build: %v", err)
	}
	return js
}

// sdkUpstream serves 40 flags (answers of several kilobytes, so they are
// compressed) and records the metrics the proxy posts.
type sdkUpstream struct {
	*httptest.Server
	mu      sync.Mutex
	metrics []map[string]any
}

func newSDKUpstream(t *testing.T) *sdkUpstream {
	t.Helper()
	cf := engine.ClientFeatures{Version: 2}
	for i := range 40 {
		f := engine.Feature{Name: fmt.Sprintf("flag-%02d", i), Enabled: i%4 != 3, Strategies: []engine.Strategy{{Name: "default"}}}
		if i == 9 {
			f.Strategies[0].Constraints = []engine.Constraint{{ContextName: "userId", Operator: "IN", Values: []string{"u7"}}}
			f.Variants = []engine.Variant{{Name: "blue", Weight: 1000, Stickiness: "default",
				Payload: &engine.VariantPayload{Type: "string", Value: "from-the-proxy"}}}
		}
		cf.Features = append(cf.Features, f)
	}
	payload, err := json.Marshal(cf)
	if err != nil {
		t.Fatal(err)
	}
	u := &sdkUpstream{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/client/features", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(payload)
	})
	mux.HandleFunc("POST /api/client/metrics", func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		_ = json.NewDecoder(r.Body).Decode(&m)
		u.mu.Lock()
		u.metrics = append(u.metrics, m)
		u.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	})
	mux.HandleFunc("POST /api/client/register", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusAccepted) })
	u.Server = httptest.NewServer(mux)
	t.Cleanup(u.Close)
	return u
}

// countedNo sums the "no" counts of name over the metrics posts received.
func (u *sdkUpstream) countedNo(name string) float64 {
	u.mu.Lock()
	defer u.mu.Unlock()
	var total float64
	for _, m := range u.metrics {
		bucket, _ := m["bucket"].(map[string]any)
		toggles, _ := bucket["toggles"].(map[string]any)
		if t, ok := toggles[name].(map[string]any); ok {
			n, _ := t["no"].(float64)
			total += n
		}
	}
	return total
}

// exchange is one request the proxy answered, as the browser sent it.
type exchange struct {
	method, path, acceptEncoding, contentEncoding string
	status                                        int
}

// exchangeLog records what the proxy answered.
type exchangeLog struct {
	mu   sync.Mutex
	seen []exchange
}

func (l *exchangeLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(sw, r)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.seen = append(l.seen, exchange{r.Method, r.URL.Path, r.Header.Get("Accept-Encoding"), w.Header().Get("Content-Encoding"), sw.status})
	})
}

func (l *exchangeLog) all() []exchange {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.seen)
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }

// Unwrap lets the proxy reach the connection it coalesces writes on.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// sdkPage is the page the browser loads from its own origin: the SDK
// points at the proxy's Edge path and reports what it sees in window.result.
const sdkPage = `<!doctype html><html><head><script src="/sdk.js"></script></head><body><script>
const client = new unleash.UnleashClient({url: %q, clientKey: 'e2e-key', appName: 'chromium-e2e',
  refreshInterval: 1, metricsInterval: 1, metricsIntervalInitial: 1});
client.updateContext({userId: 'u7'});
window.result = null;
window.errors = [];
client.on('error', (e) => window.errors.push(JSON.stringify(e)));
client.on('ready', () => {
  const v = client.getVariant('flag-09');
  window.result = {flag00: client.isEnabled('flag-00'), flag03: client.isEnabled('flag-03'), flag09: client.isEnabled('flag-09'),
    variant: v.name, payload: v.payload ? v.payload.value : null, count: client.getAllToggles().length,
    browserOnly: client.isEnabled('browser-only-name')};
  // Usage only the SDK's own metrics post can report: flag-03 is off for
  // this context, so the proxy's answers count it once per request.
  for (let i = 0; i < 500; i++) client.isEnabled('flag-03');
});
client.start();
</script></body></html>`

// TestBrowserSDKInChromiumAgainstEdgePath loads the real browser SDK in
// headless Chromium from another origin and points it at the proxy's
// /api/frontend, as a team moving from Unleash Edge would: the browser
// preflights, asks for compressed answers and gets gzip, the SDK reads
// flags and variants from them, and its metrics reach upstream.
func TestBrowserSDKInChromiumAgainstEdgePath(t *testing.T) {
	sdk := browserSDK(t)
	upstream := newSDKUpstream(t)
	p := syncedProxy(t, map[string]string{
		"UPSTREAM_URL":               upstream.URL + "/api",
		"UPSTREAM_API_TOKEN":         "e2e-token",
		"UPSTREAM_PROXY_CLIENT_KEYS": "e2e-key",
		"UPSTREAM_METRICS_INTERVAL":  "300",
	})
	log := &exchangeLog{}
	proxySrv := httptest.NewUnstartedServer(log.wrap(p))
	proxySrv.Listener = proxy.CoalesceWrites(proxySrv.Config, proxySrv.Listener)
	proxySrv.Start()
	t.Cleanup(proxySrv.Close)

	page := fmt.Sprintf(sdkPage, proxySrv.URL+"/api/frontend")
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/sdk.js":
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write(sdk)
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(page))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)

	bctx := newBrowser(t)
	seen := visit(t, bctx, site.URL+"/", `window.result ? 1 : 0`)
	if len(seen.exceptions) > 0 {
		t.Errorf("the page threw: %v", seen.exceptions)
	}
	var result struct {
		Flag00, Flag03, Flag09, BrowserOnly bool
		Variant, Payload                    string
		Count                               int
	}
	raw, err := chromedp.Run(bctx, chromedp.Evaluate[string](`JSON.stringify(window.result)`))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(raw), &result); err != nil {
		t.Fatalf("window.result %s: %v", raw, err)
	}
	if !result.Flag00 || result.Flag03 || !result.Flag09 || result.BrowserOnly || result.Variant != "blue" || result.Payload != "from-the-proxy" || result.Count != 30 {
		t.Errorf("the SDK read %+v; want flag-00 and flag-09 on, flag-03 off, variant blue with its payload, 30 enabled toggles", result)
	}
	// Its metrics, posted to /api/frontend/client/metrics, reach upstream
	// (for flags the proxy serves: it drops usage of unknown names, such as
	// browser-only-name); the page checked flag-03 500 times.
	deadline := time.Now().Add(20 * time.Second)
	for upstream.countedNo("flag-03") < 500 {
		if time.Now().After(deadline) {
			errs, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`JSON.stringify(window.errors)`))
			t.Fatalf("the SDK's metrics never reached upstream; SDK errors %s; exchanges %+v", errs, log.all())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Cross-origin with an Authorization header, every call was
	// preflighted; the toggles came gzipped.
	var preflights, gzipped, metricsPosts int
	for _, x := range log.all() {
		switch {
		case x.method == http.MethodOptions && strings.HasPrefix(x.path, "/api/frontend") && x.status == http.StatusNoContent:
			preflights++
		case x.method == http.MethodGet && x.path == "/api/frontend" && x.status == http.StatusOK:
			if !strings.Contains(x.acceptEncoding, "gzip") || x.contentEncoding != "gzip" {
				t.Errorf("GET /api/frontend: Accept-Encoding %q, answered with Content-Encoding %q", x.acceptEncoding, x.contentEncoding)
			}
			gzipped++
		case x.method == http.MethodPost && x.path == "/api/frontend/client/metrics" && x.status == http.StatusOK:
			metricsPosts++
		}
	}
	if preflights == 0 || gzipped == 0 || metricsPosts == 0 {
		t.Errorf("%d preflights, %d gzipped toggle answers, %d metrics posts; exchanges %+v", preflights, gzipped, metricsPosts, log.all())
	}
}
