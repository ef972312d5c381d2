package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	cdplog "github.com/chromedp/cdproto/log"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// consoleLog collects what a page wrote to the console as an error, its
// uncaught exceptions, and the browser's own error entries (a refused
// script, a failed request).
type consoleLog struct {
	mu     sync.Mutex
	errors []string
}

func (c *consoleLog) record(ev any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch e := ev.(type) {
	case *cdpruntime.EventConsoleAPICalled:
		if e.Type != cdpruntime.ConsoleAPICalledTypeError {
			return
		}
		var parts []string
		for _, a := range e.Args {
			if a.Description != "" {
				parts = append(parts, a.Description)
			} else {
				parts = append(parts, string(a.Value))
			}
		}
		c.errors = append(c.errors, "console.error: "+strings.Join(parts, " "))
	case *cdpruntime.EventExceptionThrown:
		text := e.ExceptionDetails.Text
		if ex := e.ExceptionDetails.Exception; ex != nil {
			text += " " + ex.Description
		}
		c.errors = append(c.errors, "exception: "+text)
	case *cdplog.EventEntryAdded:
		if e.Entry.Level == cdplog.EntryLevelError {
			c.errors = append(c.errors, "browser: "+e.Entry.Text+" "+e.Entry.URL)
		}
	}
}

// take returns the errors recorded since the last call.
func (c *consoleLog) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.errors
	c.errors = nil
	return out
}

// axeSerious runs axe-core (already injected) on the open page and
// describes its violations of impact serious or critical, one a line.
func (b *uiBrowser) axeSerious() string {
	b.t.Helper()
	return eval[string](b, `axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations
		.filter(v => v.impact === "serious" || v.impact === "critical")
		.map(v => v.impact + " " + v.id + ": " + v.help + " — " + v.nodes.slice(0, 4).map(n => n.target.join(" ")).join(" | "))
		.join("\n"))`)
}

// TestWebUIDesign walks every screen of the web UI in real Chromium at a
// desk's width (light and dark scheme) and a phone's: axe-core finds no
// serious or critical accessibility violation, nothing is written to the
// console as an error, and a screenshot of each is saved for review. On
// a fresh server every list shows an empty state that says what it is
// for; "No flags match." only when a filter is set. At phone width the
// flags list is one card per flag, its switch works, and the navigation
// folds behind a menu button.
func TestWebUIDesign(t *testing.T) {
	axeSrc, err := os.ReadFile(filepath.Join(testutil.NodeModules(t, "axe-core"), "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	h := servertest.Start(t, servertest.NewSQLite(t))
	b := newUIBrowser(t)
	console := &consoleLog{}
	if err := chromedp.Listen(b.ctx, console.record); err != nil {
		t.Fatal(err)
	}
	b.signIn(h.URL, servertest.AdminUser, servertest.AdminPassword)

	// First screens (the harness made API tokens already): each list says what it is for and offers the first action.
	for _, page := range []string{"/flags", "/segments", "/groups", "/integrations", "/signals", "/actions", "/change-requests", "/applications"} {
		b.open(h.URL + page)
		got := eval[string](b, `(() => { const e = document.querySelector("main .empty"); return e ? e.innerText : "" })()`)
		if len(got) < 40 {
			t.Errorf("%s on a fresh server shows no empty state that explains the list (got %q)", page, got)
		}
	}
	b.open(h.URL + "/flags")
	if got := eval[string](b, `document.querySelector("#flags-empty a.button") ? document.querySelector("#flags-empty a.button").textContent : ""`); got != "Create your first flag" {
		t.Errorf("the empty flags list offers %q", got)
	}
	if eval[bool](b, `document.querySelector("main").innerText.includes("No flags match")`) {
		t.Error(`the empty flags list, unfiltered, says "No flags match."`)
	}
	b.open(h.URL + "/flags?query=nothing-like-this")
	if !eval[bool](b, `document.querySelector("main").innerText.includes("No flags match") && !document.querySelector("#flags-empty")`) {
		t.Error(`a filter that matches nothing does not say "No flags match."`)
	}
	b.screenshot("design-first-flags")

	// Something on every screen.
	h.Do(t, "POST", "/api/admin/projects/default/features", h.AdminToken, map[string]any{"name": "checkout-redesign", "type": "release", "description": "The new checkout"}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/projects/default/features", h.AdminToken, map[string]any{"name": "search-v2", "type": "experiment"}).Want(t, 201)
	for _, f := range []struct{ name, typ, desc, tag string }{
		{"payments-kill-switch", "kill-switch", "Stops card payments at once", "team:payments"},
		{"dark-mode", "release", "Follow the system's colour scheme", "team:web"},
		{"recommendations-ab", "experiment", "Two ranking models, half the users each", "team:search"},
	} {
		h.Do(t, "POST", "/api/admin/projects/default/features", h.AdminToken, map[string]any{"name": f.name, "type": f.typ, "description": f.desc}).Want(t, 201)
		typ, value, _ := strings.Cut(f.tag, ":")
		h.Do(t, "POST", "/api/admin/tag-types", h.AdminToken, map[string]any{"name": typ}) // 409 once it exists
		h.Do(t, "POST", "/api/admin/features/"+f.name+"/tags", h.AdminToken, map[string]any{"type": typ, "value": value}).Want(t, 201)
	}
	h.Do(t, "POST", "/api/admin/projects/default/features/payments-kill-switch/environments/production/on", h.AdminToken, nil).Want(t, 200)
	h.Do(t, "POST", "/api/admin/projects/default/features/dark-mode/environments/development/on", h.AdminToken, nil).Want(t, 200)
	h.Do(t, "POST", "/api/admin/projects/default/features/checkout-redesign/environments/development/strategies", h.AdminToken, map[string]any{
		"name": "flexibleRollout", "parameters": map[string]any{"rollout": "50", "stickiness": "default", "groupId": "checkout-redesign"},
		"constraints": []any{map[string]any{"contextName": "region", "operator": "IN", "values": []string{"eu", "uk"}}},
	}).Want(t, 200)
	h.Do(t, "PUT", "/api/admin/projects/default/features/checkout-redesign/environments/development/variants", h.AdminToken, []any{
		map[string]any{"name": "blue", "weight": 500, "weightType": "variable", "stickiness": "default", "payload": map[string]any{"type": "json", "value": `{"color":"blue"}`}},
		map[string]any{"name": "green", "weight": 500, "weightType": "variable", "stickiness": "default"},
	}).Want(t, 200)
	h.Do(t, "POST", "/api/admin/context", h.AdminToken, map[string]any{"name": "region", "legalValues": []any{map[string]any{"value": "eu"}, map[string]any{"value": "uk"}, map[string]any{"value": "us"}}}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "beta", "constraints": []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"1", "2"}}}}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/api-tokens", h.AdminToken, map[string]any{"tokenName": "web", "type": "client", "environment": "development"}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/user-admin", h.AdminToken, map[string]any{"username": "vera", "password": "vera-password", "rootRole": "Viewer"}).Want(t, 201)

	h.Do(t, "POST", "/api/admin/context", h.AdminToken, map[string]any{"name": "plan"}).Want(t, 201)

	// Visual weight matches risk: a built-in or used context field offers
	// no Delete, and says where it is used; an unused custom one does.
	b.open(h.URL + "/context")
	if got := eval[string](b, `document.querySelector("#field-region .uses").innerText`); !strings.Contains(got, "flag checkout-redesign in development") {
		t.Errorf("the region field says it is used by %q", got)
	}
	for _, field := range []string{"region", "userId", "environment"} {
		if eval[int](b, `document.querySelectorAll("#field-`+field+` button").length`) != 0 {
			t.Errorf("the context field %s (built in or in use) offers a button", field)
		}
	}
	if eval[int](b, `document.querySelectorAll('#field-plan button[aria-label="Delete context field plan"]').length`) != 1 {
		t.Error("the unused custom field plan offers no Delete")
	}
	// Deactivate and Reset password are not solid, and not on the admin's own row.
	b.open(h.URL + "/users")
	if got := eval[string](b, `[...document.querySelectorAll("main tr")].filter(tr => tr.querySelector(".badge") && tr.querySelector(".badge").textContent === "you").map(tr => tr.querySelectorAll("button").length).join()`); got != "0" {
		t.Errorf("the admin's own row has %q buttons, want none", got)
	}
	solid := eval[string](b, `[...document.querySelectorAll("main button")].filter(x => /Deactivate|Reset password|Delete/.test(x.textContent)).filter(x => getComputedStyle(x).backgroundColor === getComputedStyle(document.querySelector("#new-user button[type=submit]")).backgroundColor).map(x => x.textContent).join()`)
	if solid != "" {
		t.Errorf("risky buttons look like the primary one: %s", solid)
	}

	// A flag's archive is behind its More actions menu, with a
	// confirmation that names the flag.
	b.open(h.URL + "/projects/default/flags/search-v2")
	archive := `#flag-danger button.danger[data-method="DELETE"]`
	if eval[bool](b, `document.querySelector('`+archive+`').checkVisibility()`) {
		t.Error("the Archive button shows before the More actions menu is opened")
	}
	b.do("open More actions", chromedp.Click(`#flag-danger summary`))
	b.answerConfirm(false)
	b.do("archive, then say no", chromedp.Click(archive))
	if asked := eval[string](b, `window.__asked`); !strings.Contains(asked, "search-v2") {
		t.Errorf("archiving asked %q, without the flag's name", asked)
	}
	h.Do(t, "GET", "/api/admin/projects/default/features/search-v2", h.AdminToken, nil).Want(t, 200)

	screens := []struct{ name, path string }{
		{"flags", "/flags"}, {"new-flag", "/flags/new"}, {"flag", "/projects/default/flags/checkout-redesign"},
		{"change-requests", "/change-requests"}, {"events", "/events"}, {"segments", "/segments"}, {"context", "/context"},
		{"playground", "/playground?context=%7B%22userId%22%3A%221%22%7D&environment=development"},
		{"tokens", "/tokens"}, {"projects", "/projects"}, {"project-access", "/projects/default/access"},
		{"applications", "/applications"}, {"signals", "/signals"}, {"actions", "/actions"}, {"action-runs", "/actions/runs"},
		{"integrations", "/integrations"}, {"users", "/users"}, {"groups", "/groups"}, {"roles", "/roles"}, {"sso", "/sso"},
		{"account", "/account"},
	}
	walk := func(label string) {
		for _, s := range screens {
			b.open(h.URL + s.path)
			b.waitFor("the page's scripts", `!!window.htmx`)
			if !eval[bool](b, `typeof axe !== "undefined"`) {
				eval[bool](b, string(axeSrc)+"\n;true")
			}
			if v := b.axeSerious(); v != "" {
				t.Errorf("%s at %s: axe finds\n%s", s.path, label, v)
			}
			b.screenshot("design-" + label + "-" + s.name)
			if errs := console.take(); len(errs) > 0 {
				t.Errorf("%s at %s writes errors to the console:\n%s", s.path, label, strings.Join(errs, "\n"))
			}
		}
	}
	console.take()
	walk("1280")
	if os.Getenv("BUNTING_README_SCREENSHOTS") == "1" {
		b.open(h.URL + "/flags")
		png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "docs", "images", "webui-flags.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	scheme := func(v string) chromedp.Action[chromedp.Void] {
		return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}})
			return err
		})
	}
	b.do("dark scheme", scheme("dark"))
	walk("1280-dark")
	b.do("light scheme", scheme("light"))
	b.do("phone width", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	walk("390")

	// The phone: the navigation folds behind an accessible menu button.
	b.open(h.URL + "/flags")
	menu := `button[aria-controls="main-nav"]`
	if eval[bool](b, `document.querySelector("#main-nav").offsetParent !== null`) {
		t.Error("at 390 px the navigation is open before the menu button is pressed")
	}
	if got := eval[string](b, `document.querySelector('`+menu+`').getAttribute("aria-expanded")`); got != "false" {
		t.Errorf("the closed menu button says aria-expanded=%q", got)
	}
	b.do("open the menu", chromedp.Click(menu))
	if !eval[bool](b, `document.querySelector("#main-nav").offsetParent !== null && document.querySelector('`+menu+`').getAttribute("aria-expanded") === "true"`) {
		t.Error("the menu button does not open the navigation")
	}
	b.screenshot("design-390-menu-open")
	b.do("close the menu", chromedp.Click(menu))

	// The flags list is one card per flag, with a working switch per environment.
	cards := eval[string](b, `[...document.querySelectorAll("table.flag-list tbody tr")].map(tr => {
		const r = tr.getBoundingClientRect(); return tr.querySelector("td.name a").textContent + ":" + Math.round(r.width) + ":" + tr.querySelectorAll("input[data-switch]").length }).join(",")`)
	for _, c := range strings.Split(cards, ",") {
		var name string
		var width, switches int
		if _, err := fmt.Sscanf(strings.ReplaceAll(c, ":", " "), "%s %d %d", &name, &width, &switches); err != nil || width < 300 || width > 390 || switches != 2 {
			t.Errorf("at 390 px the flag card %q is not a full-width card with a switch per environment (want name:width:2)", c)
		}
	}
	if eval[bool](b, `getComputedStyle(document.querySelector("table.flag-list thead")).position !== "absolute"`) {
		t.Error("at 390 px the flags list still shows its table header")
	}
	sw := `input[aria-label="checkout-redesign in development"]`
	b.do("switch it on", chromedp.Click(sw))
	waitAPI(t, "checkout-redesign on in development", func() bool { return flagEnabled(t, h, "checkout-redesign") })
	b.screenshot("design-390-flags-switched")
	if errs := console.take(); len(errs) > 0 {
		t.Errorf("the phone journey writes errors to the console:\n%s", strings.Join(errs, "\n"))
	}

	// The everyday tasks take no more actions than in Unleash.
	b.do("desk width", chromedp.EmulateViewport(1280, 900))
	counts := countActions(t, h, b)
	if os.Getenv("BUNTING_README_SCREENSHOTS") == "1" {
		// The last task leaves the playground explaining its answers.
		png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", "docs", "images", "webui-playground.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, u := range unleashActions {
		if i >= len(counts) {
			break
		}
		t.Logf("%-40s Bunting %2d  Unleash %2d", u.task, counts[i], u.count)
		if counts[i] > u.count {
			t.Errorf("%s takes %d actions, Unleash %d", u.task, counts[i], u.count)
		}
	}
	if errs := console.take(); len(errs) > 0 {
		t.Errorf("the tasks write errors to the console:\n%s", strings.Join(errs, "\n"))
	}
}

// unleashActions are the actions (clicks, fields, choices) each task takes
// in Unleash 8.2.0's UI, as issue 27 counts them.
var unleashActions = []struct {
	task  string
	count int
}{
	{"create a flag", 6},
	{"50 % rollout where region is eu or uk", 33},
	{"switch it on in development", 1},
	{"two variants with a JSON payload", 16},
	{"find who changed it", 1},
	{"why is user 1 in us off", 13},
}

// countedEnv is what the task journey checks of the flag's development
// environment through the admin API.
type countedEnv struct {
	Name       string
	Enabled    bool
	Strategies []struct {
		Name        string
		Parameters  map[string]string
		Constraints []struct {
			ContextName, Operator string
			Values                []string
		}
	}
	Variants []struct {
		Name    string
		Payload *struct{ Type, Value string }
	}
}

// actionCounter does what a person does in the UI and counts it: a click,
// a field typed into, a choice from a list is one action each.
type actionCounter struct {
	b *uiBrowser
	n int
}

func (c *actionCounter) click(sel string) {
	c.b.t.Helper()
	c.n++
	c.b.do("click "+sel, chromedp.Click(sel))
}

func (c *actionCounter) typeIn(sel, text string) {
	c.b.t.Helper()
	c.n++
	c.b.do("type into "+sel, chromedp.SendKeys(sel, text))
}

func (c *actionCounter) choose(sel, value string) {
	c.b.t.Helper()
	c.n++
	c.b.set(sel, value)
}

// countActions does the six everyday tasks in the web UI at a desk's
// width, each from where the last left off, and returns the actions each
// took; each task's outcome is checked through the admin API.
func countActions(t *testing.T, h *servertest.Harness, b *uiBrowser) []int {
	var counts []int
	c := &actionCounter{b: b}
	done := func() { counts = append(counts, c.n); c.n = 0 }
	env := `#env-development `
	b.open(h.URL + "/flags")

	// Create a flag (project and type as they come).
	c.click(`nav[aria-label="Main"] a[href="/flags/new"]`)
	b.waitFor("the new-flag form", `!!document.querySelector("#new-flag #name")`)
	c.typeIn("#name", "counted")
	c.click(`#new-flag button[type="submit"]`)
	b.waitFor("the flag page", `location.pathname === "/projects/default/flags/counted" && document.readyState === "complete"`)
	done()

	// A 50 % gradual rollout where region is eu or uk, in development.
	c.click(env + `details.editor summary`)
	c.click(env + `form.strategy-form button[data-add="constraints"]`)
	c.typeIn(env+`form.strategy-form [data-list="constraints"] input[name="contextName"]`, "region")
	c.typeIn(env+`form.strategy-form [data-list="constraints"] input[name="values"]`, "eu, uk")
	c.click(env + `form.strategy-form button[type="submit"]`)
	b.waitFor("the strategy", `document.readyState === "complete" && !!document.querySelector("#env-development .strategy")`)
	get := func() countedEnv {
		var f struct{ Environments []countedEnv }
		h.Do(t, "GET", "/api/admin/projects/default/features/counted", h.AdminToken, nil).Want(t, 200).JSON(t, &f)
		for _, e := range f.Environments {
			if e.Name == "development" {
				return e
			}
		}
		return countedEnv{}
	}
	if d := get(); len(d.Strategies) != 1 || d.Strategies[0].Name != "flexibleRollout" || d.Strategies[0].Parameters["rollout"] != "50" ||
		len(d.Strategies[0].Constraints) != 1 || fmt.Sprint(d.Strategies[0].Constraints[0]) != "{region IN [eu uk]}" {
		t.Errorf("the rollout saved as %+v", d.Strategies)
	}
	done()

	// Switch it on in development.
	c.click(env + `input[data-switch]`)
	waitAPI(t, "counted on in development", func() bool { return get().Enabled })
	done()

	// Two variants, one with a JSON payload.
	b.open(h.URL + "/projects/default/flags/counted")
	c.click(env + `details.editor:nth-of-type(2) summary`)
	c.click(env + `form[data-body-field] button[data-add="variants"]`)
	c.typeIn(env+`[data-list="variants"] [data-item]:nth-child(1) input[name="name"]`, "blue")
	c.choose(env+`[data-list="variants"] [data-item]:nth-child(1) select[name="payload.type"]`, "json")
	c.typeIn(env+`[data-list="variants"] [data-item]:nth-child(1) textarea[name="payload.value"]`, `{"color":"blue"}`)
	c.click(env + `form[data-body-field] button[data-add="variants"]`)
	c.typeIn(env+`[data-list="variants"] [data-item]:nth-child(2) input[name="name"]`, "green")
	c.click(env + `form[data-body-field] button[type="submit"]`)
	waitAPI(t, "two variants", func() bool { return len(get().Variants) == 2 })
	if v := get().Variants; v[0].Payload == nil || v[0].Payload.Type != "json" {
		t.Errorf("the variants saved as %+v", v)
	}
	done()

	// Find who changed it, from the flags list.
	b.open(h.URL + "/flags")
	c.click(`a[href="/projects/default/flags/counted"]`)
	b.waitFor("the history", `document.readyState === "complete" && [...document.querySelectorAll("#hist-h ~ ol .event .event-sentence")].some(e => e.textContent.startsWith("admin "))`)
	done()

	// Why is user 1 in us off?
	c.click(`nav[aria-label="Main"] a[href="/playground"]`)
	b.waitFor("the playground", `!!document.querySelector("#pg-userId")`)
	c.typeIn("#pg-userId", "1")
	region := eval[string](b, `(() => { const l = [...document.querySelectorAll("#pg-form label code")].find(c => c.textContent === "region"); return l ? "#" + l.parentElement.htmlFor : "" })()`)
	if region == "" {
		t.Fatal("the playground offers no region field")
	}
	c.typeIn(region, "us")
	c.click("#pg-run")
	b.waitFor("the answer", `!!document.querySelector('#pg-results [data-flag="counted"]')`)
	if why := eval[string](b, `document.querySelector('#pg-results [data-flag="counted"]').innerText`); !strings.Contains(why, "OFF") || !strings.Contains(why, "region") {
		t.Errorf("the playground explains counted for user 1 in us as %q", why)
	}
	done()
	return counts
}
