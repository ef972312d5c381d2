package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/internal/cli"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// watchConsole starts recording b's console errors (consoleLog, in
// webui_design_test.go); the journey asserts none with noConsoleErrors.
func watchConsole(b *uiBrowser) *consoleLog {
	b.t.Helper()
	l := &consoleLog{}
	if err := chromedp.Listen(b.ctx, l.record); err != nil {
		b.t.Fatal(err)
	}
	return l
}

func (l *consoleLog) noConsoleErrors(t *testing.T) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.errors {
		t.Errorf("the browser reported an error: %s", e)
	}
}

// quickstart runs `bunting` with no command (what `make run` runs) on
// free ports with its data in a temporary directory, and returns the
// server's and the proxy's addresses and the tokens file.
func quickstart(t *testing.T) (serverURL, proxyURL string, tokens map[string]string) {
	t.Helper()
	dir := t.TempDir()
	port := func() string { return fmt.Sprint(testutil.FreePort(t)) }
	env := map[string]string{"HTTP_PORT": port(), "PROXY_PORT": port(), "DATABASE_PATH": filepath.Join(dir, "bunting.db"), "LOG_LEVEL": "warn"}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr testutil.Buffer
	done := make(chan int, 1)
	go func() {
		done <- cli.Run(ctx, nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &stdout, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("bunting did not stop")
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stdout.String(), "Bunting is running") {
		if time.Now().After(deadline) {
			t.Fatalf("bunting did not start:\n%s\n%s", stdout.String(), stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, err := os.ReadFile(filepath.Join(dir, "quickstart-tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &tokens); err != nil {
		t.Fatal(err)
	}
	return "http://127.0.0.1:" + env["HTTP_PORT"], "http://127.0.0.1:" + env["PROXY_PORT"], tokens
}

// TestWebUIQuickstartServesANewProject: with the quick start (`make run`),
// a flag in a project made after the start shows on its page which token
// serves it in development (the quick start's, covering all projects) and
// warns that none serves it in production; switched on in the browser,
// the quick start's proxy serves it.
func TestWebUIQuickstartServesANewProject(t *testing.T) {
	server, proxy, tokens := quickstart(t)
	for _, c := range []struct{ path, body string }{
		{"/api/admin/projects", `{"id":"shop","name":"Shop"}`},
		{"/api/admin/projects/shop/features", `{"name":"shop-banner"}`},
	} {
		if code, body := testutil.Call(t, "POST", server+c.path, tokens["adminToken"], c.body); code/100 != 2 {
			t.Fatalf("POST %s: %d %s", c.path, code, body)
		}
	}
	b := newUIBrowser(t)
	console := watchConsole(b)
	b.signIn(server, "admin", tokens["adminPassword"])
	b.open(server + "/projects/shop/flags/shop-banner")
	dev := eval[string](b, `document.querySelector("#env-development .serving").innerText`)
	if !strings.Contains(dev, "(client, *:development)") || !strings.Contains(dev, "(frontend, *:development)") {
		t.Errorf("development says %q, want the quick start's client and frontend tokens", dev)
	}
	prod := eval[string](b, `document.querySelector("#env-production .serving.none").innerText`)
	if !strings.Contains(prod, "No token can serve this flag in production") {
		t.Errorf("production says %q, want a warning that no token serves it", prod)
	}
	b.screenshot("50-flag-served-by")
	b.do("switch on in development", chromedp.Click(`#env-development input[data-switch]`))
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, body := testutil.Call(t, "GET", proxy+"/proxy", tokens["proxyClientKey"], "")
		if strings.Contains(body, `"shop-banner"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the quick start's proxy does not serve shop-banner: %s", body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	console.noConsoleErrors(t)
}

// TestWebUIRolloutChangeReadsAsSentences: a gradual rollout reads as people
// say it on the flag page (with its bar), its change from 25 % to 50 % in
// the editor reads as a sentence in the event log, with the two states in
// the same rendering and the raw JSON one click away; the log's filters
// are choices. A change request shows a strategy in that rendering too.
func TestWebUIRolloutChangeReadsAsSentences(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	h.Do(t, "POST", "/api/admin/context", h.AdminToken, map[string]any{"name": "region"}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/projects/default/features", h.AdminToken, map[string]any{"name": "new-checkout"}).Want(t, 201)
	var st struct{ ID string }
	h.Do(t, "POST", "/api/admin/projects/default/features/new-checkout/environments/development/strategies", h.AdminToken, map[string]any{
		"name": "flexibleRollout", "parameters": map[string]any{"rollout": "25", "stickiness": "userId", "groupId": "new-checkout"},
		"constraints": []any{map[string]any{"contextName": "region", "operator": "IN", "values": []string{"eu", "uk"}}},
	}).Want(t, 200).JSON(t, &st)

	b := newUIBrowser(t)
	console := watchConsole(b)
	b.signIn(h.URL, servertest.AdminUser, servertest.AdminPassword)
	b.open(h.URL + "/projects/default/flags/new-checkout")
	strategy := `#env-development .strategy[data-strategy="` + st.ID + `"] .sv`
	if got := eval[string](b, `document.querySelector('`+strategy+`').innerText.replace(/\s+/g, " ").trim()`); !strings.HasPrefix(got, "Gradual rollout: 25 % of users (sticky on userId) where region is one of eu, uk") {
		t.Errorf("the strategy reads %q", got)
	}
	form := `#edit-` + st.ID + ` form.strategy-edit `
	b.do("open the editor", chromedp.Click(`#edit-`+st.ID+` summary`))
	b.set(form+`input[name="parameters.rollout"]`, "50")
	b.do("save", chromedp.Click(form+`button[type="submit"]`))
	b.waitFor("the new rollout", `document.readyState === "complete" && (document.querySelector('`+strategy+`') || {}).innerText?.includes("50 % of users")`)
	if w := eval[string](b, `document.querySelector('`+strategy+` .sv-bar span').style.width`); w != "50%" {
		t.Errorf("the rollout bar is %s wide, want 50%%", w)
	}
	b.screenshot("51-rollout-sentence")

	b.open(h.URL + "/events?feature=new-checkout")
	first := `ol.events li.event:first-child `
	if got := eval[string](b, `document.querySelector("`+first+`.event-sentence").innerText`); got != "admin changed the rollout of new-checkout in development from 25 % to 50 %" {
		t.Errorf("the newest event reads %q", got)
	}
	change := eval[string](b, `document.querySelector("`+first+`.event-change").innerText.replace(/\s+/g, " ")`)
	for _, want := range []string{"Before", "25 % of users", "After", "50 % of users", "region is one of eu, uk"} {
		if !strings.Contains(change, want) {
			t.Errorf("the change shows %q, lacking %q", change, want)
		}
	}
	if open := eval[bool](b, `document.querySelector("`+first+`details.raw").open`); open {
		t.Error("the raw JSON is open from the start")
	}
	b.do("show the raw JSON", chromedp.Click(first+`details.raw summary`))
	if raw := eval[string](b, `document.querySelector("`+first+`details.raw pre").innerText`); !strings.Contains(raw, `"rollout": "50"`) || !strings.Contains(raw, `"preData"`) {
		t.Errorf("the raw JSON reads %s", raw)
	}
	groups := eval[string](b, `[...document.querySelectorAll('select[name="type"] optgroup')].map(g => g.label).join("|")`)
	if !strings.Contains(groups, "Flags") || !strings.Contains(groups, "Segments") {
		t.Errorf("the type filter's groups are %q", groups)
	}
	b.set(`select[name="type"]`, "feature-created")
	b.set(`select[name="project"]`, "default")
	b.do("filter", chromedp.Click(`form.filters button[type="submit"]`))
	b.waitFor("the filtered log", `location.search.includes("type=feature-created") && document.querySelectorAll("li.event").length === 1`)
	if got := eval[string](b, `document.querySelector("li.event .event-sentence").innerText`); got != "admin created new-checkout in project default" {
		t.Errorf("the filtered log reads %q", got)
	}
	b.screenshot("52-event-sentences")

	// A change request shows the strategy it adds in the same rendering.
	h.Do(t, "PUT", "/api/admin/projects/default/environments/production/change-requests/config", h.AdminToken,
		map[string]any{"changeRequestsEnabled": true, "requiredApprovals": 1}).Want(t, 204)
	b.open(h.URL + "/projects/default/flags/new-checkout")
	b.do("open production's strategy editor", chromedp.Click(`#env-production details.editor summary`))
	b.set(`#env-production form.strategy-form input[name="parameters.rollout"]`, "30")
	b.do("save it into a draft", chromedp.Click(`#env-production form.strategy-form button[type="submit"]`))
	b.waitFor("the draft banner", `document.readyState === "complete" && !!document.querySelector("#draft-production a")`)
	b.do("open the draft", chromedp.Click(`#draft-production a`))
	b.waitFor("the change request", `document.readyState === "complete" && !!document.querySelector(".cr-change .sv")`)
	if got := eval[string](b, `document.querySelector(".cr-change .sv").innerText.replace(/\s+/g, " ").trim()`); got != "Gradual rollout: 30 % of users (sticky on userId, else sessionId, else random)" {
		t.Errorf("the change request shows the strategy as %q", got)
	}
	console.noConsoleErrors(t)
}

// TestWebUIRolloutWithAFieldTypedInPlace: the strategy editor takes a
// context field that is not defined yet, offers to define it without
// leaving, and keeps what was typed; the defined field's legal values are
// then suggested. Stickiness offers each field once.
func TestWebUIRolloutWithAFieldTypedInPlace(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	h.Do(t, "POST", "/api/admin/projects/default/features", h.AdminToken, map[string]any{"name": "tenant-rollout"}).Want(t, 201)
	b := newUIBrowser(t)
	console := watchConsole(b)
	b.signIn(h.URL, servertest.AdminUser, servertest.AdminPassword)
	b.open(h.URL + "/projects/default/flags/tenant-rollout")
	env := `#env-development `
	b.do("open the strategy editor", chromedp.Click(env+`details.editor summary`))
	if got := eval[string](b, `[...document.querySelectorAll('#env-development form.strategy-form select[name="parameters.stickiness"] option')].map(o => o.value).join(" ")`); strings.Count(got, "sessionId") != 1 {
		t.Errorf("the stickiness choices are %q, want sessionId once", got)
	}
	b.set(env+`form.strategy-form input[name="parameters.rollout"]`, "40")
	b.do("add a constraint", chromedp.Click(env+`form.strategy-form button[data-add="constraints"]`))
	row := env + `form.strategy-form [data-list="constraints"] [data-item] `
	b.do("type a field nobody defined", chromedp.SendKeys(row+`input[name="contextName"]`, "tenant"))
	b.waitFor("the offer to define it", `(document.querySelector('`+row+`[data-field-hint]').textContent.includes("not a defined context field")) && !document.querySelector('`+row+`[data-define-field]').hidden`)
	b.do("define it", chromedp.Click(row+`[data-define-field]`))
	b.waitFor("the dialog", `document.querySelector("#define-field").open && document.querySelector("#define-field input[name=name]").value === "tenant"`)
	b.do("its legal values", chromedp.SendKeys(`#define-field input[name="legalValues"]`, "acme, globex"), chromedp.Click(`#define-field button[type="submit"]`))
	b.waitFor("the dialog closed and the field known", `!document.querySelector("#define-field").open && document.querySelector('`+row+`[data-field-hint]').textContent.includes("Legal values: acme, globex")`)
	kept := eval[string](b, `[document.querySelector('#env-development form.strategy-form input[name="parameters.rollout"]').value, document.querySelector('`+row+`input[name="contextName"]').value, document.querySelector('#env-development details.editor').open].join("|")`)
	if kept != "40|tenant|true" {
		t.Errorf("after defining the field the editor holds %q, want what was typed", kept)
	}
	if got := eval[string](b, `[...document.getElementById(document.querySelector('`+row+`input[name="values"]').getAttribute("list")).options].map(o => o.value).join(",")`); got != "acme,globex" {
		t.Errorf("the values suggested are %q", got)
	}
	b.screenshot("53-field-typed-in-place")
	b.do("the value", chromedp.SendKeys(row+`input[name="values"]`, "acme"))
	b.do("save", chromedp.Click(env+`form.strategy-form button[type="submit"]`))
	b.waitFor("the strategy", `document.readyState === "complete" && (document.querySelector("#env-development .strategy .sv") || {}).innerText?.includes("tenant is one of acme")`)
	if got := h.Do(t, "GET", "/api/admin/context/tenant", h.AdminToken, nil).Want(t, 200).String(); !strings.Contains(got, `"value":"acme"`) || !strings.Contains(got, `"value":"globex"`) {
		t.Errorf("the field defined in place is %s", got)
	}
	console.noConsoleErrors(t)
}

// TestWebUIVariantSplit: three variants added in the editor split 1000
// as the server stores it, shown as percentages (33.4/33.3/33.3 %) in the
// form and on the page; removing one balances the rest; a fixed share is
// an explicit choice. An invalid JSON payload is refused in the form
// before anything is sent, and by the server too; a valid one is
// formatted.
func TestWebUIVariantSplit(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	h.Do(t, "POST", "/api/admin/projects/default/features", h.AdminToken, map[string]any{"name": "three-way"}).Want(t, 201)
	b := newUIBrowser(t)
	console := watchConsole(b)
	b.signIn(h.URL, servertest.AdminUser, servertest.AdminPassword)
	b.open(h.URL + "/projects/default/flags/three-way")
	form := `#env-development form[data-body-field] `
	b.do("open the variants", chromedp.Click(`#env-development details.editor:nth-of-type(2) summary`))
	for i, name := range []string{"a", "b", "c"} {
		b.do("add a variant", chromedp.Click(form+`button[data-add="variants"]`))
		b.do("name it", chromedp.SendKeys(form+`[data-list] [data-item]:nth-child(`+fmt.Sprint(i+1)+`) input[name="name"]`, name))
	}
	shares := func() string {
		return eval[string](b, `[...document.querySelectorAll('`+form+`[data-list] [data-share]')].map(e => e.value).join("/")`)
	}
	b.waitFor("the balanced split", `[...document.querySelectorAll('`+form+`[data-list] [data-share]')].length === 3`)
	if got := shares(); got != "33.4/33.3/33.3" {
		t.Errorf("three new variants show %s %%", got)
	}
	if got := eval[string](b, `document.querySelector('`+form+`[data-split-summary]').textContent`); got != "Split: a 33.4 %, b 33.3 %, c 33.3 %." {
		t.Errorf("the split reads %q", got)
	}
	b.do("remove c", chromedp.Click(form+`[data-list] [data-item]:nth-child(3) button[data-remove]`))
	b.waitFor("two halves", `[...document.querySelectorAll('`+form+`[data-list] [data-share]')].map(e => e.value).join("/") === "50/50"`)
	b.do("add c again", chromedp.Click(form+`button[data-add="variants"]`))
	b.do("name it", chromedp.SendKeys(form+`[data-list] [data-item]:nth-child(3) input[name="name"]`, "c"))
	b.waitFor("thirds again", `[...document.querySelectorAll('`+form+`[data-list] [data-share]')].map(e => e.value).join("/") === "33.4/33.3/33.3"`)

	// An invalid JSON payload: refused in the form, nothing sent.
	b.set(form+`[data-list] [data-item]:nth-child(1) select[name="payload.type"]`, "json")
	b.set(form+`[data-list] [data-item]:nth-child(1) textarea[name="payload.value"]`, `{"color": "blue",`)
	b.waitFor("the JSON error", `document.querySelector('`+form+`[data-list] [data-item]:nth-child(1) [data-payload-error]').textContent.startsWith("Invalid JSON")`)
	b.do("try to save", chromedp.Click(form+`button[type="submit"]`))
	b.waitFor("the refusal", `document.querySelector('`+form+`> [data-error]').textContent.includes("a JSON payload is invalid")`)
	if got := h.Do(t, "GET", "/api/admin/projects/default/features/three-way", h.AdminToken, nil).Want(t, 200).String(); strings.Contains(got, `"name":"a"`) {
		t.Fatalf("the invalid form was sent: %s", got)
	}
	b.screenshot("54-variant-json-refused")
	b.set(form+`[data-list] [data-item]:nth-child(1) textarea[name="payload.value"]`, `{"color":"blue","sizes":[1,2]}`)
	b.do("format", chromedp.Click(form+`[data-list] [data-item]:nth-child(1) button[data-format-json]`))
	if got := eval[string](b, `document.querySelector('`+form+`[data-list] [data-item]:nth-child(1) textarea').value`); !strings.Contains(got, "\n  \"color\": \"blue\",\n") {
		t.Errorf("the formatted payload is %q", got)
	}
	b.do("save", chromedp.Click(form+`button[type="submit"]`))
	b.waitFor("the split on the page", `document.readyState === "complete" && !!document.querySelector("#env-development > .variant-split")`)
	if got := eval[string](b, `[...document.querySelectorAll("#env-development > .variant-split .share")].map(e => e.textContent).join("/")`); got != "33.4 %/33.3 %/33.3 %" {
		t.Errorf("the page shows the split %s", got)
	}
	var f struct {
		Environments []struct {
			Name     string
			Variants []struct {
				Name   string
				Weight int
			}
		}
	}
	h.Do(t, "GET", "/api/admin/projects/default/features/three-way", h.AdminToken, nil).Want(t, 200).JSON(t, &f)
	var stored []string
	for _, e := range f.Environments {
		if e.Name == "development" {
			for _, v := range e.Variants {
				stored = append(stored, fmt.Sprintf("%s=%d", v.Name, v.Weight))
			}
		}
	}
	if strings.Join(stored, " ") != "a=334 b=333 c=333" {
		t.Errorf("the server stores %v", stored)
	}
	b.screenshot("55-variant-split")

	// The server refuses an invalid JSON payload too, with a clear error.
	res := h.Do(t, "PUT", "/api/admin/projects/default/features/three-way/environments/development/variants", h.AdminToken, []any{
		map[string]any{"name": "a", "weight": 1000, "weightType": "variable", "stickiness": "default", "payload": map[string]any{"type": "json", "value": `{"color":`}}})
	if res.Status != 400 || !strings.Contains(res.String(), "must be a JSON object or array") {
		t.Errorf("the server answers an invalid JSON payload with %s", res.String())
	}
	console.noConsoleErrors(t)
}
