package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// changeControls finds a page's controls that change something: forms and
// buttons that call the admin API, switches, editors' add buttons, moves,
// role pickers and password buttons.
const changeControls = `main form[data-api], main [data-call], main [data-switch], main [data-add], main button.move, main [data-put-field], main [data-password-link], main [data-reset-password]`

// TestWebUIViewerSeesNoChangeControls opens every screen as a Viewer, in
// real Chromium, with something on each to change (a flag with a strategy,
// a segment, a context field, a token, an integration, an application, a
// group, a custom role, project access, single sign-on set up): none shows
// a control that changes something (the Viewer could use none of them),
// and the menu links only to screens the Viewer may open. The admin, on
// the same screens, does see them (so the selector finds what it should);
// an Editor sees none on the screens whose changes need ADMIN.
func TestWebUIViewerSeesNoChangeControls(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t), func(c *server.Config) { c.Integrations.AllowedTargets = []string{"127.0.0.1/32"} })
	a := h.AdminToken
	h.Do(t, "POST", "/api/admin/projects/default/features", a, map[string]any{"name": "checkout"}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/projects/default/features/checkout/environments/development/strategies", a, map[string]any{"name": "default"}).Want(t, 200)
	h.Do(t, "POST", "/api/admin/segments", a, map[string]any{"name": "beta", "constraints": []any{}}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/context", a, map[string]any{"name": "region"}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/addons", a, map[string]any{"provider": "webhook", "enabled": false, "parameters": map[string]any{"url": "http://127.0.0.1:1/hook"}, "events": []string{}}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/groups", a, map[string]any{"name": "team", "mappingsSSO": []string{"team"}}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "Switcher", "type": "custom", "description": "",
		"permissions": []any{map[string]any{"name": "UPDATE_FEATURE_ENVIRONMENT"}}}).Want(t, 200)
	h.Do(t, "PUT", "/api/admin/auth/oidc/settings", a, map[string]any{"discoverUrl": "https://idp.example.com/.well-known/openid-configuration", "clientId": "bunting", "secret": "s3cret-of-the-client"}).Want(t, 200)
	now := time.Now().UTC().Format(time.RFC3339)
	h.Do(t, "POST", "/api/client/register", h.ClientToken, map[string]any{"appName": "shop", "instanceId": "shop-1", "sdkVersion": "unleash-client-go:4.5.0",
		"interval": 15000, "started": now, "strategies": []string{"default"}}).Want(t, 202)
	h.FlushUsage(t)
	h.Do(t, "POST", "/api/admin/user-admin", a, map[string]any{"username": "vera", "password": "vera-password", "rootRole": "Viewer"}).Want(t, 201)

	pages := []string{"/flags", "/flags/new", "/projects/default/flags/checkout", "/events", "/segments", "/context", "/playground", "/tokens",
		"/projects", "/projects/default/access", "/applications", "/applications/shop", "/signals", "/actions", "/actions/runs",
		"/integrations", "/integrations/1/log", "/users", "/groups", "/roles", "/sso"}
	admin := newUIBrowser(t)
	admin.signIn(h.URL, servertest.AdminUser, servertest.AdminPassword)
	adminSees := map[string]int{}
	for _, page := range pages {
		admin.open(h.URL + page)
		adminSees[page] = eval[int](admin, fmt.Sprintf(`document.querySelectorAll(%q).length`, changeControls))
	}

	viewer := newUIBrowser(t)
	viewer.signIn(h.URL, "vera", "vera-password")
	for _, page := range pages {
		viewer.open(h.URL + page)
		if got := eval[string](viewer, fmt.Sprintf(`[...document.querySelectorAll(%q)].map(e => e.outerHTML.slice(0, 100)).join("\n")`, changeControls)); got != "" {
			t.Errorf("a Viewer sees change controls on %s (the admin sees %d):\n%s", page, adminSees[page], got)
		}
	}
	for _, page := range []string{"/flags", "/projects/default/flags/checkout", "/segments", "/context", "/integrations", "/users", "/groups", "/roles", "/sso"} {
		if adminSees[page] == 0 {
			t.Errorf("the admin sees no change control on %s: the check cannot see them", page)
		}
	}
	viewer.open(h.URL + "/flags")
	links := eval[string](viewer, `[...document.querySelectorAll('nav[aria-label="Main"] a')].map(a => a.getAttribute("href")).join(" ")`)
	for _, hidden := range []string{"/flags/new", "/signals", "/integrations", "/users", "/groups", "/roles", "/sso"} {
		if strings.Contains(" "+links+" ", " "+hidden+" ") {
			t.Errorf("a Viewer's menu links to %s: %s", hidden, links)
		}
	}
	// An Editor holds more, but not ADMIN, which these screens' changes need
	// (CREATE_ADDON and the like included: the addon and sign-in settings
	// routes ask for ADMIN).
	h.Do(t, "POST", "/api/admin/user-admin", a, map[string]any{"username": "eddie", "password": "eddie-password", "rootRole": "Editor"}).Want(t, 201)
	editor := newUIBrowser(t)
	editor.signIn(h.URL, "eddie", "eddie-password")
	for _, page := range []string{"/integrations", "/integrations/1/log", "/users", "/groups", "/roles", "/sso", "/signals", "/actions", "/tokens"} {
		editor.open(h.URL + page)
		if got := eval[string](editor, fmt.Sprintf(`[...document.querySelectorAll(%q)].map(e => e.outerHTML.slice(0, 100)).join("\n")`, changeControls)); got != "" {
			t.Errorf("an Editor sees change controls on %s:\n%s", page, got)
		}
	}
	viewer.open(h.URL + "/sso")
	if eval[bool](viewer, `document.documentElement.outerHTML.includes("s3cret-of-the-client")`) {
		t.Error("the single sign-on screen shows a Viewer the client secret")
	}
}
