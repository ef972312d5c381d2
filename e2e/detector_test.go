package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestVisitSeesRequestsToOtherOrigins guards the docs tests themselves: a
// page that pulls a script from another origin (a stand-in CDN on another
// loopback port) must show up as an outside request.
func TestVisitSeesRequestsToOtherOrigins(t *testing.T) {
	cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		fmt.Fprint(w, `document.body.insertAdjacentHTML('beforeend', '<p id="loaded">from the cdn</p>');`)
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

	urls, _ := visit(t, newBrowser(t), site.URL+"/", `document.getElementById('loaded') ? 1 : 0`)
	external := outsideOrigin(urls, site.URL)
	if len(external) != 1 || external[0] != cdn.URL+"/lib.js" {
		t.Fatalf("want exactly the stand-in CDN request %s/lib.js outside the origin, got %v (all: %v)", cdn.URL, external, urls)
	}
	if len(outsideOrigin([]string{site.URL + "/", site.URL, "data:image/png;base64,AA", "blob:" + site.URL + "/x"}, site.URL)) != 0 {
		t.Fatal("same-origin, data: and blob: URLs must pass")
	}
}
