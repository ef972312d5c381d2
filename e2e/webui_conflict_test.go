package e2e

import (
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestWebUIConflict: two people have the same flag open in real Chromium.
// Bob saves a change; Alice's change, made on the page she opened before,
// is refused with a clear conflict next to her form, her input stays;
// after she reloads (her input put back) she sees Bob's change and saves
// hers. Her own changes move her page's version along (a switch that does
// not reload the page, then a form), and a switch or a segment deletion
// made on a stale page is refused the same way.
func TestWebUIConflict(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	h.Do(t, "POST", "/api/admin/projects/default/features", h.AdminToken, map[string]any{"name": "shared"}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/user-admin", h.AdminToken, map[string]any{"username": "bob", "password": "bob-password", "rootRole": "Admin"}).Want(t, 201)
	flagPage := h.URL + "/projects/default/flags/shared"

	alice := newUIBrowser(t)
	alice.signIn(h.URL, servertest.AdminUser, servertest.AdminPassword)
	alice.open(flagPage)
	bob := newUIBrowser(t)
	bob.signIn(h.URL, "bob", "bob-password")
	bob.open(flagPage)

	// Bob describes the flag.
	meta := `form.inline-form[data-method="PUT"] `
	bob.set(meta+`input[name="description"]`, "Bob's description")
	bob.do("Bob saves", chromedp.Click(meta+`button[type="submit"]`))
	bob.waitFor("Bob's change saved", `document.querySelector("main .muted").textContent.includes("Bob's description")`)

	// Alice, on the page she opened before, adds a gradual rollout with a
	// constraint in development.
	env := `#env-development `
	form := env + `form.strategy-form `
	alice.do("open the strategy editor", chromedp.Click(env+`details.editor summary`))
	alice.set(form+`input[name="parameters.rollout"]`, "35")
	alice.set(form+`input[name="title"]`, "Alice's rollout")
	alice.do("add a constraint", chromedp.Click(form+`button[data-add="constraints"]`))
	alice.set(form+`[data-list="constraints"] input[name="contextName"]`, "userId")
	alice.do("type the values", chromedp.SendKeys(form+`[data-list="constraints"] input[name="values"]`, "ann, cy"))
	alice.do("save", chromedp.Click(form+`button[type="submit"]`))
	alice.waitFor("the conflict", `(document.querySelector("#env-development form.strategy-form .conflict") || {}).textContent !== undefined`)
	text := eval[string](alice, `document.querySelector("#env-development form.strategy-form [data-error]").innerText`)
	if !strings.Contains(text, "This flag was changed by bob since you opened it. Reload to see the change before saving yours.") ||
		!strings.Contains(text, "Reload, keeping what I typed") {
		t.Fatalf("the conflict reads %q", text)
	}
	alice.screenshot("09-conflict")
	kept := eval[string](alice, `(() => { const f = document.querySelector("#env-development form.strategy-form");
		return [f.closest("details").open, f.elements["parameters.rollout"].value, f.elements["title"].value, f.querySelector('[data-list="constraints"] input[name="values"]').value].join("|") })()`)
	if kept != "true|35|Alice's rollout|ann, cy" {
		t.Errorf("after the conflict Alice's form holds %q", kept)
	}
	if n := len(h.Do(t, "GET", "/api/admin/projects/default/features/shared/environments/development/strategies", h.AdminToken, nil).Want(t, 200).Body); n != len("[]") {
		t.Fatalf("the refused strategy was stored anyway")
	}

	// Alice reloads: her input comes back on the page that now shows Bob's change.
	alice.do("reload keeping the input", chromedp.Click(form+`button[data-reload-keeping]`))
	alice.waitFor("the reloaded page with Bob's change and her input",
		`document.querySelector("main .muted").textContent.includes("Bob's description") &&
		 document.querySelector("#env-development form.strategy-form").elements["title"].value === "Alice's rollout"`)
	kept = eval[string](alice, `(() => { const f = document.querySelector("#env-development form.strategy-form");
		return [f.closest("details").open, f.elements["parameters.rollout"].value, f.querySelector('[data-list="constraints"] input[name="contextName"]').value, f.querySelector('[data-list="constraints"] input[name="values"]').value].join("|") })()`)
	if kept != "true|35|userId|ann, cy" {
		t.Errorf("after the reload Alice's form holds %q", kept)
	}
	alice.do("save again", chromedp.Click(form+`button[type="submit"]`))
	alice.waitFor("the strategy saved", `!!document.querySelector("#env-development .strategy .constraint")`)
	var strategies []struct {
		Title       string
		Parameters  map[string]string
		Constraints []struct{ Values []string }
	}
	h.Do(t, "GET", "/api/admin/projects/default/features/shared/environments/development/strategies", h.AdminToken, nil).Want(t, 200).JSON(t, &strategies)
	if len(strategies) != 1 || strategies[0].Title != "Alice's rollout" || strategies[0].Parameters["rollout"] != "35" ||
		len(strategies[0].Constraints) != 1 || strings.Join(strategies[0].Constraints[0].Values, ",") != "ann,cy" {
		t.Fatalf("stored strategies %+v", strategies)
	}

	// Her own switch (the page stays) moves her version along: her next
	// change on the same page goes through.
	alice.do("switch on", chromedp.Click(env+`input[data-switch]`))
	waitAPI(t, "the flag on in development", func() bool {
		return strings.Contains(string(h.Do(t, "GET", "/api/admin/projects/default/features/shared/environments/development", h.AdminToken, nil).Body), `"enabled":true`)
	})
	alice.waitFor("the switch settled", `!document.querySelector("#env-development input[data-switch]").disabled`)
	bob.open(flagPage) // Bob sees it on
	bob.waitFor("Bob's page with the flag on", `document.querySelector("#env-development input[data-switch]").checked`)
	alice.set(meta+`input[name="description"]`, "Alice's description")
	alice.do("Alice saves the description", chromedp.Click(meta+`button[type="submit"]`))
	alice.waitFor("her description saved", `document.querySelector("main .muted").textContent.includes("Alice's description")`)

	// Bob, whose page is now stale (it lacks Alice's description), switches
	// the flag off: refused, his switch back on, the conflict on top of the
	// page, the flag still on.
	bob.do("Bob switches off", chromedp.Click(env+`input[data-switch]`))
	bob.waitFor("the conflict banner", `(document.querySelector("#conflict") || {}).textContent !== undefined &&
		document.querySelector("#conflict").textContent.includes("This flag was changed by admin since you opened it")`)
	if !eval[bool](bob, `document.querySelector("#env-development input[data-switch]").checked`) {
		t.Errorf("Bob's refused switch shows off")
	}
	bob.screenshot("10-conflict-switch")
	if !strings.Contains(string(h.Do(t, "GET", "/api/admin/projects/default/features/shared/environments/development", h.AdminToken, nil).Body), `"enabled":true`) {
		t.Fatalf("Bob's refused switch turned the flag off")
	}

	// Segments: Alice has the list open, Bob changes the segment, Alice's
	// deletion is refused.
	c := []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"1"}}}
	sg := h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "beta", "constraints": c}).Want(t, 201).Map(t)
	alice.open(h.URL + "/segments")
	h.Do(t, "PUT", "/api/admin/segments/"+jsonNumber(sg["id"]), h.AdminToken, map[string]any{"name": "beta", "description": "changed", "constraints": c}).Want(t, 204)
	eval[bool](alice, `(() => { window.confirm = () => true; return true })()`)
	alice.do("delete the segment", chromedp.Click(`main table button[data-method="DELETE"]`))
	alice.waitFor("the segment conflict", `(document.querySelector("#conflict") || {}).textContent !== undefined &&
		document.querySelector("#conflict").textContent.includes("This segment was changed by admin since you opened it")`)
	h.Do(t, "GET", "/api/admin/segments/"+jsonNumber(sg["id"]), h.AdminToken, nil).Want(t, 200)
	alice.do("reload", chromedp.Click(`#conflict button[data-reload-keeping]`))
	alice.waitFor("the reloaded list", `!document.querySelector("#conflict") && document.readyState === "complete"`)
	eval[bool](alice, `(() => { window.confirm = () => true; return true })()`)
	alice.do("delete the segment again", chromedp.Click(`main table button[data-method="DELETE"]`))
	waitAPI(t, "the segment deleted", func() bool {
		return h.Do(t, "GET", "/api/admin/segments/"+jsonNumber(sg["id"]), h.AdminToken, nil).Status == 404
	})
}

// jsonNumber prints a JSON number decoded as float64 as an integer.
func jsonNumber(v any) string {
	f, _ := v.(float64)
	return strconv.Itoa(int(f))
}
