package e2e

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestWebUIPlaygroundJourney: sign in, make a flag with a gradual rollout
// constrained to two users and a variant, switch it on in development;
// in the playground, a context outside the constraint shows the failing
// constraint with the context's value, and one inside shows the matched
// strategy and the variant. Also at phone width.
func TestWebUIPlaygroundJourney(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	b := newUIBrowser(t)
	b.signIn(h.URL, servertest.AdminUser, servertest.AdminPassword)

	// The flag, made in the browser.
	b.open(h.URL + "/flags/new")
	b.do("type the name", chromedp.SendKeys("#name", "pg-rollout"))
	b.waitFor("the name check", `document.querySelector("#name-check").textContent.includes("is available")`)
	b.do("create", chromedp.Click(`#new-flag button[type="submit"]`))
	b.waitFor("the flag page", `location.pathname === "/projects/default/flags/pg-rollout"`)
	env := `#env-development `
	b.fillRollout("alice, carol")
	b.do("save the strategy", chromedp.Click(env+`form.strategy-form button[type="submit"]`))
	b.waitFor("the strategy", `!!document.querySelector("#env-development .strategy .constraint")`)
	b.addStringVariant("blue", "from-the-ui")
	b.do("switch on", chromedp.Click(env+`input[data-switch]`))
	waitAPI(t, "the flag on in development", func() bool {
		return strings.Contains(h.Do(t, "GET", "/api/admin/projects/default/features/pg-rollout/environments/development", h.AdminToken, nil).String(), `"enabled":true`)
	})

	// A context field with legal values, offered by the playground.
	h.Do(t, "POST", "/api/admin/context", h.AdminToken, map[string]any{"name": "plan",
		"legalValues": []any{map[string]any{"value": "free"}, map[string]any{"value": "pro"}}}).Want(t, 201)

	// The playground, reached from the navigation.
	b.open(h.URL + "/flags")
	b.do("open the playground", chromedp.Click(`nav a[href$="/playground"]`))
	b.waitFor("the playground", `location.pathname === "/playground" && !!document.querySelector("#pg-run")`)
	if env := eval[string](b, `document.querySelector("#pg-env").value`); env != "development" {
		t.Errorf("the playground starts in %q, want development", env)
	}

	offered := eval[string](b, `(() => { const el = document.querySelector('#pg-form input[name="p.plan"]'); return el && el.labels[0].textContent + ":" + [...el.list.options].map(o => o.value).join(",") })()`)
	if offered != "plan:free,pro" {
		t.Errorf("the playground offers the plan context field as %q", offered)
	}
	b.set(`#pg-form input[name="p.plan"]`, "pro")

	// bob is outside the constraint: the page names it, with his value.
	b.set("#pg-userId", "bob")
	b.set("#pg-appName", "web")
	b.do("run", chromedp.Click("#pg-run"))
	flag := `document.querySelector('article[data-flag="pg-rollout"]')`
	b.waitFor("the answer for bob", flag+` && `+flag+`.innerText.includes("bob")`)
	text := eval[string](b, flag+`.innerText`)
	for _, want := range []string{"OFF", "no enabled strategy matched", "✗ fails: userId is one of alice, carol — the context has bob", "did not match: a constraint below fails"} {
		if !strings.Contains(text, want) {
			t.Errorf("the playground for bob lacks %q:\n%s", want, text)
		}
	}
	if search := eval[string](b, `location.search`); !strings.Contains(search, "userId=bob") || !strings.Contains(search, "p.plan=pro") {
		t.Errorf("the run has no shareable URL: %s", eval[string](b, `location.href`))
	}
	b.screenshot("09-playground-fails")

	// alice is inside: the matched strategy and the variant.
	b.set("#pg-userId", "alice")
	b.do("run", chromedp.Click("#pg-run"))
	b.waitFor("the answer for alice", flag+` && `+flag+`.innerText.includes("the context has alice")`)
	text = eval[string](b, flag+`.innerText`)
	for _, want := range []string{"ON", "strategy 1 (Gradual rollout) matched", "matched: this strategy turned the flag on", "✓ holds: userId is one of alice, carol — the context has alice",
		"Variant: blue", "from-the-ui"} {
		if !strings.Contains(text, want) {
			t.Errorf("the playground for alice lacks %q:\n%s", want, text)
		}
	}
	b.screenshot("10-playground-matches")

	// Only the flags that are off: pg-rollout is on for alice, so hidden.
	b.do("show only off", chromedp.Click(`input[name="show"][value="off"]`), chromedp.Click("#pg-run"))
	b.waitFor("the filter", `document.querySelector("#pg-results").innerText.includes("Showing the flags that are off")`)
	if eval[bool](b, `!!`+flag) {
		t.Errorf("the off filter still shows pg-rollout")
	}

	// A bad context is a message on the page, not an error page.
	b.open(h.URL + "/playground?environment=nope")
	b.waitFor("the message", `!!document.querySelector("#pg-results [role=alert]")`)
	if msg := eval[string](b, `document.querySelector("#pg-results [role=alert]").textContent`); !strings.Contains(msg, `"nope" does not exist`) {
		t.Errorf("an unknown environment shows %q", msg)
	}

	// At phone width: no sideways scrolling, the result readable.
	b.do("phone width", chromedp.EmulateViewport(390, 844))
	b.open(h.URL + "/playground?environment=development&userId=bob&appName=web")
	b.waitFor("the answer", flag+` && `+flag+`.innerText.includes("bob")`)
	if wide := eval[bool](b, `document.documentElement.scrollWidth > window.innerWidth + 1`); wide {
		t.Errorf("the playground scrolls sideways at 390 px (%d px wide)", eval[int](b, `document.documentElement.scrollWidth`))
	}
	b.screenshot("11-playground-phone")

	// Keyboard: every form control has a label.
	unlabelled := eval[int](b, `[...document.querySelectorAll("#pg-form input, #pg-form select")].filter(el => !(el.labels && el.labels.length) && !el.getAttribute("aria-label")).length`)
	if unlabelled != 0 {
		t.Errorf("%d playground controls have no label", unlabelled)
	}
}
