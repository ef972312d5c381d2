package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// strategyOrder is the titles of a flag's strategies in development, in
// the order the admin API serves them.
func strategyOrder(t *testing.T, h *servertest.Harness, flag string) []string {
	t.Helper()
	var f struct {
		Environments []struct {
			Name       string
			Strategies []struct{ Title string }
		}
	}
	h.Do(t, "GET", "/api/admin/projects/default/features/"+flag, h.AdminToken, nil).Want(t, 200).JSON(t, &f)
	var out []string
	for _, e := range f.Environments {
		if e.Name == "development" {
			for _, s := range e.Strategies {
				out = append(out, s.Title)
			}
		}
	}
	return out
}

// flagEnabled reports whether flag is on in development.
func flagEnabled(t *testing.T, h *servertest.Harness, flag string) bool {
	t.Helper()
	var f struct {
		Environments []struct {
			Name    string
			Enabled bool
		}
	}
	h.Do(t, "GET", "/api/admin/projects/default/features/"+flag, h.AdminToken, nil).Want(t, 200).JSON(t, &f)
	for _, e := range f.Environments {
		if e.Name == "development" {
			return e.Enabled
		}
	}
	return false
}

// answerConfirm makes the page's next confirm() dialogs answer yes or no,
// recording the question in window.__asked.
func (b *uiBrowser) answerConfirm(yes bool) {
	b.t.Helper()
	eval[bool](b, fmt.Sprintf(`(() => { window.__asked = ""; window.confirm = (m) => { window.__asked = m; return %t }; return true })()`, yes))
}

// noSideScroll fails the test when the open page is wider than the window.
func (b *uiBrowser) noSideScroll(page string) {
	b.t.Helper()
	got := eval[string](b, `(() => { const d = document.documentElement; if (d.scrollWidth <= innerWidth) return "";
		const wide = [...document.querySelectorAll("body *")].filter(e => e.getBoundingClientRect().right > innerWidth + 1 && !(e.parentElement && e.parentElement.closest(".scroll, pre")))
			.slice(0, 5).map(e => e.tagName + (e.id ? "#" + e.id : "") + (e.className ? "." + e.className : "") + " " + Math.round(e.getBoundingClientRect().right));
		return d.scrollWidth + " > " + innerWidth + ": " + wide.join(", ") })()`)
	if got != "" {
		b.t.Errorf("%s scrolls sideways at phone width: %s", page, got)
	}
}

// unlabelled lists the open page's controls that have no accessible name
// (no label, aria-label or text).
func (b *uiBrowser) unlabelled() string {
	b.t.Helper()
	return eval[string](b, `[...document.querySelectorAll("main input:not([type=hidden]), main select, main textarea, main button, main summary")]
		.filter(e => !((e.labels && [...e.labels].some(l => l.textContent.trim())) || e.getAttribute("aria-label") || (e.tagName === "BUTTON" || e.tagName === "SUMMARY") && e.textContent.trim()))
		.map(e => e.outerHTML.slice(0, 80)).join("\n")`)
}

// TestWebUIScreens walks the screens of issue 18 in real Chromium:
// reorder a flag's strategies with the keyboard and see the API serve the
// new order; choose a flag's type from a list; revoke an API token (after
// a confirmation) and see the API refuse it; make a signal endpoint, a
// token and an action set in the UI, post a signal and see the flag
// switched and the run in the run log; a Viewer sees none of these
// controls; at phone width no main screen scrolls sideways.
func TestWebUIScreens(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	admin := newUIBrowser(t)
	admin.signIn(h.URL, servertest.AdminUser, servertest.AdminPassword)

	// A flag with three strategies in development.
	h.Do(t, "POST", "/api/admin/projects/default/features", h.AdminToken, map[string]any{"name": "ui-order", "type": "release"}).Want(t, 201)
	ids := map[string]string{}
	for _, title := range []string{"first", "second", "third"} {
		var st struct{ ID string }
		h.Do(t, "POST", "/api/admin/projects/default/features/ui-order/environments/development/strategies", h.AdminToken,
			map[string]any{"name": "default", "title": title}).Want(t, 200).JSON(t, &st)
		ids[title] = st.ID
	}

	// Move "first" down with the keyboard: focus its button, press Enter.
	admin.open(h.URL + "/projects/default/flags/ui-order")
	if n := eval[int](admin, `document.querySelectorAll("#env-development .strategy:first-child button.move").length`); n != 1 {
		t.Errorf("the first strategy has %d move buttons, want only move down", n)
	}
	label := eval[string](admin, `document.getElementById("down-`+ids["first"]+`").getAttribute("aria-label")`)
	if !strings.HasPrefix(label, "Move down") || !strings.Contains(label, "first") {
		t.Errorf("the move-down button is named %q", label)
	}
	admin.do("move first down", chromedp.Focus("#down-"+ids["first"]), chromedp.KeyEvent(kb.Enter))
	waitAPI(t, "the new order", func() bool { return strings.Join(strategyOrder(t, h, "ui-order"), ",") == "second,first,third" })
	admin.waitFor("the page to show the new order", `[...document.querySelectorAll("#env-development .strategy")].map(e => e.dataset.strategy).join() === "`+ids["second"]+","+ids["first"]+","+ids["third"]+`"`)
	admin.waitFor("focus back on the moved strategy's button", `document.activeElement && document.activeElement.id === "down-`+ids["first"]+`"`)
	admin.screenshot("19-strategy-order")
	admin.do("move third up", chromedp.Click("#up-"+ids["third"]))
	waitAPI(t, "the order after moving third up", func() bool { return strings.Join(strategyOrder(t, h, "ui-order"), ",") == "second,third,first" })
	admin.waitFor("the page to show the order after the reload", `document.readyState === "complete" && [...document.querySelectorAll("#env-development .strategy")].map(e => e.dataset.strategy).join() === "`+ids["second"]+","+ids["third"]+","+ids["first"]+`"`)

	// The flag's type is chosen from the flag types.
	options := eval[string](admin, `[...document.querySelector('form select[name="type"]').options].map(o => o.value).join()`)
	if !strings.Contains(options, "kill-switch") || !strings.Contains(options, "release") {
		t.Fatalf("the type select offers %q", options)
	}
	if v := eval[string](admin, `document.querySelector('form select[name="type"]').value`); v != "release" {
		t.Errorf("the type select shows %q, want the flag's release", v)
	}
	admin.set(`form select[name="type"]`, "kill-switch")
	admin.do("save the type", chromedp.Click(`form.inline-form button[type="submit"]`))
	waitAPI(t, "the type saved", func() bool {
		var f struct{ Type string }
		h.Do(t, "GET", "/api/admin/projects/default/features/ui-order", h.AdminToken, nil).Want(t, 200).JSON(t, &f)
		return f.Type == "kill-switch"
	})
	admin.open(h.URL + "/flags/new") // the create-flag page offers the same list
	if got := eval[string](admin, `[...document.querySelectorAll('#new-flag select#type option')].map(o => o.value).join()`); got != options {
		t.Errorf("the create-flag page offers types %q, the flag page %q", got, options)
	}

	// Revoke a token: a "no" to the confirmation keeps it, a "yes" ends it.
	var created struct{ Secret string }
	h.Do(t, "POST", "/api/admin/api-tokens", h.AdminToken, map[string]any{"tokenName": "doomed", "type": "client", "environment": "development"}).Want(t, 201).JSON(t, &created)
	h.Do(t, "GET", "/api/client/features", created.Secret, nil).Want(t, 200)
	admin.open(h.URL + "/tokens")
	revoke := `button[aria-label="Revoke token doomed"]`
	admin.answerConfirm(false)
	admin.do("revoke, then say no", chromedp.Click(revoke))
	if asked := eval[string](admin, `window.__asked`); !strings.Contains(asked, "doomed") || !strings.Contains(asked, "cannot be undone") {
		t.Errorf("the revoke confirmation asked %q", asked)
	}
	h.Do(t, "GET", "/api/client/features", created.Secret, nil).Want(t, 200)
	admin.answerConfirm(true)
	admin.do("revoke", chromedp.Click(revoke))
	admin.waitFor("the token gone from the list", `document.readyState === "complete" && !document.querySelector('`+revoke+`')`)
	admin.screenshot("20-tokens")
	h.Do(t, "GET", "/api/client/features", created.Secret, nil).Want(t, 401)

	// A personal access token on the account page: made with an expiry,
	// its secret shown once, it acts as the person, and deleting it ends it.
	admin.open(h.URL + "/account")
	admin.do("describe the token", chromedp.SendKeys("#pat-desc", "deploy script"))
	admin.set("#pat-expires", time.Now().AddDate(0, 1, 0).Format("2006-01-02"))
	admin.do("create the token", chromedp.Click(`form[data-api$="/api/admin/user/tokens"] button[type="submit"]`))
	admin.waitFor("the secret", `document.querySelector("#pat-secret").textContent.startsWith("user:")`)
	pat := eval[string](admin, `document.querySelector("#pat-secret").textContent`)
	// Only a person's token has personal tokens to list: it acts as them.
	if got := string(h.Do(t, "GET", "/api/admin/user/tokens", pat, nil).Want(t, 200).Body); !strings.Contains(got, "deploy script") {
		t.Errorf("the personal token lists the tokens %s", got)
	}
	admin.open(h.URL + "/account")
	if got := eval[string](admin, `document.querySelector("#pats").innerText`); !strings.Contains(got, "deploy script") || strings.Contains(got, pat) {
		t.Errorf("the account page lists tokens as %q (want the description, never the secret)", got)
	}
	admin.screenshot("28-account-tokens")
	admin.answerConfirm(true)
	admin.do("delete the token", chromedp.Click(`button[aria-label="Delete token deploy script"]`))
	admin.waitFor("the token gone", `document.readyState === "complete" && !document.querySelector('button[aria-label="Delete token deploy script"]')`)
	h.Do(t, "GET", "/api/admin/user/tokens", pat, nil).Want(t, 401)

	// A signal endpoint and its token, made on the signals screen.
	admin.do("open signals from the menu", chromedp.Click(`nav[aria-label="Main"] a[href="/signals"]`))
	admin.waitFor("the signals screen", `location.pathname === "/signals" && !!document.querySelector("#se-name")`)
	admin.do("name the endpoint", chromedp.SendKeys("#se-name", "alerts"), chromedp.SendKeys("#se-desc", "from the pager"))
	admin.do("create the endpoint", chromedp.Click(`#new-endpoint button[type="submit"]`))
	admin.waitFor("the endpoint", `!!document.querySelector("#endpoint-alerts")`)
	ep := `#endpoint-alerts `
	admin.do("name the token", chromedp.SendKeys(ep+`form[data-then="show-secret"] input[name="name"]`, "pager"), chromedp.Click(ep+`form[data-then="show-secret"] button[type="submit"]`))
	admin.waitFor("the token's secret", `!document.querySelector("#endpoint-alerts [data-secret]").hidden && document.querySelector("#endpoint-alerts [data-secret] output").textContent.length > 10`)
	secret := eval[string](admin, `document.querySelector("#endpoint-alerts [data-secret] output").textContent`)
	if eval[int](admin, `document.querySelectorAll("#endpoint-alerts [data-secret] button[data-copy]").length`) != 1 {
		t.Error("the token's secret has no copy button")
	}
	admin.screenshot("21-signal-endpoint")
	endpointEnabled := func() bool {
		var list struct{ SignalEndpoints []struct{ Enabled bool } }
		h.Do(t, "GET", "/api/admin/signal-endpoints", h.AdminToken, nil).Want(t, 200).JSON(t, &list)
		return len(list.SignalEndpoints) == 1 && list.SignalEndpoints[0].Enabled
	}
	admin.do("switch the endpoint off", chromedp.Click(ep+`input[data-switch]`))
	waitAPI(t, "the endpoint disabled", func() bool { return !endpointEnabled() })
	admin.do("switch the endpoint on", chromedp.Click(ep+`input[data-switch]`))
	waitAPI(t, "the endpoint enabled", endpointEnabled)

	// An action set: when alerts gets severity=critical, switch ui-order off in development.
	h.Do(t, "POST", "/api/admin/projects/default/features/ui-order/environments/development/on", h.AdminToken, nil).Want(t, 200)
	admin.do("open action sets", chromedp.Click(`nav.tabs a[href="/actions"]`))
	admin.waitFor("the action sets screen", `location.pathname === "/actions"`)
	admin.do("make a service account", chromedp.Click(`form[data-api$="/api/admin/service-account"] button[type="submit"]`))
	admin.waitFor("the new action set form", `!!document.querySelector('#new-action-set select[name="actorId"] option')`)
	form := `#new-action-set `
	admin.do("name the action set", chromedp.SendKeys(form+`input[name="name"]`, "kill on critical"))
	admin.do("add a filter", chromedp.Click(form+`button[data-add="match.payload"]`))
	admin.do("the filter", chromedp.SendKeys(form+`input[name="property"]`, "severity"), chromedp.SendKeys(form+`input[name="values"]`, "critical"))
	shown := func() string {
		return eval[string](admin, `[...document.querySelectorAll('#new-action-set [data-list="actions"] input')].filter(i => i.offsetParent !== null).map(i => i.name).join()`)
	}
	admin.set(form+`select[name="action"]`, "TOGGLE_FEATURES_OFF_BY_TAG")
	if got := shown(); got != "executionParams.tag" {
		t.Errorf("for an action by tag the editor shows %q", got)
	}
	admin.set(form+`select[name="action"]`, "TOGGLE_FEATURE_OFF")
	if got := shown(); got != "executionParams.featureName" {
		t.Errorf("for a flag action the editor shows %q", got)
	}
	admin.do("the flag", chromedp.SendKeys(form+`input[name="executionParams.featureName"]`, "ui-order"))
	admin.set(form+`select[name="executionParams.environment"]`, "development")
	admin.do("create the action set", chromedp.Click(form+`button[type="submit"]`))
	admin.waitFor("the action set", `[...document.querySelectorAll("article.card h2")].some(h => h.textContent === "kill on critical")`)
	admin.screenshot("22-action-sets")
	summary := eval[string](admin, `document.querySelector("article.card").innerText`)
	for _, want := range []string{"alerts", "severity IN critical", "Switch a flag off", "ui-order", "development"} {
		if !strings.Contains(summary, want) {
			t.Errorf("the action set reads %q, without %q", summary, want)
		}
	}

	// Edit it: a second filter value, kept through the editor's round trip.
	admin.do("open the editor", chromedp.Click(`article.card details.editor summary`))
	admin.set(`article.card input[name="values"]`, "critical, fatal")
	admin.do("save", chromedp.Click(`article.card form button[type="submit"]`))
	admin.waitFor("the edit shown", `document.readyState === "complete" && document.querySelector("article.card").innerText.includes("severity IN critical, fatal")`)

	// A signal that does not match leaves the flag; one that matches switches it off.
	post := func(payload string) {
		status := 0
		// The endpoint takes one signal a second: a 429 is tried again.
		waitAPI(t, "the signal accepted", func() bool {
			req, _ := http.NewRequest("POST", h.URL+"/api/signal-endpoint/alerts", bytes.NewBufferString(payload))
			req.Header.Set("Authorization", secret)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			status = res.StatusCode
			return status != http.StatusTooManyRequests
		})
		if status/100 != 2 {
			t.Fatalf("posting a signal answered %d", status)
		}
	}
	post(`{"severity":"low"}`)
	post(`{"severity":"fatal"}`)
	waitAPI(t, "ui-order off after the signal", func() bool { return !flagEnabled(t, h, "ui-order") })

	// The run in the run log.
	admin.do("open the run log", chromedp.Click(`nav.tabs a[href^="/actions/runs"]`))
	admin.waitFor("the run", `!!document.querySelector("#runs li.run")`)
	if n := eval[int](admin, `document.querySelectorAll("#runs li.run").length`); n != 1 {
		t.Errorf("the run log lists %d runs, want 1 (the low-severity signal matches no filter)", n)
	}
	run := eval[string](admin, `document.querySelector("#runs li.run").innerText`)
	for _, want := range []string{"kill on critical", "success", "Switch a flag off (ui-order in development): success"} {
		if !strings.Contains(run, want) {
			t.Errorf("the run log reads %q, without %q", run, want)
		}
	}
	admin.screenshot("23-run-log")
	admin.open(h.URL + "/signals")
	if got := eval[string](admin, `document.querySelector("#endpoint-alerts").innerText`); !strings.Contains(got, `"severity":"fatal"`) || !strings.Contains(got, "token pager") {
		t.Errorf("the endpoint's latest signals read %q", got)
	}

	// Every control of the screens has a name.
	for _, page := range []string{"/projects/default/flags/ui-order", "/tokens", "/signals", "/actions", "/actions/runs"} {
		admin.open(h.URL + page)
		if got := admin.unlabelled(); got != "" {
			t.Errorf("controls without a name on %s:\n%s", page, got)
		}
	}

	// A Viewer sees none of the change controls, nor the Signals link.
	h.Do(t, "POST", "/api/admin/user-admin", h.AdminToken, map[string]any{"username": "vera", "password": "vera-password", "rootRole": "Viewer"}).Want(t, 201)
	viewer := newUIBrowser(t)
	viewer.signIn(h.URL, "vera", "vera-password")
	if n := eval[int](viewer, `document.querySelectorAll('nav[aria-label="Main"] a[href="/signals"]').length`); n != 0 {
		t.Error("a Viewer's menu has the Signals link")
	}
	for _, page := range []string{"/projects/default/flags/ui-order", "/tokens", "/signals", "/actions", "/actions/runs"} {
		viewer.open(h.URL + page)
		n := eval[int](viewer, `document.querySelectorAll("main form[data-api], main [data-call], main [data-switch], main [data-add], main button.move").length`)
		if n != 0 {
			t.Errorf("a Viewer sees %d change controls on %s", n, page)
		}
	}

	// Delete the action set and the endpoint, each after a confirmation.
	admin.open(h.URL + "/actions")
	admin.answerConfirm(true)
	admin.do("delete the action set", chromedp.Click(`button[data-method="DELETE"][data-call*="/actions/"]`))
	admin.waitFor("the action set gone", `document.readyState === "complete" && !document.querySelector("article.card")`)
	if n := len(h.Do(t, "GET", "/api/admin/projects/default/actions", h.AdminToken, nil).Want(t, 200).Map(t)["actions"].([]any)); n != 0 {
		t.Errorf("%d action sets after deleting", n)
	}
	admin.open(h.URL + "/signals")
	admin.answerConfirm(false)
	admin.do("delete the endpoint, then say no", chromedp.Click(`#endpoint-alerts button.danger[data-call$="/signal-endpoints/`+eval[string](admin, `document.querySelector("#endpoint-alerts input[data-switch]").dataset.switch.split("/").pop()`)+`"]`))
	if asked := eval[string](admin, `window.__asked`); !strings.Contains(asked, "Delete the signal endpoint alerts") {
		t.Errorf("deleting the endpoint asked %q", asked)
	}
	if n := len(h.Do(t, "GET", "/api/admin/signal-endpoints", h.AdminToken, nil).Want(t, 200).Map(t)["signalEndpoints"].([]any)); n != 1 {
		t.Errorf("%d endpoints after saying no to the deletion", n)
	}

	// Phone width: no main screen scrolls sideways.
	admin.do("phone width", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	for _, page := range []string{"/flags", "/flags/new", "/projects/default/flags/ui-order", "/events", "/segments", "/context", "/tokens", "/projects", "/users",
		"/signals", "/actions", "/actions/runs", "/account"} {
		admin.open(h.URL + page)
		admin.noSideScroll(page)
	}
	admin.open(h.URL + "/flags")
	admin.screenshot("24-flags-phone")
	admin.open(h.URL + "/actions")
	admin.screenshot("27-actions-phone")
	admin.open(h.URL + "/projects/default/flags/ui-order")
	admin.screenshot("25-flag-phone")
	// What the phone shows first, without scrolling.
	if png, err := chromedp.Run(admin.ctx, chromedp.CaptureScreenshot()); err == nil {
		_ = os.WriteFile(filepath.Join(screenshotDir, "26-flag-phone-first-screen.png"), png, 0o644)
	}
}
