package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestVisitSeesRequestsToOtherOrigins guards the docs tests themselves: a
// page that pulls a script from another origin (a stand-in CDN on another
// loopback port) must show up as an outside request, and the script's
// uncaught exception as an exception.
func TestVisitSeesRequestsToOtherOrigins(t *testing.T) {
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `document.body.insertAdjacentHTML('beforeend', '<p id="loaded">from the cdn</p>'); throw new Error('cdn boom');`)
	}))
	defer cdn.Close()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body><h1>page</h1><script src="%s/lib.js"></script></body></html>`, cdn.URL)
	}))
	defer site.Close()

	seen := visit(t, newBrowser(t), site.URL+"/", `document.getElementById('loaded') ? 1 : 0`)
	urls := seen.urls
	if len(seen.exceptions) != 1 || !strings.Contains(seen.exceptions[0], "cdn boom") {
		t.Errorf("want the page's one uncaught exception, got %v", seen.exceptions)
	}
	external := outsideOrigin(urls, site.URL)
	if len(external) != 1 || external[0] != cdn.URL+"/lib.js" {
		t.Fatalf("want exactly the stand-in CDN request %s/lib.js outside the origin, got %v (all: %v)", cdn.URL, external, urls)
	}
	if len(outsideOrigin([]string{site.URL + "/", site.URL, "data:image/png;base64,AA", "blob:" + site.URL + "/x"}, site.URL)) != 0 {
		t.Fatal("same-origin, data: and blob: URLs must pass")
	}
}
