package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/testutil"
	"github.com/bunting-flags/bunting/proxy"
)

// openFeatureModules is the npm fixtures' @openfeature directory, with the
// web SDK and the OFREP web provider.
func openFeatureModules(t *testing.T) string {
	t.Helper()
	return filepath.Join(testutil.NodeModules(t, "@openfeature/ofrep-web-provider"), "@openfeature")
}

// ofrepUpstream serves the flags the page reads; setString changes the
// string flag's payload.
type ofrepUpstream struct {
	*httptest.Server
	mu      sync.Mutex
	payload []byte
}

func (u *ofrepUpstream) setString(t *testing.T, value string) {
	t.Helper()
	flag := func(name string, on bool, constraint *engine.Constraint, v *engine.Variant) engine.Feature {
		f := engine.Feature{Name: name, Enabled: on, Strategies: []engine.Strategy{{Name: "default"}}}
		if constraint != nil {
			f.Strategies[0].Constraints = []engine.Constraint{*constraint}
		}
		if v != nil {
			f.Variants = []engine.Variant{*v}
		}
		return f
	}
	variant := func(name, typ, value string) *engine.Variant {
		return &engine.Variant{Name: name, Weight: 1000, Stickiness: "default", Payload: &engine.VariantPayload{Type: typ, Value: value}}
	}
	cf := engine.ClientFeatures{Version: 2, Features: []engine.Feature{
		flag("web-bool", true, nil, nil),
		flag("web-u7-only", true, &engine.Constraint{ContextName: "userId", Operator: "IN", Values: []string{"u7"}}, nil),
		flag("web-string", true, nil, variant("blue", "string", value)),
		flag("web-number", true, nil, variant("n", "number", "7.5")),
		flag("web-object", true, nil, variant("o", "json", `{"items":[1,2],"title":"t"}`)),
		flag("web-off", false, nil, variant("x", "string", "never")),
	}}
	body, err := json.Marshal(cf)
	if err != nil {
		t.Fatal(err)
	}
	u.mu.Lock()
	u.payload = body
	u.mu.Unlock()
}

// ofrepPage loads OpenFeature's web SDK and the OFREP web provider as ES
// modules (an import map names the npm files) from the page's own origin,
// points the provider at the proxy on another origin and records what the
// application sees in window.steps; a second provider, polling, records
// the statuses it gets.
const ofrepPage = `<!doctype html><html><head><script type="importmap">{"imports":{
 "@openfeature/core": "/of/core/dist/esm/index.js",
 "@openfeature/web-sdk": "/of/web-sdk/dist/esm/index.js",
 "@openfeature/ofrep-core": "/of/ofrep-web-provider/node_modules/@openfeature/ofrep-core/index.esm.js",
 "@openfeature/ofrep-web-provider": "/of/ofrep-web-provider/index.esm.js"}}</script></head><body><script type="module">
import { OpenFeature, ProviderEvents } from '@openfeature/web-sdk';
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider';
const baseUrl = %q;
window.steps = {};
window.errors = [];
window.pollStatuses = [];
const read = (c) => ({
  bool: c.getBooleanValue('web-bool', false), u7: c.getBooleanDetails('web-u7-only', false),
  str: c.getStringDetails('web-string', 'none'), num: c.getNumberValue('web-number', 0),
  obj: c.getObjectValue('web-object', {}), off: c.getStringDetails('web-off', 'fallback'),
  missing: c.getStringDetails('web-missing', 'fallback'), mismatch: c.getBooleanDetails('web-string', true),
});
try {
  await OpenFeature.setContext({ targetingKey: 'u7', plan: 'pro' });
  await OpenFeature.setProviderAndWait(new OFREPWebProvider({ baseUrl, headers: [['Authorization', 'Bearer e2e-key']] }));
  const client = OpenFeature.getClient();
  window.steps.first = read(client);
  client.addHandler(ProviderEvents.ConfigurationChanged, () => {
    window.steps.changed = { at: Date.now(), str: client.getStringValue('web-string', 'none') };
  });
  await OpenFeature.setContext({ targetingKey: 'u8', plan: 'pro' });
  window.steps.second = read(client);
  // Another application on the page polls the same flags.
  const fetchImplementation = async (req) => { const res = await fetch(req); window.pollStatuses.push(res.status); return res; };
  await OpenFeature.setProviderAndWait('poller', new OFREPWebProvider({ baseUrl, headers: [['X-API-Key', 'e2e-key']],
    changeDetection: 'polling', pollInterval: 150, fetchImplementation }));
  window.steps.ready = true;
} catch (e) {
  window.errors.push(String(e && e.stack || e));
}
</script></body></html>`

// TestOpenFeatureWebProviderInChromium runs @openfeature/ofrep-web-provider
// 0.4.3 with @openfeature/web-sdk in headless Chromium against the proxy's
// OFREP endpoints: boolean, string, number and object flags, an off flag
// and an unknown one giving the caller's default, a type mismatch, a
// context change, 304s to an unchanged poll, and a configuration change
// pushed through the event stream reaching the page (the default provider
// does not poll, so only the stream can bring it; the latency is logged,
// and measured by make bench-stream).
func TestOpenFeatureWebProviderInChromium(t *testing.T) {
	modules := openFeatureModules(t)
	upstream := &ofrepUpstream{}
	upstream.setString(t, "first")
	upstream.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/client/features":
			upstream.mu.Lock()
			body := upstream.payload
			upstream.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	}))
	t.Cleanup(upstream.Close)
	p := syncedProxy(t, map[string]string{
		"UPSTREAM_URL":               upstream.URL + "/api",
		"UPSTREAM_API_TOKEN":         "e2e-token",
		"UPSTREAM_PROXY_CLIENT_KEYS": "e2e-key",
		"FETCH_INTERVAL":             "50",
	})
	log := &exchangeLog{}
	// Event streams stay open past the test's checks: counted as they open.
	var streamsMu sync.Mutex
	streams := 0
	counted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == "/ofrep/v1/events" {
			streamsMu.Lock()
			streams++
			streamsMu.Unlock()
		}
		log.wrap(p).ServeHTTP(w, r)
	})
	proxySrv := httptest.NewUnstartedServer(counted)
	proxySrv.Listener = proxy.CoalesceWrites(proxySrv.Config, proxySrv.Listener)
	proxySrv.Start()
	t.Cleanup(proxySrv.Close)

	page := fmt.Sprintf(ofrepPage, proxySrv.URL)
	files := http.StripPrefix("/of/", http.FileServer(http.Dir(modules)))
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write([]byte(page))
		case strings.HasPrefix(r.URL.Path, "/of/") && strings.HasSuffix(r.URL.Path, ".js"):
			w.Header().Set("Content-Type", "text/javascript")
			files.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)

	bctx := newBrowser(t)
	seen := visit(t, bctx, site.URL+"/", `window.steps && (window.steps.ready || window.errors.length) ? 1 : 0`)
	if len(seen.exceptions) > 0 {
		t.Errorf("the page threw: %v", seen.exceptions)
	}
	eval := func(expr string, into any) {
		t.Helper()
		raw, err := chromedp.Run(bctx, chromedp.Evaluate[string](`JSON.stringify(`+expr+`)`))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(raw), into); err != nil {
			t.Fatalf("%s = %s: %v", expr, raw, err)
		}
	}
	var errs []string
	eval(`window.errors`, &errs)
	if len(errs) > 0 {
		t.Fatalf("the page failed: %v", errs)
	}
	type details struct {
		Value     any
		Variant   string
		Reason    string
		ErrorCode string
	}
	var steps struct {
		First, Second struct {
			Bool                            bool
			Num                             float64
			Obj                             map[string]any
			U7, Str, Off, Missing, Mismatch details
		}
	}
	eval(`window.steps`, &steps)
	f := steps.First
	if !f.Bool || f.Num != 7.5 || f.Obj["title"] != "t" || len(f.Obj["items"].([]any)) != 2 {
		t.Errorf("bool, number, object: %+v", f)
	}
	if f.U7.Value != true || f.U7.Reason != "TARGETING_MATCH" {
		t.Errorf("web-u7-only for u7: %+v", f.U7)
	}
	if f.Str.Value != "first" || f.Str.Variant != "blue" || f.Str.Reason != "SPLIT" {
		t.Errorf("web-string: %+v", f.Str)
	}
	if f.Off.Value != "fallback" || f.Missing.Value != "fallback" || f.Missing.ErrorCode != "FLAG_NOT_FOUND" {
		t.Errorf("off %+v, missing %+v: want the caller's default", f.Off, f.Missing)
	}
	if f.Mismatch.Value != true || f.Mismatch.ErrorCode != "TYPE_MISMATCH" {
		t.Errorf("a string flag as a boolean: %+v", f.Mismatch)
	}
	if steps.Second.U7.Value != false {
		t.Errorf("after the context change to u8, web-u7-only is %+v", steps.Second.U7)
	}

	// The polling provider's unchanged polls are answered 304.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var statuses []int
		eval(`window.pollStatuses`, &statuses)
		n304 := 0
		for _, s := range statuses {
			if s == http.StatusNotModified {
				n304++
			}
		}
		if n304 >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no 304 to an unchanged poll: statuses %v", statuses)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A change upstream: from the moment the proxy serves it, the event
	// stream makes the page refetch; the application sees the new value.
	upstream.setString(t, "second")
	var served time.Time
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		res := p.Snapshot().Evaluate("web-string", &engine.Context{})
		if res.Variant != nil && res.Variant.Payload != nil && res.Variant.Payload.Value == "second" {
			served = time.Now()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the proxy never served the change")
		}
	}
	var changed struct {
		At  int64
		Str string
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		eval(`window.steps.changed || {}`, &changed)
		if changed.Str == "second" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page never saw the change; exchanges %+v", log.all())
		}
	}
	latency := time.UnixMilli(changed.At).Sub(served)
	t.Logf("the change reached the page %v after the proxy served it", latency)
	streamsMu.Lock()
	defer streamsMu.Unlock()
	if streams == 0 {
		t.Errorf("the page never opened the event stream; exchanges %+v", log.all())
	}
}
