package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// screenshotDir is where the UI journeys leave pictures of the main
// screens for a person to look at (git-ignored).
const screenshotDir = "screenshots"

// uiBrowser is one Chromium (its own profile, so its own cookies) with
// every request it made recorded.
type uiBrowser struct {
	t    *testing.T
	ctx  context.Context
	urls *pageLog
}

func newUIBrowser(t *testing.T) *uiBrowser {
	t.Helper()
	ctx := newBrowser(t)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	b := &uiBrowser{t: t, ctx: ctx, urls: &pageLog{}}
	requests := chromedp.Events(ctx, network.RequestWillBeSent)
	go func() {
		for ev, err := range requests {
			if err != nil {
				return
			}
			b.urls.addURL(ev.Request.URL)
		}
	}()
	return b
}

// do runs actions with a time limit, failing the test on error.
func (b *uiBrowser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		text, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 1500) : ''`))
		b.t.Fatalf("%s: %v\npage: %s", what, err, text)
	}
}

// eval evaluates a JavaScript expression (awaiting promises).
func eval[T any](b *uiBrowser, js string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js, chromedp.EvalAsValue, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// waitFor polls a JavaScript expression until it is true (navigations in
// between are fine).
func (b *uiBrowser) waitFor(what, js string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var lastErr error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		cancel()
		if err == nil && ok {
			return
		}
		lastErr = err
		time.Sleep(50 * time.Millisecond)
	}
	text, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`location.href + "\n" + (document.body ? document.body.innerText.slice(0, 1500) : '')`))
	b.t.Fatalf("waiting for %s (%s): %v\npage: %s", what, js, lastErr, text)
}

// set gives a form control a value, as typing or choosing would (input
// and change events).
func (b *uiBrowser) set(sel, value string) {
	b.t.Helper()
	js := fmt.Sprintf(`(() => { const el = document.querySelector(%q); if (!el) return false; el.value = %q;
		el.dispatchEvent(new Event("input", {bubbles: true})); el.dispatchEvent(new Event("change", {bubbles: true})); return el.value === %q })()`, sel, value, value)
	if !eval[bool](b, js) {
		b.t.Fatalf("could not set %s to %q", sel, value)
	}
}

func (b *uiBrowser) open(url string) {
	b.t.Helper()
	// A page that reloads itself after a save (data-then="reload") may
	// abort a navigation started just then, more than once while its
	// reload is under way: let that reload finish and navigate again.
	for attempt := 1; ; attempt++ {
		ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
		err := chromedp.Do(ctx, chromedp.Navigate(url))
		cancel()
		if err == nil {
			break
		}
		if attempt == 5 || !strings.Contains(err.Error(), "net::ERR_ABORTED") {
			b.t.Fatalf("open %s (attempt %d): %v", url, attempt, err)
		}
		b.waitFor("the page's own navigation to end", `document.readyState === "complete"`)
	}
	b.waitFor("the page to load", `document.readyState === "complete"`)
}

func (b *uiBrowser) screenshot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.MkdirAll(screenshotDir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(screenshotDir, name+".png"), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

func (b *uiBrowser) signIn(base, user, password string) {
	b.t.Helper()
	b.open(base + "/flags")
	b.waitFor("the sign-in page", `location.pathname === "/login"`)
	b.do("sign in",
		chromedp.SendKeys("#username", user),
		chromedp.SendKeys("#password", password),
		chromedp.Click(`#login button[type="submit"]`))
	b.waitFor("the flags page after sign-in", `location.pathname === "/flags" && !!document.querySelector("#who")`)
}

// TestWebUIJourneys walks the web UI in real Chromium: sign in, create a
// flag, give it a gradual rollout with a constraint, switch it on in
// development, see the proxy serve it, find the change in the event log;
// a Viewer sees no change controls and is refused when it forces one; a
// change without the CSRF token is refused; the session survives a
// server restart; sign out everywhere ends every session.
func TestWebUIJourneys(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	admin := newUIBrowser(t)

	// Sign in.
	admin.open(h.URL + "/")
	admin.waitFor("the sign-in page", `location.pathname === "/login" && !!document.querySelector("#username")`)
	admin.screenshot("01-sign-in")
	admin.do("wrong password", chromedp.SendKeys("#username", "admin"), chromedp.SendKeys("#password", "not-the-password"), chromedp.Click(`#login button[type="submit"]`))
	admin.waitFor("the error", `document.querySelector("[data-error]").textContent.includes("Wrong username or password")`)
	admin.signIn(h.URL, servertest.AdminUser, servertest.AdminPassword)

	// Create a flag, its name checked as it is typed.
	admin.open(h.URL + "/flags/new")
	admin.do("type a taken name", chromedp.SendKeys("#name", "bad name"))
	admin.waitFor("the name check", `document.querySelector("#name-check").textContent.includes("Use only")`)
	admin.set("#name", "")
	admin.do("type the name", chromedp.SendKeys("#name", "ui-rollout"))
	admin.waitFor("the name check", `document.querySelector("#name-check").textContent.includes("is available")`)
	admin.do("describe", chromedp.SendKeys("#description", "Made in the browser"))
	admin.screenshot("02-new-flag")
	admin.do("create", chromedp.Click(`#new-flag button[type="submit"]`))
	admin.waitFor("the flag page", `location.pathname === "/projects/default/flags/ui-rollout"`)

	// A segment, made on the segments screen.
	admin.open(h.URL + "/segments")
	admin.do("name the segment", chromedp.SendKeys("#seg-name", "beta-users"), chromedp.Click(`button[data-add="constraints"]`))
	admin.do("its constraint", chromedp.SendKeys(`[data-list="constraints"] input[name="contextName"]`, "userId"),
		chromedp.SendKeys(`[data-list="constraints"] input[name="values"]`, "alice, bob, carol"))
	admin.do("create the segment", chromedp.Click(`form[data-api$="/api/admin/segments"] button[type="submit"]`))
	admin.waitFor("the segment listed", `document.querySelector("main table").innerText.includes("beta-users")`)
	admin.screenshot("08-segments")
	admin.open(h.URL + "/projects/default/flags/ui-rollout")

	// A gradual rollout with a constraint and the segment, in development.
	env := `#env-development `
	admin.fillRollout("alice, carol")
	if !eval[bool](admin, `(() => { const o = [...document.querySelectorAll('#env-development select[name="segments"] option')].find(o => o.textContent === "beta-users"); if (!o) return false; o.selected = true; return true })()`) {
		t.Fatal("the strategy editor offers no beta-users segment")
	}
	admin.do("save the strategy", chromedp.Click(env+`form.strategy-form button[type="submit"]`))
	admin.waitFor("the strategy", `!!document.querySelector("#env-development .strategy .constraint")`)
	constraint := eval[string](admin, `document.querySelector("#env-development .strategy .constraint").textContent`)
	if !strings.Contains(constraint, "userId is one of alice, carol") {
		t.Errorf("the strategy shows constraint %q", constraint)
	}
	if seg := eval[string](admin, `document.querySelector("#env-development .strategy").innerText`); !strings.Contains(seg, "in segment beta-users") {
		t.Errorf("the strategy does not show its segment: %q", seg)
	}

	// Variants in development.
	admin.addStringVariant("blue", "from-the-ui")

	// Switch it on in development.
	admin.do("switch on", chromedp.Click(env+`input[data-switch]`))
	waitAPI(t, "the flag on in development", func() bool {
		var f struct {
			Environments []struct {
				Name    string
				Enabled bool
			}
		}
		h.Do(t, "GET", "/api/admin/projects/default/features/ui-rollout", h.AdminToken, nil).Want(t, 200).JSON(t, &f)
		for _, e := range f.Environments {
			if e.Name == "development" && e.Enabled {
				return true
			}
		}
		return false
	})
	admin.open(h.URL + "/projects/default/flags/ui-rollout")
	admin.screenshot("03-flag")

	// The proxy serves it: on for alice, off for bob.
	p := syncedProxy(t, map[string]string{
		"UPSTREAM_URL":               h.URL + "/api",
		"UPSTREAM_API_TOKEN":         servertest.ClientToken,
		"UPSTREAM_PROXY_CLIENT_KEYS": "ui-key",
		"UPSTREAM_FETCH_INTERVAL":    "200",
	})
	proxySrv := httptest.NewServer(p)
	t.Cleanup(proxySrv.Close)
	var served func(user string) string
	servedTo := func(user string) bool { return served(user) != "" }
	served = func(user string) string {
		_, body := testutil.Call(t, "GET", proxySrv.URL+"/proxy?userId="+user, "ui-key", "")
		var out struct {
			Toggles []struct {
				Name    string
				Variant struct {
					Name    string
					Payload struct{ Value string }
				}
			}
		}
		_ = json.Unmarshal([]byte(body), &out)
		for _, tg := range out.Toggles {
			if tg.Name == "ui-rollout" {
				return tg.Variant.Name + ":" + tg.Variant.Payload.Value
			}
		}
		return ""
	}
	waitAPI(t, "the proxy to serve ui-rollout to alice", func() bool { return servedTo("alice") })
	if servedTo("bob") {
		t.Errorf("the proxy serves ui-rollout to bob, outside the constraint")
	}
	if servedTo("dave") {
		t.Errorf("the proxy serves ui-rollout to dave, outside the constraint and the segment")
	}
	if v := served("alice"); v != "blue:from-the-ui" {
		t.Errorf("alice gets variant %q, want blue with payload from-the-ui", v)
	}

	// The flags list shows it, with its switch on.
	admin.open(h.URL + "/flags?query=ui-")
	admin.waitFor("the row", `!!document.querySelector('input[data-switch$="/ui-rollout/environments/development"]:checked')`)
	admin.screenshot("04-flags")

	// The event log has the change, by the person, with its diff.
	admin.open(h.URL + "/events?feature=ui-rollout")
	admin.screenshot("05-events")
	events := eval[string](admin, `document.querySelector("ol.events").innerText`)
	for _, want := range []string{"admin switched ui-rollout on in development", "admin added a gradual rollout to ui-rollout in development", "admin created ui-rollout in project default", "Gradual rollout: 100 % of users"} {
		if !strings.Contains(events, want) {
			t.Errorf("the event log lacks %q:\n%s", want, events)
		}
	}

	// A change without the CSRF token is refused.
	noCSRF := eval[string](admin, `fetch("/api/admin/projects/default/features/ui-rollout/environments/development/off", {method: "POST"}).then(async r => r.status + " " + await r.text())`)
	if !strings.HasPrefix(noCSRF, "403 ") || !strings.Contains(noCSRF, "CSRF") {
		t.Errorf("a POST without the CSRF token answered %s", noCSRF)
	}

	// A Viewer sees no change controls and is refused when it forces one.
	h.Do(t, "POST", "/api/admin/user-admin", h.AdminToken, map[string]any{"username": "vic", "password": "vic-password", "rootRole": "Viewer"}).Want(t, 201)
	viewer := newUIBrowser(t)
	viewer.signIn(h.URL, "vic", "vic-password")
	for _, page := range []string{"/flags", "/projects/default/flags/ui-rollout", "/segments", "/context", "/projects"} {
		viewer.open(h.URL + page)
		n := eval[int](viewer, `document.querySelectorAll("main form[data-api], main [data-call], main [data-switch], main [data-add]").length`)
		if n != 0 {
			t.Errorf("a Viewer sees %d change controls on %s", n, page)
		}
	}
	viewer.open(h.URL + "/projects/default/flags/ui-rollout")
	viewer.screenshot("06-flag-as-viewer")
	forced := eval[string](viewer, `fetch("/api/admin/projects/default/features/ui-rollout/environments/development/off", {method: "POST", headers: {"X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content}}).then(async r => r.status + " " + await r.text())`)
	if !strings.HasPrefix(forced, "403 ") || !strings.Contains(forced, "UPDATE_FEATURE_ENVIRONMENT") {
		t.Errorf("a Viewer forcing a switch got %s", forced)
	}

	// The session is in the database: a second server on the same database
	// (cookies ignore the port) knows it.
	h2 := servertest.Start(t, h.DB)
	admin.open(h2.URL + "/flags")
	admin.waitFor("still signed in on a second instance", `location.pathname === "/flags" && !!document.querySelector("#who")`)
	// ... and across a real restart: that server stops and starts again at
	// the same address, and the browser's session is still known.
	addr := strings.TrimPrefix(h2.URL, "http://")
	h2.Stop()
	h2 = servertest.Start(t, h.DB, servertest.At(addr))
	admin.open(h2.URL + "/flags")
	admin.waitFor("still signed in after the restart", `location.pathname === "/flags" && !!document.querySelector("#who")`)

	// Sign out everywhere ends the admin's other sessions too.
	other := newUIBrowser(t)
	other.signIn(h2.URL, servertest.AdminUser, servertest.AdminPassword)
	admin.open(h2.URL + "/account")
	admin.screenshot("07-account")
	admin.do("sign out everywhere", chromedp.Click("#signout-everywhere"))
	admin.waitFor("the sign-in page", `location.pathname === "/login"`)
	other.open(h2.URL + "/flags")
	other.waitFor("the other session to have ended", `location.pathname === "/login"`)
	admin.open(h.URL + "/flags")
	admin.waitFor("signed out on the first server too", `location.pathname === "/login"`)

	// Every request stayed on the server: no CDN, font or script elsewhere.
	for _, b := range []*uiBrowser{admin, viewer, other} {
		for _, u := range b.urls.snapshot().urls {
			if !strings.HasPrefix(u, h.URL) && !strings.HasPrefix(u, h2.URL) && !strings.HasPrefix(u, "data:") {
				t.Errorf("the UI requested %s", u)
			}
		}
	}
}

// fillRollout opens development's strategy editor on a flag's page and
// fills a 100 % gradual rollout constrained to userId IN values; the
// caller adds more or saves.
func (b *uiBrowser) fillRollout(values string) {
	b.t.Helper()
	env := `#env-development `
	b.do("open the strategy editor", chromedp.Click(env+`details.editor summary`))
	b.set(env+`input[name="parameters.rollout"]`, "100")
	b.do("add a constraint", chromedp.Click(env+`button[data-add="constraints"]`))
	b.set(env+`[data-list="constraints"] input[name="contextName"]`, "userId")
	b.set(env+`[data-list="constraints"] select[name="operator"]`, "IN")
	b.do("type the values", chromedp.SendKeys(env+`[data-list="constraints"] input[name="values"]`, values))
}

// addStringVariant gives a flag's development environment the variant
// name with a string payload, saved through the variants editor.
func (b *uiBrowser) addStringVariant(name, payload string) {
	b.t.Helper()
	env := `#env-development `
	b.do("open the variants", chromedp.Click(env+`details.editor:nth-of-type(2) summary`), chromedp.Click(env+`form[data-body-field] button[data-add="variants"]`))
	b.do("name the variant", chromedp.SendKeys(env+`form[data-body-field] [data-list] input[name="name"]`, name),
		chromedp.SendKeys(env+`form[data-body-field] [data-list] textarea[name="payload.value"]`, payload))
	b.set(env+`form[data-body-field] [data-list] select[name="payload.type"]`, "string")
	b.do("save the variants", chromedp.Click(env+`form[data-body-field] button[type="submit"]`))
	b.waitFor("the variant saved", `document.querySelector("#env-development details.editor:nth-of-type(2) summary").textContent.includes("(1)")`)
}

func waitAPI(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
