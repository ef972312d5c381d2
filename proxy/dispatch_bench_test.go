package proxy

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/engine"
)

type discardWriter struct{ h http.Header }

func (d *discardWriter) Header() http.Header         { return d.h }
func (d *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d *discardWriter) WriteHeader(int)             {}

// BenchmarkDispatchInProcess serves requests in process, without a
// network, so that the routing layer's cost shows through the noise.
func BenchmarkDispatchInProcess(b *testing.B) {
	cfg := DefaultConfig()
	cfg.UpstreamURL, cfg.UpstreamAPIToken, cfg.ClientKeys = "http://127.0.0.1:1/api", "t", []string{"client"}
	p, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	cf := &engine.ClientFeatures{Version: 2}
	for i := range 100 {
		cf.Features = append(cf.Features, engine.Feature{Name: "flag-" + strconv.Itoa(i), Enabled: i%2 == 0,
			Strategies: []engine.Strategy{{Name: "flexibleRollout", Parameters: engine.Parameters{"rollout": "50", "stickiness": "default", "groupId": "g"}}}})
	}
	p.install(p.compile(cf), "bench")
	for _, c := range []struct{ name, method, target, body string }{
		{"GET-proxy", "GET", "/proxy?userId=123&sessionId=abc&properties%5Bregion%5D=eu", ""},
		{"POST-proxy", "POST", "/proxy", `{"toggles":["flag-1","flag-2","flag-3","flag-4","flag-5"],"context":{"userId":"123"}}`},
		{"health", "GET", "/proxy/health", ""},
		{"unauthorized", "GET", "/proxy", ""},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := httptest.NewRequest(c.method, c.target, nil)
			if c.name != "unauthorized" {
				req.Header.Set("Authorization", "client")
			}
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				if c.body != "" {
					r := strings.NewReader(c.body)
					req.Body = readCloser{r}
					req.ContentLength = int64(len(c.body))
				}
				clear(w.h)
				p.ServeHTTP(w, req)
			}
		})
	}
}

type readCloser struct{ *strings.Reader }

func (readCloser) Close() error { return nil }
