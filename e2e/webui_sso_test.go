package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestWebUISSOSettings sets single sign-on up on the web UI's Single
// sign-on screen in real Chromium, against the real OpenID provider: the
// admin fills the OIDC form (the root roles offered include a custom one)
// and the next sign-in through the provider creates alice with that role.
// A second save, with the secret left empty, keeps the stored secret and
// changes the allowed domains and the button's name, which the next
// sign-in (bob, at the newly allowed domain) follows. The page never
// carries the secret. Switching password sign-in off shows the
// break-glass warning and refuses a password sign-in, except the first
// admin's. A Viewer has no link to the screen and gets no form on it.
func TestWebUISSOSettings(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	s := &ssoSetup{h: h, p: startProvider(t, h.URL+"/auth/oidc/callback")}
	a := h.AdminToken
	var auditor struct{ Roles struct{ ID int64 } }
	h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "Auditor", "type": "root-custom", "description": "reads roles",
		"permissions": []any{map[string]any{"name": "READ_ROLE"}}}).Want(t, 200).JSON(t, &auditor)
	h.Do(t, "POST", "/api/admin/user-admin", a, map[string]any{"username": "pat", "password": "pat-password", "rootRole": "Editor"}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/user-admin", a, map[string]any{"username": "vera", "password": "vera-password", "rootRole": "Viewer"}).Want(t, 201)
	settings := func() map[string]any {
		return h.Do(t, "GET", "/api/admin/auth/oidc/settings", a, nil).Want(t, 200).Map(t)
	}

	// A Viewer: no link to the screen, and nothing to change on it.
	viewer := newUIBrowser(t)
	viewer.signIn(h.URL, "vera", "vera-password")
	if n := eval[int](viewer, `document.querySelectorAll('nav a[href$="/sso"]').length`); n != 0 {
		t.Error("a Viewer's menu links to the single sign-on screen")
	}
	viewer.open(h.URL + "/sso")
	if n := eval[int](viewer, `document.querySelectorAll("main form, main input, main [data-call]").length`); n != 0 {
		t.Errorf("a Viewer sees %d controls on the single sign-on screen", n)
	}
	if text := eval[string](viewer, `document.querySelector("main").innerText`); !strings.Contains(text, "UPDATE_AUTH_CONFIGURATION") {
		t.Errorf("the Viewer's single sign-on screen does not say why it is empty: %s", text)
	}

	admin := newUIBrowser(t)
	admin.signIn(h.URL, servertest.AdminUser, servertest.AdminPassword)
	admin.do("open single sign-on", chromedp.Click(`nav a[href$="/sso"]`))
	admin.waitFor("the screen", `location.pathname === "/sso" && !!document.querySelector("#oidc-settings")`)
	if got := admin.unlabelled(); got != "" {
		t.Errorf("controls without a name:\n%s", got)
	}
	if got := eval[string](admin, `[...document.querySelectorAll("#oidc-root-role option")].map(o => o.textContent).join(",")`); got != "Admin,Editor,Viewer,Auditor (custom)" {
		t.Errorf("the root roles offered: %q", got)
	}
	if got := eval[string](admin, `document.querySelector("#oidc-root-role").selectedOptions[0].textContent`); got != "Viewer" {
		t.Errorf("the default root role shown first is %q, want Viewer", got)
	}
	admin.do("enable", chromedp.Click("#oidc-enabled"))
	admin.set("#oidc-provider-name", "Company IdP")
	admin.set("#oidc-discover-url", s.p.URL+"/.well-known/openid-configuration")
	admin.set("#oidc-client-id", providerClientID)
	admin.set("#oidc-secret", providerClientSecret)
	admin.do("auto-create", chromedp.Click("#oidc-auto-create"))
	admin.set("#oidc-email-domains", "example.com")
	admin.set("#oidc-root-role", fmt.Sprint(auditor.Roles.ID))
	admin.do("group syncing", chromedp.Click("#oidc-group-sync"))
	admin.set("#oidc-group-path", "realm_access.roles")
	admin.do("save", chromedp.Click(`#oidc-settings button[type="submit"]`))
	admin.waitFor("the saved settings", `document.readyState === "complete" && document.querySelector("#oidc-secret-help").textContent.includes("a secret is stored")`)
	got := settings()
	if got["enabled"] != true || got["providerName"] != "Company IdP" || got["secret"] != providerClientSecret || got["defaultRootRoleId"] != float64(auditor.Roles.ID) ||
		got["emailDomains"] != "example.com" || got["enableGroupSyncing"] != true || got["groupJsonPath"] != "realm_access.roles" || got["autoCreate"] != true {
		t.Fatalf("the settings saved from the screen: %v", got)
	}
	if eval[bool](admin, fmt.Sprintf(`document.documentElement.outerHTML.includes(%q)`, providerClientSecret)) {
		t.Fatal("the single sign-on screen carries the client secret")
	}
	if v := eval[string](admin, `document.querySelector("#oidc-secret").value`); v != "" {
		t.Errorf("the secret field shows %q", v)
	}
	admin.screenshot("sso-01-settings")

	// The next sign-in follows them: alice is created with the custom role.
	alice := newUIBrowser(t)
	alice.open(h.URL + "/login")
	if got := eval[string](alice, `(document.querySelector("a[data-sso]") || {}).textContent || ""`); strings.TrimSpace(got) != "Sign in with Company IdP" {
		t.Errorf("the sign-in page offers %q", got)
	}
	ssoSignInUI(alice, s, "alice", "alice-pass")
	alice.waitFor("the flags page, signed in", `location.pathname === "/flags" && !!document.querySelector("#who")`)
	if who := eval[string](alice, `document.querySelector("#who").textContent`); who != "alice@example.com (Auditor)" {
		t.Errorf("alice is %q, want a new Auditor", who)
	}

	// Save again without retyping the secret: it stays; the new domain
	// and name apply at the next sign-in.
	admin.set("#oidc-email-domains", "example.com, other.test")
	admin.set("#oidc-provider-name", "Other IdP")
	admin.do("save", chromedp.Click(`#oidc-settings button[type="submit"]`))
	waitAPI(t, "the new provider name", func() bool { return settings()["providerName"] == "Other IdP" })
	if got := settings(); got["secret"] != providerClientSecret || got["emailDomains"] != "example.com, other.test" || got["defaultRootRoleId"] != float64(auditor.Roles.ID) {
		t.Fatalf("after a save without the secret: %v", got)
	}
	bob := newUIBrowser(t)
	bob.open(h.URL + "/login")
	if got := eval[string](bob, `(document.querySelector("a[data-sso]") || {}).textContent || ""`); strings.TrimSpace(got) != "Sign in with Other IdP" {
		t.Errorf("after the change the sign-in page offers %q", got)
	}
	ssoSignInUI(bob, s, "bob", "bob-pass")
	bob.waitFor("the flags page, signed in", `location.pathname === "/flags" && !!document.querySelector("#who")`)
	if who := eval[string](bob, `document.querySelector("#who").textContent`); who != "bob.smith@other.test (Auditor)" {
		t.Errorf("bob is %q, want a new Auditor", who)
	}

	// Password sign-in off: the warning names the break-glass admin.
	admin.open(h.URL + "/sso")
	if warn := eval[string](admin, `document.querySelector("#break-glass").textContent`); !strings.Contains(warn, "Break-glass admin") || !strings.Contains(warn, "INIT_ADMIN_USER") {
		t.Errorf("the password switch's warning: %q", warn)
	}
	if eval[string](admin, `document.querySelector("#password-switch").getAttribute("aria-describedby")`) != "break-glass" {
		t.Error("the password switch is not described by its warning")
	}
	admin.do("switch password sign-in off", chromedp.Click("#password-switch"), chromedp.Click(`#password-settings button[type="submit"]`))
	waitAPI(t, "password sign-in off", func() bool {
		return h.Do(t, "GET", "/api/admin/auth/simple/settings", a, nil).Want(t, 200).Map(t)["disabled"] == true
	})
	admin.waitFor("the screen again, with the warning next to the OIDC switch", `document.readyState === "complete" && !!document.querySelector("#oidc-enabled-help")`)
	admin.screenshot("sso-02-password-off")
	pat := newUIBrowser(t)
	pat.open(h.URL + "/login")
	pat.waitFor("the sign-in page saying password sign-in is off", `!!document.querySelector("#password-off")`)
	pat.do("sign in with a password", chromedp.SendKeys("#username", "pat"), chromedp.SendKeys("#password", "pat-password"), chromedp.Click(`#login button[type="submit"]`))
	pat.waitFor("the refusal", `(document.querySelector("[data-error]") || {}).textContent?.includes("Password sign-in is switched off")`)
	breakGlass := newUIBrowser(t)
	breakGlass.signIn(h.URL, servertest.AdminUser, servertest.AdminPassword)

	// At phone width the screen does not scroll sideways.
	breakGlass.do("phone width", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	breakGlass.open(h.URL + "/sso")
	breakGlass.noSideScroll("/sso")
}
