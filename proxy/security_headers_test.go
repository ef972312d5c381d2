package proxy_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/proxy"
)

var frameAncestorsNone = regexp.MustCompile(`(^|;)\s*frame-ancestors\s+'none'\s*(;|$)`)

// checkSecurityHeaders sends one request, reads only the answer's headers
// (streams stay open) and checks them: nosniff on every answer, and on an
// HTML answer no framing by other sites and no referrer sent to them.
func checkSecurityHeaders(t *testing.T, base, method, path, body string, headers ...string) http.Header {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	res.Body.Close()
	what := method + " " + path + " (" + res.Status + ")"
	if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s: X-Content-Type-Options %q, want nosniff", what, got)
	}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		if csp := res.Header.Values("Content-Security-Policy"); len(csp) != 1 || !frameAncestorsNone.MatchString(csp[0]) {
			t.Errorf("%s: Content-Security-Policy %q, want one with frame-ancestors 'none'", what, csp)
		}
		if got := res.Header.Get("X-Frame-Options"); got != "DENY" {
			t.Errorf("%s: X-Frame-Options %q, want DENY", what, got)
		}
		if got := res.Header.Get("Referrer-Policy"); got != "same-origin" && got != "no-referrer" {
			t.Errorf("%s: Referrer-Policy %q, want same-origin or stricter", what, got)
		}
	}
	return res.Header
}

// TestSecurityHeadersOnEveryProxyAnswer calls every path of the proxy's
// route table with each method, with and without credentials, before and
// after the first configuration, plus its docs page and unknown paths, and
// checks the security headers of every answer.
func TestSecurityHeadersOnEveryProxyAnswer(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	u.setMode(modeFail)
	cfg := testConfig(u)
	cfg.EnableAllEndpoint, cfg.EnableOAS = true, true
	r := startProxy(t, cfg)
	paths := append(proxy.RoutePaths(), "/", "/elsewhere", "/proxy/unknown", "/docs/openapi", "/docs/openapi/", "/docs/openapi.json",
		"/docs/openapi/index.html", "/docs/openapi/swagger-ui.css", "/docs/openapi/no-such-file")
	if len(paths) < 20 {
		t.Fatalf("only %d paths", len(paths))
	}
	html := 0
	each := func() {
		for _, path := range paths {
			for _, m := range []string{"GET", "HEAD", "POST", "PUT", "OPTIONS"} {
				body := ""
				if m == "POST" || m == "PUT" {
					body = "{}"
				}
				for _, key := range []string{"", clientKey, "server-token"} {
					h := checkSecurityHeaders(t, r.srv.URL, m, path, body, "Authorization", key, "Origin", "https://app.example")
					if strings.HasPrefix(h.Get("Content-Type"), "text/html") {
						html++
					}
				}
			}
		}
	}
	each() // not ready: 503 everywhere
	u.setMode(modeOK)
	waitReady(t, r.p)
	each()
	if html == 0 {
		t.Error("no HTML answer was checked")
	}
}
