package proxy_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bunting-flags/bunting/proxy"
)

// upstreamMode switches the fake upstream's answer to feature fetches.
type upstreamMode int

const (
	modeOK upstreamMode = iota
	modeFail
	modeUnauthorized
	modeGarbage
	modeSlow
)

// fakeUpstream is an in-process upstream flag server: it serves a client
// features payload with an ETag and records everything the proxy sends.
type fakeUpstream struct {
	t   *testing.T
	srv *httptest.Server

	mu           sync.Mutex
	payload      []byte
	etag         string
	mode         upstreamMode
	metricsFail  int // answer this many metrics posts with 503
	registerFail int // answer this many registrations with 503
	fetches      []*http.Request
	registers    []map[string]any
	metrics      []map[string]any
	metricsHdr   []http.Header

	// metricsFailStatus, when set, replaces 503 as the status of the
	// metricsFail failed posts.
	metricsFailStatus int
}

func newFakeUpstream(t *testing.T, payload string) *fakeUpstream {
	u := &fakeUpstream{t: t}
	u.setPayload(payload)
	u.srv = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(u.srv.Close)
	return u
}

// URL is the upstream URL the proxy is configured with (includes /api).
func (u *fakeUpstream) URL() string { return u.srv.URL + "/api" }

func (u *fakeUpstream) setPayload(p string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.payload = []byte(p)
	u.etag = `"v` + time.Now().Format("150405.000000000") + `"`
}

func (u *fakeUpstream) setMode(m upstreamMode) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.mode = m
}

func (u *fakeUpstream) fetchCount() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.fetches)
}

func (u *fakeUpstream) lastFetch() *http.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.fetches) == 0 {
		return nil
	}
	return u.fetches[len(u.fetches)-1]
}

func (u *fakeUpstream) metricsPosts() []map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]map[string]any(nil), u.metrics...)
}

func (u *fakeUpstream) registrations() []map[string]any {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]map[string]any(nil), u.registers...)
}

func (u *fakeUpstream) serve(w http.ResponseWriter, r *http.Request) {
	u.mu.Lock()
	mode, payload, etag := u.mode, u.payload, u.etag
	u.mu.Unlock()
	switch r.URL.Path {
	case "/api/client/features":
		u.mu.Lock()
		u.fetches = append(u.fetches, r.Clone(context.Background()))
		u.mu.Unlock()
		switch mode {
		case modeFail:
			http.Error(w, "boom", http.StatusInternalServerError)
		case modeUnauthorized:
			http.Error(w, "no", http.StatusUnauthorized)
		case modeGarbage:
			_, _ = w.Write([]byte(`{"features": "not a list"`))
		case modeSlow:
			select {
			case <-r.Context().Done():
			case <-time.After(3 * time.Second):
			}
		default:
			if r.Header.Get("If-None-Match") == etag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("ETag", etag)
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(payload)
		}
	case "/api/client/register":
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		u.mu.Lock()
		defer u.mu.Unlock()
		if u.registerFail > 0 {
			u.registerFail--
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		u.registers = append(u.registers, body)
		w.WriteHeader(http.StatusAccepted)
	case "/api/client/metrics":
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		u.mu.Lock()
		defer u.mu.Unlock()
		if u.metricsFail > 0 {
			u.metricsFail--
			status := http.StatusServiceUnavailable
			if u.metricsFailStatus != 0 {
				status = u.metricsFailStatus
			}
			http.Error(w, "down", status)
			return
		}
		u.metrics = append(u.metrics, body)
		u.metricsHdr = append(u.metricsHdr, r.Header.Clone())
		w.WriteHeader(http.StatusAccepted)
	case "/bootstrap":
		if r.Header.Get("Authorization") != "boot-secret" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(bootstrapPayload))
	default:
		http.NotFound(w, r)
	}
}

// fixture is the default upstream payload.
const fixture = `{"version":2,"features":[
 {"name":"enabled-simple","enabled":true,"impressionData":true,"strategies":[{"name":"default","parameters":{},"constraints":[]}],"variants":[]},
 {"name":"disabled-flag","enabled":false,"strategies":[{"name":"default","parameters":{},"constraints":[]}],"variants":[]},
 {"name":"with-variant","enabled":true,"strategies":[{"name":"default","parameters":{},"constraints":[]}],
  "variants":[{"name":"blue","weight":1000,"stickiness":"default","payload":{"type":"json","value":"{\"color\":\"blue\"}"}}]},
 {"name":"user-only","enabled":true,"strategies":[{"name":"userWithId","parameters":{"userIds":"u1,u2"},"constraints":[]}],"variants":[]},
 {"name":"region-eu","enabled":true,"strategies":[{"name":"default","parameters":{},"constraints":[{"contextName":"region","operator":"IN","values":["eu"]}]}],"variants":[]},
 {"name":"env-prod","enabled":true,"strategies":[{"name":"default","parameters":{},"constraints":[{"contextName":"environment","operator":"IN","values":["production"]}]}],"variants":[]},
 {"name":"app-default","enabled":true,"strategies":[{"name":"default","parameters":{},"constraints":[{"contextName":"appName","operator":"IN","values":["upstream-proxy"]}]}],"variants":[]},
 {"name":"ip-local","enabled":true,"strategies":[{"name":"remoteAddress","parameters":{"IPs":"127.0.0.1"},"constraints":[]}],"variants":[]},
 {"name":"ip-forwarded","enabled":true,"strategies":[{"name":"remoteAddress","parameters":{"IPs":"203.0.113.7"},"constraints":[]}],"variants":[]},
 {"name":"user-named-disabled","enabled":true,"strategies":[{"name":"default","parameters":{},"constraints":[]}],
  "variants":[{"name":"disabled","weight":1000,"stickiness":"default"}]}
],"segments":[{"id":1,"name":"seg","constraints":[{"contextName":"userId","operator":"IN","values":["s1"]}]}]}`

const bootstrapPayload = `{"version":2,"features":[{"name":"from-bootstrap","enabled":true,"strategies":[{"name":"default","parameters":{}}],"variants":[]}]}`

const clientKey = "client-key-1"

// testConfig is a valid configuration against u (nil: set UpstreamURL).
func testConfig(u *fakeUpstream) proxy.Config {
	cfg := proxy.DefaultConfig()
	if u != nil {
		cfg.UpstreamURL = u.URL()
	}
	cfg.UpstreamAPIToken = "upstream-token"
	cfg.ClientKeys = []string{clientKey, "other-key"}
	cfg.RefreshInterval = 50 * time.Millisecond
	cfg.MetricsInterval = 100 * time.Millisecond
	cfg.UpstreamInstanceID = "inst-1"
	cfg.ExpServerSideSDKTokens = []string{"server-token"}
	return cfg
}

// running is a proxy served on loopback.
type running struct {
	p   *proxy.Proxy
	srv *httptest.Server
}

// startProxy starts the real proxy on a loopback listener, prepared with
// CoalesceWrites, and its sync loop; both stop at the end of the test. Unless opts replace it, there
// is no backup storage.
func startProxy(t *testing.T, cfg proxy.Config, opts ...proxy.Option) *running {
	t.Helper()
	all := append([]proxy.Option{proxy.WithStorageProvider(nil), proxy.WithLogger(testLogger(t))}, opts...)
	p, err := proxy.New(cfg, all...)
	require.NoError(t, err)
	// Served as `bunting proxy` serves it, large answers in one write.
	srv := httptest.NewUnstartedServer(p)
	srv.Listener = proxy.CoalesceWrites(srv.Config, srv.Listener)
	srv.Start()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = p.Run(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		srv.Close()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("proxy Run did not stop")
		}
	})
	return &running{p: p, srv: srv}
}

func startReady(t *testing.T, cfg proxy.Config, opts ...proxy.Option) *running {
	t.Helper()
	r := startProxy(t, cfg, opts...)
	waitReady(t, r.p)
	return r
}

// waitReady waits for the first sync; generous, since under -race on a busy
// two-core machine a 1,000-flag payload takes seconds to compile.
func waitReady(t *testing.T, p *proxy.Proxy) {
	t.Helper()
	select {
	case <-p.ReadyChan():
	case <-time.After(30 * time.Second):
		t.Fatal("proxy did not become ready")
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(b), "\n"))
	return len(b), nil
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// do sends a request and returns the response with its body read (net/http's
// client asks for gzip itself and decodes the answer).
func (r *running) do(t *testing.T, method, path string, body string, headers ...string) (*http.Response, string) {
	t.Helper()
	resp, b := r.send(t, http.DefaultClient, method, path, body, headers...)
	return resp, string(b)
}

// send sends a request through client. headers are name/value pairs; an
// empty value removes the header.
func (r *running) send(t *testing.T, client *http.Client, method, path string, body string, headers ...string) (*http.Response, []byte) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, r.srv.URL+path, rd)
	require.NoError(t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
			continue
		}
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

// get is an authenticated GET.
func (r *running) get(t *testing.T, path string, headers ...string) (*http.Response, string) {
	t.Helper()
	return r.do(t, http.MethodGet, path, "", append([]string{"Authorization", clientKey}, headers...)...)
}

// post is an authenticated POST of a JSON body.
func (r *running) post(t *testing.T, path, body string, headers ...string) (*http.Response, string) {
	t.Helper()
	return r.do(t, http.MethodPost, path, body, append([]string{"Authorization", clientKey}, headers...)...)
}

type toggle struct {
	Name           string `json:"name"`
	Enabled        bool   `json:"enabled"`
	ImpressionData *bool  `json:"impressionData"`
	Variant        *struct {
		Name    string `json:"name"`
		Enabled bool   `json:"enabled"`
		Payload *struct {
			Type  string `json:"type"`
			Value any    `json:"value"`
		} `json:"payload"`
	} `json:"variant"`
}

func toggles(t *testing.T, body string) []toggle {
	t.Helper()
	var out struct {
		Toggles []toggle `json:"toggles"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &out), body)
	return out.Toggles
}

func names(ts []toggle) []string {
	out := make([]string, len(ts))
	for i, tg := range ts {
		out[i] = tg.Name
	}
	return out
}

func byName(ts []toggle) map[string]toggle {
	m := map[string]toggle{}
	for _, tg := range ts {
		m[tg.Name] = tg
	}
	return m
}
