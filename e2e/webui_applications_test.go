package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestWebUIApplications walks the applications view in real Chromium: SDKs
// of two applications report (a server SDK over the client API, a browser
// over the frontend API); the Applications screen lists both and its
// search narrows the list as one types; an application's page shows its
// instances with their SDK versions and the flags it asked for, and leads
// to a flag, whose page says which applications and SDK versions asked
// for it in the last hour and day. At phone width neither screen scrolls
// sideways, and every control has a name.
func TestWebUIApplications(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	for _, name := range []string{"checkout", "search"} {
		h.Do(t, "POST", "/api/admin/projects/default/features", h.AdminToken, map[string]any{"name": name}).Want(t, 201)
	}
	now := time.Now().UTC().Format(time.RFC3339)
	report := func(path, token, app, instance, sdk string, status int, flags ...string) {
		toggles := map[string]any{}
		for _, f := range flags {
			toggles[f] = map[string]any{"yes": 3, "no": 1}
		}
		h.Do(t, "POST", path, token, map[string]any{"appName": app, "instanceId": instance, "sdkVersion": sdk,
			"bucket": map[string]any{"start": now, "stop": now, "toggles": toggles}}).Want(t, status)
	}
	h.Do(t, "POST", "/api/client/register", h.ClientToken, map[string]any{"appName": "shop", "instanceId": "shop-1", "sdkVersion": "unleash-client-go:4.5.0",
		"interval": 15000, "started": now, "strategies": []string{"default", "flexibleRollout"}}).Want(t, 202)
	report("/api/client/metrics", h.ClientToken, "shop", "shop-1", "unleash-client-go:4.5.0", 202, "checkout", "search")
	report("/api/client/metrics", h.ClientToken, "shop", "shop-2", "unleash-client-go:4.6.0", 202, "checkout")
	report("/api/frontend/client/metrics", h.FrontendToken, "web", "browser-1", "unleash-client-js:3.7.0", 200, "checkout")
	h.FlushUsage(t)

	b := newUIBrowser(t)
	b.signIn(h.URL, servertest.AdminUser, servertest.AdminPassword)
	b.do("open Applications", chromedp.Click(`nav a[href="/applications"]`))
	b.waitFor("the applications list", `location.pathname === "/applications" && document.querySelectorAll("#application-rows tbody tr").length === 2`)
	rows := eval[string](b, `[...document.querySelectorAll("#application-rows tbody tr")].map(r => r.innerText.replace(/\s+/g, " ").trim()).join("\n")`)
	if !strings.Contains(rows, "shop default: development default, flexibleRollout") || !strings.Contains(rows, "web default: development") {
		t.Errorf("the list shows:\n%s", rows)
	}
	b.screenshot("30-applications")

	// Typing narrows the list without a page load (htmx), and the address
	// keeps the search.
	b.do("search", chromedp.SendKeys("#application-search", "we"))
	b.waitFor("only web", `[...document.querySelectorAll("#application-rows tbody tr a")].map(a => a.textContent).join() === "web" && location.search === "?query=we"`)
	b.set("#application-search", "")
	b.waitFor("both again", `document.querySelectorAll("#application-rows tbody tr").length === 2`)

	b.do("open shop", chromedp.Click(`#application-rows a[href="/applications/shop"]`))
	b.waitFor("shop's page", `location.pathname === "/applications/shop" && !!document.querySelector("table.instances")`)
	instances := eval[string](b, `[...document.querySelectorAll("table.instances tbody tr")].map(r => [...r.cells].slice(0, 4).map(c => c.innerText.trim()).join(" ")).join("\n")`)
	if instances != "shop-1 unleash-client-go:4.5.0 backend development\nshop-2 unleash-client-go:4.6.0 backend development" &&
		instances != "shop-2 unleash-client-go:4.6.0 backend development\nshop-1 unleash-client-go:4.5.0 backend development" {
		t.Errorf("shop's instances:\n%s", instances)
	}
	if flags := eval[string](b, `[...document.querySelectorAll("ul.seen-flags a")].map(a => a.textContent).join()`); flags != "checkout,search" {
		t.Errorf("shop asked for %q, want checkout,search", flags)
	}
	b.screenshot("31-application")

	b.do("open checkout", chromedp.Click(`ul.seen-flags a[href="/projects/default/flags/checkout"]`))
	b.waitFor("checkout's page", `location.pathname === "/projects/default/flags/checkout" && !!document.getElementById("apps-hour")`)
	table := func(heading string) string {
		return eval[string](b, `(() => { const t = document.getElementById("`+heading+`").nextElementSibling;
			return t && t.tagName === "TABLE" ? [...t.tBodies[0].rows].map(r => [...r.cells].map(c => c.innerText.trim()).join(" | ")).join("\n") : "" })()`)
	}
	want := "shop | development | unleash-client-go:4.5.0, unleash-client-go:4.6.0 | 6 | 2\nweb | development | unleash-client-js:3.7.0 | 3 | 1"
	if got := table("apps-hour"); got != want {
		t.Errorf("checkout's applications in the last hour:\n%s\nwant\n%s", got, want)
	}
	if got := table("apps-day"); got != want {
		t.Errorf("checkout's applications in the last day:\n%s\nwant\n%s", got, want)
	}
	b.screenshot("32-flag-applications")
	b.do("back to web", chromedp.Click(`table.flag-apps a[href="/applications/web"]`))
	b.waitFor("web's page", `location.pathname === "/applications/web" && document.querySelector("table.instances tbody tr td").innerText === "browser-1"`)

	b.do("phone width", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	for _, page := range []string{"/applications", "/applications/shop", "/projects/default/flags/checkout"} {
		b.open(h.URL + page)
		b.noSideScroll(page)
		if u := b.unlabelled(); u != "" {
			t.Errorf("%s has controls without a name:\n%s", page, u)
		}
	}
}
