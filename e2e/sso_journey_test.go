package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestSSOGroupAccessJourney is issue 24's first test, on both databases,
// in real Chromium against the real OpenID provider: people sign in
// through the provider's login page; auto-creation is limited to
// example.com (bob, at other.test, is refused and not created); alice's
// groups claim names shop-engineers, which the group shop-devs maps, and
// that group holds a custom project role in shop allowing
// UPDATE_FEATURE_ENVIRONMENT in development only. Alice, a Viewer, then
// switches shop's flag in development, sees no switch in production, in
// another project or for a flag she could not switch on (it has no
// strategy, and switching on would add one), is refused in production and
// in the other project when she forces a switch, and finds no
// trace of a private project in the flags list, the search, the event log
// or the playground. When the provider stops claiming shop-engineers, her
// next sign-in takes her out of the group, and the switch and the right
// are gone.
func TestSSOGroupAccessJourney(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		s := startSSO(t, db, map[string]any{"autoCreate": true, "emailDomains": "example.com", "defaultRootRole": "Viewer",
			"enableGroupSyncing": true, "groupJsonPath": "groups", "providerName": "Test IdP"})
		h, a := s.h, s.h.AdminToken
		for _, p := range []map[string]any{{"id": "shop", "name": "Shop"}, {"id": "other", "name": "Other"}, {"id": "secret", "name": "Secret", "mode": "private"}} {
			h.Do(t, "POST", "/api/admin/projects", a, p).Want(t, 201)
		}
		h.Do(t, "POST", "/api/admin/projects/shop/features", a, map[string]any{"name": "cart"}).Want(t, 201)
		for _, env := range []string{"development", "production"} {
			h.Do(t, "POST", "/api/admin/projects/shop/features/cart/environments/"+env+"/strategies", a, map[string]any{"name": "default"}).Want(t, 200)
		}
		// A flag without strategies: switching it on adds one, which the
		// role does not allow (CREATE_FEATURE_STRATEGY), so no switch.
		h.Do(t, "POST", "/api/admin/projects/shop/features", a, map[string]any{"name": "bare"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/projects/other/features", a, map[string]any{"name": "widget"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/projects/other/features/widget/environments/development/strategies", a, map[string]any{"name": "default"}).Want(t, 200)
		h.Do(t, "POST", "/api/admin/projects/secret/features", a, map[string]any{"name": "hidden-flag", "description": "not for everyone"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/projects/secret/features/hidden-flag/environments/development/on", a, nil).Want(t, 200)
		var role struct{ Roles struct{ ID int64 } }
		h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "Dev switcher", "type": "custom", "description": "switches flags in development",
			"permissions": []any{map[string]any{"name": "UPDATE_FEATURE_ENVIRONMENT", "environment": "development"}}}).Want(t, 200).JSON(t, &role)
		var group struct{ ID int64 }
		h.Do(t, "POST", "/api/admin/groups", a, map[string]any{"name": "shop-devs", "mappingsSSO": []string{"shop-engineers"}}).Want(t, 201).JSON(t, &group)
		h.Do(t, "POST", "/api/admin/projects/shop/access", a, map[string]any{"roles": []int64{role.Roles.ID}, "groups": []any{map[string]any{"id": group.ID}}}).Want(t, 200)
		s.p.Storage.set(func(p *providerStorage) { p.groups["alice"] = []string{"shop-engineers", "coffee-club"} })

		// bob is at a domain auto-creation does not allow.
		bob := newUIBrowser(t)
		ssoSignInUI(bob, s, "bob", "bob-pass")
		bob.waitFor("the refusal on the sign-in page", `location.pathname === "/login" && !!document.querySelector("#sso-error")`)
		if msg := eval[string](bob, `document.querySelector("#sso-error").textContent`); !strings.Contains(msg, "not in a domain allowed") {
			t.Errorf("bob's refusal says %q", msg)
		}
		if n := countPeople(t, h); n != 1 {
			t.Fatalf("%d people after bob's refused sign-in, want the admin only", n)
		}

		alice := newUIBrowser(t)
		ssoSignInUI(alice, s, "alice", "alice-pass")
		alice.waitFor("the flags page, signed in", `location.pathname === "/flags" && !!document.querySelector("#who")`)
		if who := eval[string](alice, `document.querySelector("#who").textContent`); who != "alice@example.com (Viewer)" {
			t.Fatalf("alice is signed in as %q, want a new Viewer", who)
		}
		if members := groupMembers(t, h, group.ID); members != "alice@example.com" {
			t.Fatalf("shop-devs has members %q after alice's sign-in, want alice@example.com", members)
		}

		// The switches alice sees: shop's in development, nothing else.
		switches := func() string {
			alice.open(h.URL + "/flags")
			return eval[string](alice, `[...document.querySelectorAll("input[data-switch]")].map(i => i.dataset.switch.replace("/api/admin/projects/", "").replace("/features", "").replace("/environments", "")).sort().join(",")`)
		}
		if got := switches(); got != "shop/cart/development" {
			t.Fatalf("alice's switches on the flags list: %q, want shop/cart/development only", got)
		}
		alice.open(h.URL + "/projects/shop/flags/cart")
		if n := eval[int](alice, `document.querySelectorAll("#env-production input[data-switch], #env-production details.editor").length`); n != 0 {
			t.Errorf("alice sees %d change controls in shop's production", n)
		}
		alice.open(h.URL + "/projects/shop/flags/bare")
		if n := eval[int](alice, `document.querySelectorAll("main input[data-switch]").length`); n != 0 {
			t.Errorf("alice sees %d switches for bare, which she cannot switch on (it has no strategy)", n)
		}
		alice.open(h.URL + "/projects/shop/flags/cart")
		alice.do("switch cart on in development", chromedp.Click(`#env-development input[data-switch]`))
		waitAPI(t, "cart on in development", func() bool {
			return strings.Contains(h.Do(t, "GET", "/api/admin/projects/shop/features/cart/environments/development", a, nil).String(), `"enabled":true`)
		})
		force := func(path string) string {
			return eval[string](alice, fmt.Sprintf(`fetch(%q, {method: "POST", headers: {"X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content}}).then(async r => r.status + " " + await r.text())`, path))
		}
		for _, path := range []string{"/api/admin/projects/shop/features/cart/environments/production/on", "/api/admin/projects/other/features/widget/environments/development/on"} {
			if got := force(path); !strings.HasPrefix(got, "403 ") || !strings.Contains(got, "UPDATE_FEATURE_ENVIRONMENT") {
				t.Errorf("alice forcing %s got %s, want a 403 naming UPDATE_FEATURE_ENVIRONMENT", path, got)
			}
		}
		if on := enabledIn(t, h, "shop", "cart"); on != "development" {
			t.Errorf("cart is on in %q, want development only", on)
		}

		// The private project leaves no trace, while the rest shows.
		alice.open(h.URL + "/flags")
		if body := eval[string](alice, `document.querySelector("main").innerText`); !strings.Contains(body, "cart") || !strings.Contains(body, "widget") || strings.Contains(body, "hidden-flag") {
			t.Errorf("alice's flags list: want cart and widget and no hidden-flag:\n%s", body)
		}
		alice.open(h.URL + "/flags?query=hidden")
		if body := eval[string](alice, `document.querySelector("main").innerText`); strings.Contains(body, "hidden-flag") || strings.Contains(body, "not for everyone") {
			t.Errorf("alice's search for hidden finds the private flag:\n%s", body)
		}
		if got := eval[string](alice, `fetch("/api/admin/search/features?query=hidden").then(r => r.json()).then(v => String(v.total) + " " + v.features.map(f => f.name).join(","))`); got != "0 " {
			t.Errorf("alice's search API for hidden answers %q", got)
		}
		alice.open(h.URL + "/events")
		if body := eval[string](alice, `document.querySelector("main").innerText`); !strings.Contains(body, "flag cart") || strings.Contains(body, "hidden-flag") || strings.Contains(body, "project secret") {
			t.Errorf("alice's event log: want cart's events and nothing of the private project:\n%s", body)
		}
		alice.open(h.URL + "/playground")
		alice.set("#pg-userId", "someone")
		alice.do("run the playground", chromedp.Click("#pg-run"))
		alice.waitFor("the results", `!!document.querySelector('article[data-flag="cart"]')`)
		if eval[bool](alice, `!!document.querySelector('article[data-flag="hidden-flag"]') || document.querySelector("main").innerText.includes("hidden-flag")`) {
			t.Errorf("alice's playground evaluates the private project's flag")
		}
		alice.screenshot("sso-journey-01-" + db.Kind)

		// The provider stops claiming shop-engineers: at alice's next
		// sign-in she leaves the group, and its rights with it.
		s.p.Storage.set(func(p *providerStorage) { p.groups["alice"] = []string{"coffee-club"} })
		alice.open(h.URL + "/flags")
		alice.do("sign out", chromedp.Click("#signout"))
		alice.waitFor("the sign-in page", `location.pathname === "/login"`)
		ssoSignInUI(alice, s, "alice", "alice-pass")
		alice.waitFor("the flags page, signed in again", `location.pathname === "/flags" && !!document.querySelector("#who")`)
		if members := groupMembers(t, h, group.ID); members != "" {
			t.Errorf("shop-devs has members %q after the claim was dropped, want none", members)
		}
		if got := switches(); got != "" {
			t.Errorf("after leaving the group alice still has switches: %q", got)
		}
		if got := force("/api/admin/projects/shop/features/cart/environments/development/off"); !strings.HasPrefix(got, "403 ") {
			t.Errorf("after leaving the group alice switching cart off in development got %.80s…, want 403", got)
		}
	})
}

// ssoSignInUI signs b in through the sign-in page's provider button and
// the provider's own login page; the caller waits for where it leads.
func ssoSignInUI(b *uiBrowser, s *ssoSetup, user, password string) {
	b.t.Helper()
	b.open(s.h.URL + "/flags")
	b.waitFor("the sign-in page with the provider's button", `location.pathname === "/login" && !!document.querySelector("a[data-sso]")`)
	b.do("choose the provider", chromedp.Click(`a[data-sso]`))
	b.waitFor("the provider's login page", fmt.Sprintf(`location.origin === %q && !!document.querySelector("#username")`, s.p.URL))
	b.do("sign in at the provider",
		chromedp.SendKeys("#username", user),
		chromedp.SendKeys("#password", password),
		chromedp.Click(`button[type="submit"]`))
}

// groupMembers lists a group's members' emails, comma-separated.
func groupMembers(t *testing.T, h *servertest.Harness, id int64) string {
	t.Helper()
	var g struct {
		Users []struct {
			User struct{ Email string }
		}
	}
	h.Do(t, "GET", fmt.Sprintf("/api/admin/groups/%d", id), h.AdminToken, nil).Want(t, 200).JSON(t, &g)
	var out []string
	for _, u := range g.Users {
		out = append(out, u.User.Email)
	}
	return strings.Join(out, ",")
}

// enabledIn lists the environments a flag is on in, comma-separated.
func enabledIn(t *testing.T, h *servertest.Harness, project, flag string) string {
	t.Helper()
	var f struct {
		Environments []struct {
			Name    string
			Enabled bool
		}
	}
	h.Do(t, "GET", "/api/admin/projects/"+project+"/features/"+flag, h.AdminToken, nil).Want(t, 200).JSON(t, &f)
	var on []string
	for _, e := range f.Environments {
		if e.Enabled {
			on = append(on, e.Name)
		}
	}
	return strings.Join(on, ",")
}
