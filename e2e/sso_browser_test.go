package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestSSOInChromium signs in through the sign-in page's "Sign in with …"
// button and the real provider's login page, in Chromium: a new person
// at an allowed domain is created with the default root role; a person an
// admin added is found by email; a person at another domain is sent back
// to the sign-in page with the refusal's message and no session.
func TestSSOInChromium(t *testing.T) {
	s := startSSO(t, servertest.NewSQLite(t), map[string]any{"autoCreate": true, "emailDomains": "example.com",
		"defaultRootRole": "Editor", "providerName": "Test IdP"})
	bob := s.h.Do(t, "POST", "/api/admin/user-admin", s.h.AdminToken,
		map[string]any{"email": "Bob.Smith@Other.test", "rootRole": "Admin", "password": "bob-local-password"}).Want(t, 201).Map(t)

	signIn := func(user, password string) *uiBrowser {
		b := newUIBrowser(t)
		b.open(s.h.URL + "/flags")
		b.waitFor("the sign-in page with the provider's button",
			`location.pathname === "/login" && !!document.querySelector("a[data-sso]") && document.querySelector("a[data-sso]").textContent.trim() === "Sign in with Test IdP"`)
		b.do("choose the provider", chromedp.Click(`a[data-sso]`))
		b.waitFor("the provider's login page", fmt.Sprintf(`location.origin === %q && !!document.querySelector("#username")`, s.p.URL))
		b.do("sign in at the provider",
			chromedp.SendKeys("#username", user),
			chromedp.SendKeys("#password", password),
			chromedp.Click(`button[type="submit"]`))
		return b
	}
	session := `fetch("/api/admin/user/session", {headers: {Accept: "application/json"}}).then(r => r.ok ? r.json().then(v => JSON.stringify(v.user)) : String(r.status))`

	alice := signIn("alice", "alice-pass")
	alice.waitFor("the flags page, signed in", `location.pathname === "/flags" && !!document.querySelector("#who")`)
	if who := eval[string](alice, session); !strings.Contains(who, `"name":"alice@example.com"`) || !strings.Contains(who, `"rootRole":"Editor"`) {
		t.Errorf("alice is signed in as %s, want a new Editor alice@example.com", who)
	}

	b := signIn("bob", "bob-pass")
	b.waitFor("the flags page, signed in", `location.pathname === "/flags" && !!document.querySelector("#who")`)
	if who := eval[string](b, session); !strings.Contains(who, fmt.Sprintf(`"id":%v`, bob["id"])) || !strings.Contains(who, `"rootRole":"Admin"`) {
		t.Errorf("bob is signed in as %s, want the existing person %v with Admin", who, bob["id"])
	}

	m := signIn("mallory", "mallory-pass")
	m.waitFor("the sign-in page with the refusal", `location.pathname === "/login" && !!document.querySelector("#sso-error")`)
	if msg := eval[string](m, `document.querySelector("#sso-error").textContent`); !strings.Contains(msg, "not in a domain allowed") {
		t.Errorf("the sign-in page says %q, want the domain refusal", msg)
	}
	if who := eval[string](m, session); who != "401" {
		t.Errorf("mallory has a session: %s", who)
	}
	if n := countPeople(t, s.h); n != 3 {
		t.Errorf("%d people, want 3 (admin, bob, alice)", n)
	}
}
