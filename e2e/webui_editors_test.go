package e2e

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestWebUIEditors changes an existing strategy and an existing segment in
// the browser: the editors open filled with what is stored, a one-value
// operator (NUM_GT) takes a single value, and what is saved is what the
// admin API then serves, with nothing else lost.
func TestWebUIEditors(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	h.Do(t, "POST", "/api/admin/context", h.AdminToken, map[string]any{"name": "age"}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/projects/default/features", h.AdminToken, map[string]any{"name": "ui-edit"}).Want(t, 201)
	var st struct{ ID string }
	h.Do(t, "POST", "/api/admin/projects/default/features/ui-edit/environments/development/strategies", h.AdminToken, map[string]any{
		"name": "flexibleRollout", "title": "beta users",
		"parameters":  map[string]any{"rollout": "50", "stickiness": "userId", "groupId": "ui-edit"},
		"constraints": []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"a", "b"}}},
		"variants":    []any{map[string]any{"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "default", "payload": map[string]any{"type": "string", "value": "sky"}}},
	}).Want(t, 200).JSON(t, &st)
	var seg struct{ ID int }
	h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "beta", "description": "early",
		"constraints": []any{map[string]any{"contextName": "plan", "operator": "IN", "values": []string{"pro"}}}}).Want(t, 201).JSON(t, &seg)

	b := newUIBrowser(t)
	b.signIn(h.URL, servertest.AdminUser, servertest.AdminPassword)
	b.open(h.URL + "/projects/default/flags/ui-edit")
	form := `#edit-` + st.ID + ` form.strategy-edit `
	b.do("open the strategy's editor", chromedp.Click(`#edit-`+st.ID+` summary`))
	filled := eval[string](b, `(() => { const f = document.querySelector("`+strings.TrimSpace(form)+`");
		return [f.querySelector('select[name="name"]').value, f.elements["title"].value, f.elements["parameters.rollout"].value, f.elements["parameters.stickiness"].value,
			f.querySelector('[data-list="constraints"] input[name="contextName"]').value, f.querySelector('[data-list="constraints"] select[name="operator"]').value,
			f.querySelector('[data-list="constraints"] input[name="values"]').value,
			f.querySelector('[data-list="variants"] input[name="name"]').value, f.querySelector('[data-list="variants"] textarea[name="payload.value"]').value].join("|") })()`)
	if want := "flexibleRollout|beta users|50|userId|userId|IN|a, b|blue|sky"; filled != want {
		t.Fatalf("the editor opened with %q, want %q", filled, want)
	}
	b.set(form+`input[name="parameters.rollout"]`, "30")
	b.do("add a constraint", chromedp.Click(form+`button[data-add="constraints"]`))
	last := form + `[data-list="constraints"] [data-item]:last-child `
	b.set(last+`input[name="contextName"]`, "age")
	b.set(last+`select[name="operator"]`, "NUM_GT")
	if shown := eval[string](b, `(() => { const r = document.querySelector('`+strings.TrimSpace(last)+`');
		return [r.querySelector('input[name="values"]').closest("label").hidden, r.querySelector('input[name="value"]').closest("label").hidden].join() })()`); shown != "true,false" {
		t.Errorf("for NUM_GT the row hides values/value as %q, want the one-value box only", shown)
	}
	b.do("type the number", chromedp.SendKeys(last+`input[name="value"]`, "17"))
	b.do("save", chromedp.Click(form+`button[type="submit"]`))
	b.waitFor("the saved strategy", `document.readyState === "complete" && [...document.querySelectorAll("#env-development .strategy .constraint")].some(e => e.textContent.includes("age is greater than 17"))`)
	b.screenshot("29-strategy-edited")

	var got struct {
		Title       string
		Parameters  map[string]string
		Constraints []struct {
			ContextName, Operator, Value string
			Values                       []string
		}
		Variants []struct{ Name string }
		Disabled bool
	}
	body := h.Do(t, "GET", "/api/admin/projects/default/features/ui-edit/environments/development/strategies/"+st.ID, h.AdminToken, nil).Want(t, 200)
	if err := json.Unmarshal(body.Body, &got); err != nil {
		t.Fatal(err)
	}
	if got.Title != "beta users" || got.Parameters["rollout"] != "30" || got.Parameters["stickiness"] != "userId" || got.Disabled ||
		len(got.Variants) != 1 || got.Variants[0].Name != "blue" || len(got.Constraints) != 2 ||
		got.Constraints[0].Operator != "IN" || strings.Join(got.Constraints[0].Values, ",") != "a,b" ||
		got.Constraints[1].ContextName != "age" || got.Constraints[1].Operator != "NUM_GT" || got.Constraints[1].Value != "17" || len(got.Constraints[1].Values) != 0 {
		t.Errorf("after the edit the strategy is %s", body.Body)
	}

	// The segment: its editor opens filled; a changed value and description
	// are what the API serves after the save.
	b.open(h.URL + "/segments")
	sf := `#edit-segment-` + strconv.Itoa(seg.ID) + ` form `
	b.do("open the segment's editor", chromedp.Click(`#edit-segment-`+strconv.Itoa(seg.ID)+` summary`))
	if v := eval[string](b, `document.querySelector('`+sf+`[data-list="constraints"] input[name="values"]').value`); v != "pro" {
		t.Fatalf("the segment editor shows values %q, want pro", v)
	}
	b.set(sf+`[data-list="constraints"] input[name="values"]`, "pro, team")
	b.set(sf+`input[name="description"]`, "paying")
	b.do("save the segment", chromedp.Click(sf+`button[type="submit"]`))
	b.waitFor("the saved segment", `document.readyState === "complete" && document.body.innerText.includes("plan is one of pro, team")`)
	b.screenshot("30-segment-edited")
	s := h.Do(t, "GET", "/api/admin/segments/"+strconv.Itoa(seg.ID), h.AdminToken, nil).Want(t, 200).String()
	if !strings.Contains(s, `"description":"paying"`) || !strings.Contains(s, `"values":["pro","team"]`) || !strings.Contains(s, `"name":"beta"`) {
		t.Errorf("after the edit the segment is %s", s)
	}
}

// TestWebUIServiceAccounts makes a service account and its token on the
// users screen, uses the token against the admin API with the account's
// role, and deletes the token and the account after their confirmations.
func TestWebUIServiceAccounts(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	b := newUIBrowser(t)
	b.signIn(h.URL, servertest.AdminUser, servertest.AdminPassword)
	b.open(h.URL + "/users")
	b.do("name the account", chromedp.SendKeys("#sa-username", "ci-bot"), chromedp.SendKeys("#sa-name", "CI"))
	b.set("#sa-role", "2")
	b.do("create the account", chromedp.Click(`#new-service-account button[type="submit"]`))
	b.waitFor("the account", `document.readyState === "complete" && [...document.querySelectorAll("article.card h3")].some(e => e.textContent === "ci-bot")`)
	card := `article.card:has(h3) `
	if got := eval[string](b, `document.querySelector("`+strings.TrimSpace(card)+`").innerText`); !strings.Contains(got, "role Editor") || !strings.Contains(got, "No tokens") {
		t.Errorf("the account reads %q", got)
	}
	b.do("describe the token", chromedp.SendKeys(card+`input[name="description"]`, "deploys"))
	b.do("create the token", chromedp.Click(card+`form button[type="submit"]`))
	b.waitFor("the secret", `(document.querySelector("`+strings.TrimSpace(card)+` output") || {}).textContent?.startsWith("user:")`)
	secret := eval[string](b, `document.querySelector("`+strings.TrimSpace(card)+` output").textContent`)
	b.screenshot("31-service-account")
	h.Do(t, "GET", "/api/admin/projects", secret, nil).Want(t, 200)                                              // an Editor reads
	h.Do(t, "POST", "/api/admin/environments", secret, map[string]any{"name": "x", "type": "test"}).Want(t, 403) // but is no Admin

	b.open(h.URL + "/users")
	b.answerConfirm(true)
	b.do("delete the token", chromedp.Click(`button[aria-label="Delete token deploys of ci-bot"]`))
	b.waitFor("the token gone", `document.readyState === "complete" && !document.querySelector('button[aria-label="Delete token deploys of ci-bot"]')`)
	h.Do(t, "GET", "/api/admin/projects", secret, nil).Want(t, 401)
	b.answerConfirm(true)
	b.do("delete the account", chromedp.Click(`button[aria-label="Delete service account ci-bot"]`))
	b.waitFor("the account gone", `document.readyState === "complete" && !document.querySelector('button[aria-label="Delete service account ci-bot"]')`)
	if got := h.Do(t, "GET", "/api/admin/service-account", h.AdminToken, nil).Want(t, 200).String(); strings.Contains(got, "ci-bot") {
		t.Errorf("the account is still there: %s", got)
	}
}
