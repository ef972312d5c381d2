package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromiumPath finds the browser. Without one the test skips, unless
// BUNTING_REQUIRE_FIXTURES=1 (as in CI), where it fails.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BUNTING_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("BUNTING_REQUIRE_FIXTURES") == "1" {
		t.Fatal("no Chromium found (install Debian's chromium, or set BUNTING_CHROMIUM); BUNTING_REQUIRE_FIXTURES=1 forbids skipping")
	}
	t.Skip("no Chromium found; install Debian's chromium or set BUNTING_CHROMIUM")
	return ""
}

// newBrowser starts headless Chromium with a fresh profile and with every
// background service that could call out switched off.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	t.Cleanup(cancelCtx)
	return ctx
}

// pageLog records what a page did: the URL of every request, and every
// uncaught JavaScript exception; and which requests are still open.
type pageLog struct {
	mu         sync.Mutex
	urls       []string
	exceptions []string
	open       map[network.RequestID]bool
}

// record is a chromedp.Listen function: it runs in the loop that reads the
// tab's messages, so every event sent before a command's reply is recorded
// by the time the command returns.
func (l *pageLog) record(ev any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open == nil {
		l.open = map[network.RequestID]bool{}
	}
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		l.urls = append(l.urls, e.Request.URL)
		// Event streams stay open; they are not late requests.
		if e.Type != network.ResourceTypeEventSource && e.Type != network.ResourceTypeWebSocket {
			l.open[e.RequestID] = true
		}
	case *network.EventLoadingFinished:
		delete(l.open, e.RequestID)
	case *network.EventLoadingFailed:
		delete(l.open, e.RequestID)
	case *cdpruntime.EventExceptionThrown:
		text := e.ExceptionDetails.Text
		if ex := e.ExceptionDetails.Exception; ex != nil && ex.Description != "" {
			text += " " + ex.Description
		}
		l.exceptions = append(l.exceptions, text)
	}
}

// openRequests counts the requests that have neither finished nor failed.
func (l *pageLog) openRequests() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.open)
}

func (l *pageLog) addURL(url string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.urls = append(l.urls, url)
}

// snapshot copies the log.
func (l *pageLog) snapshot() pageVisit {
	l.mu.Lock()
	defer l.mu.Unlock()
	return pageVisit{urls: slices.Clone(l.urls), exceptions: slices.Clone(l.exceptions)}
}

// pageVisit is what visit observed.
type pageVisit struct {
	urls       []string
	exceptions []string
	ready      int
}

// checkDocsPageOffline loads the interactive API page at baseURL+pagePath,
// waits until Swagger UI has rendered one block per operation of the spec
// at baseURL+specPath, and checks that every request the page made went to
// baseURL's origin.
func checkDocsPageOffline(t *testing.T, baseURL, pagePath, specPath string) {
	t.Helper()
	operations := countOperations(t, baseURL+specPath)
	ctx := newBrowser(t)
	ready := fmt.Sprintf(`(() => { const n = document.querySelectorAll('.opblock').length; return n >= %d ? n : 0 })()`, operations)
	seen := visit(t, ctx, baseURL+pagePath, ready)
	urls, rendered := seen.urls, seen.ready
	if len(seen.exceptions) > 0 {
		t.Errorf("the page threw: %v", seen.exceptions)
	}
	if rendered != operations {
		t.Errorf("rendered %d operation blocks, the spec has %d operations", rendered, operations)
	}
	title, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('.info .title')?.textContent ?? ''`))
	if err != nil || title == "" {
		t.Errorf("the page shows no API title (%v)", err)
	}
	if external := outsideOrigin(urls, baseURL); len(external) > 0 {
		t.Errorf("the page made requests outside %s: %v", baseURL, external)
	}
	if !slices.Contains(urls, baseURL+specPath) {
		t.Errorf("the page never requested %s; requests: %v", specPath, urls)
	}
	t.Logf("%d requests, all to %s; %d operations rendered", len(urls), baseURL, rendered)
}

// visit loads pageURL, waits until the JavaScript expression ready returns
// a non-zero number and then until the page has loaded, its fonts too, and
// no request it started is still open (event streams aside), and returns
// the URL of every request the page made, its uncaught exceptions and the
// number ready returned.
func visit(t *testing.T, ctx context.Context, pageURL, ready string) pageVisit {
	t.Helper()
	// Start the browser with the long-lived context: the first action
	// binds the browser's life to its context.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	log := &pageLog{}
	if err := chromedp.Listen(ctx, log.record); err != nil {
		t.Fatalf("listening to the page: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(pageURL)); err != nil {
		t.Fatalf("loading %s: %v", pageURL, err)
	}
	n, err := chromedp.Run(ctx, chromedp.Poll[int](ready,
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(45*time.Second)))
	if err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 2000) : ''`))
		seen := log.snapshot()
		t.Fatalf("%s never became ready (%s): %v\npage text: %s\nrequests: %v\nexceptions: %v", pageURL, ready, err, text, seen.urls, seen.exceptions)
	}
	// Late requests (fonts, images) have started by the time the page and its
	// fonts have loaded; each poll's reply comes after the events before it.
	settled := `document.readyState === "complete" && document.fonts.status === "loaded"`
	for {
		done, err := chromedp.Run(ctx, chromedp.Poll[bool](settled,
			chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(45*time.Second)))
		if err != nil || !done {
			t.Fatalf("%s never finished loading: %v", pageURL, err)
		}
		if log.openRequests() == 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("%s still has %d requests open", pageURL, log.openRequests())
		}
		time.Sleep(50 * time.Millisecond)
	}
	seen := log.snapshot()
	seen.ready = n
	return seen
}

// outsideOrigin lists the URLs not on base's origin; data: and blob: URLs
// never leave the browser, so they pass.
func outsideOrigin(urls []string, base string) []string {
	var out []string
	for _, u := range urls {
		switch {
		case strings.HasPrefix(u, "data:"), strings.HasPrefix(u, "blob:"):
		case u == base || strings.HasPrefix(u, base+"/"):
		default:
			out = append(out, u)
		}
	}
	return out
}

// countOperations reads an OpenAPI document and counts its operations.
func countOperations(t *testing.T, specURL string) int {
	t.Helper()
	resp, err := http.Get(specURL)
	if err != nil {
		t.Fatalf("fetching %s: %v", specURL, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: status %d", specURL, resp.StatusCode)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		t.Fatalf("%s is not an OpenAPI document: %v", specURL, err)
	}
	methods := map[string]bool{"get": true, "put": true, "post": true, "delete": true, "options": true, "head": true, "patch": true, "trace": true}
	n := 0
	var paths []string
	for path, item := range doc.Paths {
		paths = append(paths, path)
		for m := range item {
			if methods[m] {
				n++
			}
		}
	}
	sort.Strings(paths)
	if n == 0 {
		t.Fatalf("%s documents no operations (paths %v)", specURL, paths)
	}
	return n
}
