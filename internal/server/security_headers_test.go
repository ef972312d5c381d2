package server_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// headerCheck sends one request and checks the security headers of its
// answer without reading more than its headers (streams stay open): every
// answer says nosniff; an HTML answer also forbids framing (CSP
// frame-ancestors 'none' and X-Frame-Options DENY) and sends no referrer
// to other sites. It returns the answer's headers.
func headerCheck(t *testing.T, base, method, path string, body string, headers ...string) http.Header {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, base+path, rd)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	res.Body.Close()
	what := method + " " + path + " (" + res.Status + ")"
	if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
		t.Errorf("%s: X-Content-Type-Options %q, want nosniff", what, got)
	}
	ct := res.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "text/html") {
		wantPageHeaders(t, what, res.Header)
	}
	return res.Header
}

func isHTML(h http.Header) bool { return strings.HasPrefix(h.Get("Content-Type"), "text/html") }

var frameAncestorsNone = regexp.MustCompile(`(^|;)\s*frame-ancestors\s+'none'\s*(;|$)`)

// wantPageHeaders checks the headers every HTML answer carries.
func wantPageHeaders(t *testing.T, what string, h http.Header) {
	t.Helper()
	if csp := h.Values("Content-Security-Policy"); len(csp) != 1 || !frameAncestorsNone.MatchString(csp[0]) {
		t.Errorf("%s: Content-Security-Policy %q, want one with frame-ancestors 'none'", what, csp)
	}
	if got := h.Get("X-Frame-Options"); got != "DENY" {
		t.Errorf("%s: X-Frame-Options %q, want DENY", what, got)
	}
	switch got := h.Get("Referrer-Policy"); got {
	case "same-origin", "no-referrer", "strict-origin":
	default:
		t.Errorf("%s: Referrer-Policy %q, want same-origin or stricter", what, got)
	}
}

// TestSecurityHeadersOnEveryAnswer calls every route of the route table
// (without credentials and with the right ones), the web UI's pages,
// error pages and static files, the API docs page and unknown paths, and
// checks the security headers of each answer.
func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	createFlag(t, h, "f")
	cookie, _ := signIn(t, h, servertest.AdminUser, servertest.AdminPassword)
	values := map[string]string{"projectId": "default", "featureName": "f", "environment": "development", "name": "f"}
	wildcard := regexp.MustCompile(`\{([A-Za-z]+)(\.\.\.)?\}`)
	html := 0
	routes := h.Server.Routes()
	for _, rt := range routes {
		method, path, ok := strings.Cut(rt.Pattern, " ")
		if !ok {
			method, path = "GET", rt.Pattern
		}
		path = strings.ReplaceAll(path, "{$}", "")
		path = wildcard.ReplaceAllStringFunc(path, func(m string) string {
			if v, ok := values[wildcard.FindStringSubmatch(m)[1]]; ok {
				return v
			}
			return "x"
		})
		token := map[string]string{"admin": h.AdminToken, "client": h.ClientToken, "frontend": h.FrontendToken}[rt.Surface]
		body := ""
		if method == "POST" || method == "PUT" || method == "PATCH" {
			body = "{}"
		}
		headerCheck(t, h.URL, method, path, body)
		if token != "" {
			headerCheck(t, h.URL, method, path, body, "Authorization", token)
		}
		if method == "GET" {
			if isHTML(headerCheck(t, h.URL, method, path, "", "Accept", "text/html", "Cookie", cookie)) {
				html++
			}
		}
	}
	if len(routes) < 100 {
		t.Fatalf("the route table has only %d routes", len(routes))
	}
	// The web UI: pages, the sign-in page, redirects, error pages, static
	// files; the API docs page; unknown paths.
	pages := []string{"/", "/login", "/flags", "/flags/new", "/projects/default/flags/f", "/projects/default/flags/missing",
		"/events", "/playground", "/segments", "/context", "/tokens", "/projects", "/users", "/account", "/no-such-page",
		"/docs/openapi", "/docs/openapi.json", "/api/admin/no-such-route"}
	for _, p := range pages {
		for _, got := range []http.Header{
			headerCheck(t, h.URL, "GET", p, "", "Accept", "text/html"),
			headerCheck(t, h.URL, "GET", p, "", "Accept", "text/html", "Cookie", cookie),
		} {
			if !isHTML(got) {
				continue
			}
			html++
			// The web UI's own pages (not redirects) keep their strict policy.
			if csp := got.Get("Content-Security-Policy"); !strings.HasPrefix(p, "/docs/") && got.Get("Location") == "" && !strings.Contains(csp, "default-src 'self'") {
				t.Errorf("GET %s: the page's Content-Security-Policy %q lacks default-src 'self'", p, csp)
			}
		}
		headerCheck(t, h.URL, "GET", p, "")
	}
	for _, f := range []string{"/static/app.js", "/static/app.css", "/static/htmx.min.js", "/static/no-such-file.js"} {
		headerCheck(t, h.URL, "GET", f, "")
	}
	headerCheck(t, h.URL, "POST", "/auth/simple/login", `{"username":"admin","password":"wrong password"}`)
	headerCheck(t, h.URL, "POST", "/auth/simple/login", `{`)
	if html < 15 {
		t.Fatalf("only %d HTML answers were checked", html)
	}

	// Under a base path too, where paths outside it are not found.
	hb := servertest.Start(t, servertest.NewSQLite(t), func(c *server.Config) { c.BasePath = "/bunting" })
	for _, p := range []string{"/", "/bunting", "/bunting/", "/bunting/login", "/bunting/flags", "/bunting/docs/openapi", "/bunting/static/app.js", "/elsewhere"} {
		headerCheck(t, hb.URL, "GET", p, "", "Accept", "text/html")
	}
}
