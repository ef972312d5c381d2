package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestWebUIAccess walks groups, roles and a project's Access tab in real
// Chromium: an admin makes a group and a custom project role (permissions
// ticked per environment) and gives the role to the group on the
// project's Access tab; a Viewer in the group then switches that project's
// flags in production only, sees no switch in development, and finds no
// trace of a private project — not in the flags list, the search, the event
// log or the playground.
func TestWebUIAccess(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	a := h.AdminToken
	h.Do(t, "POST", "/api/admin/projects", a, map[string]any{"id": "shop", "name": "Shop"}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/projects/shop/features", a, map[string]any{"name": "cart"}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/projects", a, map[string]any{"id": "secret", "name": "Secret", "mode": "private"}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/projects/secret/features", a, map[string]any{"name": "hidden-flag", "description": "not for everyone"}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/projects/secret/features/hidden-flag/environments/development/on", a, nil).Want(t, 200)
	var vera struct{ ID int64 }
	h.Do(t, "POST", "/api/admin/user-admin", a, map[string]any{"username": "vera", "password": "vera-password", "rootRole": "Viewer"}).Want(t, 201).JSON(t, &vera)

	admin := newUIBrowser(t)
	admin.signIn(h.URL, servertest.AdminUser, servertest.AdminPassword)

	// A group with vera in it, made on the groups screen.
	admin.open(h.URL + "/flags")
	admin.do("open groups", chromedp.Click(`nav a[href$="/groups"]`))
	admin.waitFor("the groups screen", `location.pathname === "/groups" && !!document.querySelector("#new-group")`)
	admin.set("#new-name", "shop-team")
	admin.set("#new-sso", "shop-engineers")
	if !eval[bool](admin, fmt.Sprintf(`(() => { const o = document.querySelector('#new-users option[value="%d"]'); if (!o) return false; o.selected = true; return true })()`, vera.ID)) {
		t.Fatalf("vera is not offered as a member")
	}
	admin.do("create the group", chromedp.Click(`#new-group button[type="submit"]`))
	admin.waitFor("the group", `!!document.querySelector("article.card h2") && document.querySelector("article.card h2").textContent === "shop-team"`)
	admin.screenshot("20-groups")

	// A project role that switches flags and adds strategies in production.
	admin.open(h.URL + "/roles")
	admin.set("#new-name", "Prod switcher")
	admin.set("#new-type", "custom")
	for _, perm := range []string{"UPDATE_FEATURE_ENVIRONMENT", "CREATE_FEATURE_STRATEGY"} {
		if !eval[bool](admin, fmt.Sprintf(`(() => { const c = document.querySelector('#new-role input[data-perm="%s"][data-env="production"]'); if (!c || c.disabled) return false; c.checked = true; return true })()`, perm)) {
			t.Fatalf("no enabled %s checkbox for production", perm)
		}
	}
	if n := eval[int](admin, `document.querySelectorAll('#new-role fieldset.perms legend').length`); n < 8 {
		t.Errorf("the permissions are not grouped: %d groups", n)
	}
	admin.do("create the role", chromedp.Click(`#new-role button[type="submit"]`))
	admin.waitFor("the role", `[...document.querySelectorAll("tbody td")].some(td => td.textContent === "Prod switcher")`)
	admin.screenshot("21-roles")
	var role struct {
		Type        string
		Permissions []struct {
			Name        string
			Environment *string
		}
	}
	h.Do(t, "GET", "/api/admin/roles/6", a, nil).Want(t, 200).JSON(t, &role)
	if role.Type != "custom" || len(role.Permissions) != 2 || role.Permissions[0].Environment == nil || *role.Permissions[0].Environment != "production" {
		t.Fatalf("the role made in the browser: %+v", role)
	}

	// The Access tab of shop gives the role to the group.
	admin.open(h.URL + "/projects")
	admin.do("open shop's access", chromedp.Click(`a[href="/projects/shop/access"]`))
	admin.waitFor("the access tab", `location.pathname === "/projects/shop/access" && !!document.querySelector("#give-access")`)
	if !eval[bool](admin, `(() => { const r = [...document.querySelectorAll("#acc-roles option")].find(o => o.textContent === "Prod switcher");
		const g = [...document.querySelectorAll("#acc-groups option")].find(o => o.textContent === "shop-team"); if (!r || !g) return false; r.selected = g.selected = true; return true })()`) {
		t.Fatalf("the role or the group is not offered on the Access tab")
	}
	admin.do("give the role", chromedp.Click(`#give-access button[type="submit"]`))
	admin.waitFor("the group on the tab", `!!document.querySelector('tr[id^="member-group-"]')`)
	admin.screenshot("22-project-access")

	// vera, through the group: production's switch, not development's.
	viewer := newUIBrowser(t)
	viewer.signIn(h.URL, "vera", "vera-password")
	viewer.open(h.URL + "/flags?query=cart")
	switches := eval[string](viewer, `[...document.querySelectorAll("input[data-switch]")].map(i => i.dataset.switch.split("/").pop()).join(",")`)
	if switches != "production" {
		t.Fatalf("vera's switches for cart: %q, want production only", switches)
	}
	viewer.open(h.URL + "/projects/shop/flags/cart")
	if n := eval[int](viewer, `document.querySelectorAll("#env-development input[data-switch], #env-development details.editor").length`); n != 0 {
		t.Errorf("vera sees %d change controls in development", n)
	}
	viewer.do("switch on in production", chromedp.Click(`#env-production input[data-switch]`))
	waitAPI(t, "cart on in production", func() bool {
		return strings.Contains(h.Do(t, "GET", "/api/admin/projects/shop/features/cart/environments/production", a, nil).String(), `"enabled":true`)
	})

	// The private project leaves no trace for vera.
	for _, page := range []string{"/flags", "/flags?query=hidden", "/events", "/projects"} {
		viewer.open(h.URL + page)
		if body := eval[string](viewer, `document.body.innerText`); strings.Contains(body, "hidden-flag") || strings.Contains(body, "secret") {
			t.Errorf("vera sees the private project on %s", page)
		}
	}
	viewer.open(h.URL + "/playground")
	viewer.set("#pg-userId", "someone")
	viewer.do("run", chromedp.Click("#pg-run"))
	viewer.waitFor("the results", `!!document.querySelector('article[data-flag="cart"]')`)
	if eval[bool](viewer, `!!document.querySelector('article[data-flag="hidden-flag"]')`) {
		t.Errorf("vera's playground evaluates the private project's flag")
	}
	viewer.open(h.URL + "/projects/secret/flags/hidden-flag")
	if body := eval[string](viewer, `document.body.innerText`); strings.Contains(body, "not for everyone") {
		t.Errorf("vera opens the private flag")
	}
	viewer.screenshot("23-private-invisible")

	// The admin sees it all.
	admin.open(h.URL + "/flags?query=hidden")
	admin.waitFor("the private flag for the admin", `document.body.innerText.includes("hidden-flag")`)
}
