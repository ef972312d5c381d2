package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// hostileNext are values of /login?next= (as the server reads them, after
// the query's own decoding) that would take a person who just signed in to
// another site, or run script, if the page navigated to them as they are:
// browsers turn \ into /, drop TAB, LF and CR anywhere and trim leading
// control characters and spaces, so each of these is //evil.example, a
// scheme, or becomes one once decoded.
var hostileNext = []string{
	`/\evil.example/`,
	"/\t/evil.example/",
	"/\r\n/evil.example/",
	"/\n/evil.example/",
	"/\r/evil.example/",
	`//evil.example/`,
	`///evil.example/`,
	`/\/evil.example/`,
	`\/evil.example/`,
	`\\evil.example/`,
	"\t//evil.example/",
	" //evil.example/",
	"/\x0b/evil.example/",
	"/\x01/evil.example/",
	`https:evil.example`,
	`https://evil.example/`,
	`https:/evil.example/`,
	`http:\\evil.example\`,
	`javascript:alert(1)`,
	"\tjavascript:alert(1)",
	" javascript:alert(1)",
	"java\tscript:alert(1)",
	`JaVaScRiPt:alert(1)`,
	`data:text/html,<script>alert(1)</script>`,
	`/%09/evil.example/`,
	`/%0D%0A/evil.example/`,
	`/%2F/evil.example/`,
	`/%5Cevil.example/`,
	`/%5C%5Cevil.example/`,
	`%2F%2Fevil.example/`,
	`/%252F/evil.example/`,
	`/..//evil.example/`,
	`/./\evil.example/`,
}

// signInLog records what a browser did while signing in: every request's
// URL (to prove nothing went elsewhere) and every dialog a script opened
// (dismissed at once, so a javascript: URL cannot stall the page).
type signInLog struct {
	mu      sync.Mutex
	dialogs []string
}

func (l *signInLog) add(msg string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.dialogs = append(l.dialogs, msg)
}

func (l *signInLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	d := l.dialogs
	l.dialogs = nil
	return d
}

// dismissDialogs answers every alert, confirm and prompt the page opens
// with "dismiss" and records its message.
func (b *uiBrowser) dismissDialogs() *signInLog {
	log := &signInLog{}
	dialogs := chromedp.Events(b.ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			log.add(ev.Type.String() + ": " + ev.Message)
			go func() {
				ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
				defer cancel()
				_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
			}()
		}
	}()
	return log
}

// signInTo opens base's sign-in page with next, signs in as the first
// admin (prepare, when set, runs on the sign-in page before submitting) and
// returns where the browser ended up once it left the sign-in page.
func (b *uiBrowser) signInTo(base, next string, prepare string) string {
	b.t.Helper()
	b.open(base + "/login?next=" + url.QueryEscape(next))
	b.waitFor("the sign-in form", `!!document.querySelector("#login #username")`)
	if prepare != "" {
		eval[bool](b, prepare)
	}
	// The fields are filled as typing would (input events), in one step
	// each rather than a key at a time, to keep 70 sign-ins quick.
	b.set("#username", servertest.AdminUser)
	b.set("#password", servertest.AdminPassword)
	b.do("sign in", chromedp.Click(`#login button[type="submit"]`))
	b.waitFor("the browser to leave the sign-in page",
		`!location.href.startsWith(`+jsString(base+"/login")+`) && document.readyState === "complete"`)
	return eval[string](b, `location.href`)
}

func jsString(s string) string { return fmt.Sprintf("%q", s) }

// TestSignInRedirectStaysOnServer signs in for real in Chromium with each
// hostile next value and checks the browser landed on the server's flags
// list, having requested nothing elsewhere and run no script from the
// value. The page's own check is tested separately: the server's value is
// replaced in the page with each hostile one before signing in. Safe
// values still lead where they point, under a base path too.
func TestSignInRedirectStaysOnServer(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	b := newUIBrowser(t)
	dialogs := b.dismissDialogs()
	check := func(how, next, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s next=%q: the browser went to %q, want %q", how, next, got, want)
		}
		if d := dialogs.take(); len(d) > 0 {
			t.Errorf("%s next=%q: the page opened dialogs %q", how, next, d)
		}
	}
	for _, next := range hostileNext {
		check("server", next, b.signInTo(h.URL, next, ""), h.URL+"/flags")
	}
	// The script checks again: every hostile value, as the page's check
	// reads it, is the flags list; and put into the form (as if the server
	// had let it through) a sign-in still ends there.
	for _, next := range hostileNext {
		if got := eval[string](b, `buntingLocalPath(`+jsString(next)+`)`); got != "/flags" {
			t.Errorf("the script's check lets next=%q through as %q", next, got)
		}
	}
	for _, next := range []string{`/\evil.example/`, "/\t/evil.example/", "//evil.example/", "https:evil.example", "javascript:alert(1)", "/%2F/evil.example/"} {
		put := `(() => { document.querySelector("#login").dataset.then = ` + jsString(next) + `; return true })()`
		check("script", next, b.signInTo(h.URL, "/flags", put), h.URL+"/flags")
	}
	for _, next := range []string{"/events?type=feature-created", "/flags#top", "/projects/default/flags/a%20b"} {
		if got := eval[string](b, `buntingLocalPath(`+jsString(next)+`)`); got != next {
			t.Errorf("the script's check turns next=%q into %q", next, got)
		}
	}
	for _, next := range []string{"/events?type=feature-created", "/projects/default/flags/nope", "/account"} {
		check("safe", next, b.signInTo(h.URL, next, ""), h.URL+next)
	}

	// Under a base path, next must lie under it.
	hb := servertest.Start(t, servertest.NewSQLite(t), func(c *server.Config) { c.BasePath = "/bunting" })
	for _, next := range []string{"/flags", "/bunting/../flags", "/bunting/..%2Fflags", `/bunting\..\evil`, "/buntingx/flags", "/bunting//evil.example/"} {
		check("base path", next, b.signInTo(hb.URL+"/bunting", next, ""), hb.URL+"/bunting/flags")
	}
	check("base path", "/bunting/events", b.signInTo(hb.URL+"/bunting", "/bunting/events", ""), hb.URL+"/bunting/events")

	for _, u := range b.urls.snapshot().urls {
		if !strings.HasPrefix(u, h.URL+"/") && !strings.HasPrefix(u, hb.URL+"/") && !strings.HasPrefix(u, "data:") {
			t.Errorf("the browser requested %s", u)
		}
	}
}

// TestSignInWithoutScript: with the page's script failing to load, the
// sign-in form still signs in, by a form post, and leads to the checked
// next; no request the browser made carried the password in its URL; a
// wrong password shows the error on the page again.
func TestSignInWithoutScript(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	b := newUIBrowser(t)
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	_, err := chromedp.Call(ctx, network.SetBlockedURLs, network.SetBlockedURLsParams{URLPatterns: []*network.BlockPattern{{URLPattern: "*://*:*/static/app.js", Block: true}}})
	cancel()
	if err != nil {
		t.Fatalf("block app.js: %v", err)
	}
	submit := func(next, password string) {
		t.Helper()
		b.open(h.URL + "/login?next=" + url.QueryEscape(next))
		b.do("sign in without script",
			chromedp.SendKeys("#username", servertest.AdminUser),
			chromedp.SendKeys("#password", password),
			chromedp.Click(`#login button[type="submit"]`))
	}
	const wrong = "wrong-password-in-the-url"
	submit("/events", wrong)
	b.waitFor("the error on the page", `!!document.querySelector("[data-error]") && document.querySelector("[data-error]").textContent.includes("Wrong username or password")`)
	submit("/events", servertest.AdminPassword)
	b.waitFor("the events page", `location.pathname === "/events" && !!document.querySelector("#who")`)
	for _, next := range []string{`/\evil.example/`, "/\t/evil.example/", "//evil.example/", "https:evil.example", "javascript:alert(1)"} {
		submit(next, servertest.AdminPassword)
		b.waitFor("the flags list for next="+next, `location.href === `+jsString(h.URL+"/flags")+` && !!document.querySelector("#who")`)
	}
	if n := eval[int](b, `[...document.scripts].filter(s => s.src.endsWith("/static/app.js")).length`); n != 1 {
		t.Fatalf("the page has %d app.js scripts; the test blocks it to sign in without script", n)
	}
	seen := b.urls.snapshot().urls
	for _, u := range seen {
		if strings.Contains(u, wrong) || strings.Contains(u, url.QueryEscape(servertest.AdminPassword)) || strings.Contains(u, "password=") {
			t.Errorf("a request carried the password in its URL: %s", u)
		}
		if !strings.HasPrefix(u, h.URL+"/") {
			t.Errorf("the browser requested %s", u)
		}
	}
	if !slicesContains(seen, h.URL+"/static/app.js") {
		t.Errorf("the browser never asked for app.js (it should ask and be refused): %v", seen)
	}
}

func slicesContains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
