package proxy_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/engine/enginetest"
	"github.com/bunting-flags/bunting/proxy"
)

// discardWriter is the cheapest possible http.ResponseWriter, so the
// benchmarks measure the handler, not a recorder.
type discardWriter struct {
	h      http.Header
	status int
	n      int
}

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) WriteHeader(code int)        { d.status = code }
func (d *discardWriter) Write(b []byte) (int, error) { d.n += len(b); return len(b), nil }
func (d *discardWriter) reset() {
	clear(d.h)
	d.status, d.n = 0, 0
}

// benchProxy is a ready proxy serving n generated flags (the engine's
// realistic mix), without a sync loop.
func benchProxy(b *testing.B, n int) *proxy.Proxy {
	b.Helper()
	payload, err := json.Marshal(enginetest.Generate(n, 1))
	if err != nil {
		b.Fatal(err)
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write(payload) }))
	b.Cleanup(up.Close)
	cfg := proxy.DefaultConfig()
	cfg.UpstreamURL, cfg.UpstreamAPIToken, cfg.ClientKeys = up.URL+"/api", "t", []string{clientKey}
	cfg.MetricsInterval = time.Hour
	p, err := proxy.New(cfg, proxy.WithStorageProvider(nil))
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := contextWithCancel()
	b.Cleanup(cancel)
	go func() { _ = p.Run(ctx) }()
	select {
	case <-p.ReadyChan():
	case <-time.After(10 * time.Second):
		b.Fatal("not ready")
	}
	return p
}

// browserQuery is the query string the browser SDK sends for a realistic
// context.
func browserQuery() string {
	c := enginetest.Context()
	q := []string{"sessionId=" + url.QueryEscape(c.SessionID), "appName=" + c.AppName, "environment=" + c.Environment, "userId=" + url.QueryEscape(c.UserID)}
	for k, v := range c.Properties {
		q = append(q, "properties%5B"+k+"%5D="+url.QueryEscape(v))
	}
	return strings.Join(q, "&")
}

// runHandler serves req repeatedly; with baseline it instead replays the
// bytes the proxy answered, which is what the load benchmark's baseline
// server does.
func runHandler(b *testing.B, h http.Handler, newReq func() *http.Request) {
	w := &discardWriter{h: http.Header{}}
	h.ServeHTTP(w, newReq())
	if w.status != http.StatusOK {
		b.Fatalf("status %d", w.status)
	}
	size := w.n
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		w.reset()
		h.ServeHTTP(w, newReq())
	}
}

func baselineFor(b *testing.B, h http.Handler, newReq func() *http.Request) http.Handler {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, newReq())
	body := w.Body.Bytes()
	hdr := w.Header().Clone()
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		for k, v := range hdr {
			rw.Header()[k] = v
		}
		rw.WriteHeader(http.StatusOK)
		_, _ = rw.Write(body)
	})
}

func BenchmarkGetProxy(b *testing.B) {
	for _, n := range []int{100, 1000} {
		p := benchProxy(b, n)
		q := browserQuery()
		req := func() *http.Request {
			r := httptest.NewRequest(http.MethodGet, "/proxy?"+q, nil)
			r.Header.Set("Authorization", clientKey)
			return r
		}
		gzipReq := func() *http.Request {
			r := req()
			r.Header.Set("Accept-Encoding", "gzip")
			return r
		}
		b.Run(fmt.Sprintf("flags=%d/proxy", n), func(b *testing.B) { runHandler(b, p, req) })
		b.Run(fmt.Sprintf("flags=%d/proxy-gzip", n), func(b *testing.B) { runHandler(b, p, gzipReq) })
		b.Run(fmt.Sprintf("flags=%d/baseline", n), func(b *testing.B) { runHandler(b, baselineFor(b, p, req), req) })
	}
}

func BenchmarkPostProxy5Toggles(b *testing.B) {
	p := benchProxy(b, 1000)
	cf := p.Snapshot()
	var names []string
	for i := 0; i < 5; i++ {
		names = append(names, cf.Name(i*97))
	}
	c := enginetest.Context()
	body, _ := json.Marshal(map[string]any{"toggles": names, "context": map[string]any{
		"userId": c.UserID, "sessionId": c.SessionID, "appName": c.AppName, "environment": c.Environment, "properties": c.Properties}})
	req := func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/proxy", strings.NewReader(string(body)))
		r.Header.Set("Authorization", clientKey)
		r.Header.Set("Content-Type", "application/json")
		return r
	}
	b.Run("proxy", func(b *testing.B) { runHandler(b, p, req) })
	b.Run("baseline", func(b *testing.B) { runHandler(b, baselineFor(b, p, req), req) })
}

func BenchmarkHealth(b *testing.B) {
	p := benchProxy(b, 100)
	req := func() *http.Request { return httptest.NewRequest(http.MethodGet, "/proxy/health", nil) }
	b.Run("proxy", func(b *testing.B) { runHandler(b, p, req) })
	b.Run("baseline", func(b *testing.B) { runHandler(b, baselineFor(b, p, req), req) })
}

func contextWithCancel() (ctxT, func()) { return ctxpkgWithCancel() }

// BenchmarkOFREPBulk is OpenFeature's bulk evaluation of every flag next
// to GET /proxy for the same context (the goal: 90 % of its rate).
func BenchmarkOFREPBulk(b *testing.B) {
	p := benchProxy(b, 1000)
	c := enginetest.Context()
	attrs := map[string]any{"targetingKey": c.UserID, "sessionId": c.SessionID, "appName": c.AppName, "environment": c.Environment}
	for k, v := range c.Properties {
		attrs[k] = v
	}
	body, _ := json.Marshal(map[string]any{"context": attrs})
	q := browserQuery()
	get := func() *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/proxy?"+q, nil)
		r.Header.Set("Authorization", clientKey)
		return r
	}
	bulk := func() *http.Request {
		r := httptest.NewRequest(http.MethodPost, "/ofrep/v1/evaluate/flags", strings.NewReader(string(body)))
		r.Header.Set("Authorization", clientKey)
		r.Header.Set("Content-Type", "application/json")
		return r
	}
	b.Run("ofrep", func(b *testing.B) { runHandler(b, p, bulk) })
	b.Run("get-proxy", func(b *testing.B) { runHandler(b, p, get) })
}
