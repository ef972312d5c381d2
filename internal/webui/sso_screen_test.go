package webui_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestSSOScreenKeepsAMissingDefaultRole: when the default root role of
// single sign-on is a custom role that was deleted since, the screen shows
// it as missing and selected (saving keeps it and the API's message asks
// for another) instead of silently selecting the first role, Admin; and
// the page never carries the stored client secret.
func TestSSOScreenKeepsAMissingDefaultRole(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	a := h.AdminToken
	var role struct{ Roles struct{ ID int64 } }
	h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "Temporary", "type": "root-custom", "description": "",
		"permissions": []any{map[string]any{"name": "READ_ROLE"}}}).Want(t, 200).JSON(t, &role)
	h.Do(t, "PUT", "/api/admin/auth/oidc/settings", a, map[string]any{"discoverUrl": "https://idp.example.com/.well-known/openid-configuration",
		"clientId": "bunting", "secret": "very-secret-client-secret", "defaultRootRoleId": role.Roles.ID}).Want(t, 200)
	res := h.Do(t, "POST", "/auth/simple/login", "", map[string]string{"username": servertest.AdminUser, "password": servertest.AdminPassword}).Want(t, 200)
	cookie := strings.SplitN(res.Header.Get("Set-Cookie"), ";", 2)[0]

	_, page := get(t, h, "/sso", cookie)
	if !strings.Contains(page, fmt.Sprintf(`<option value="%d" selected>Temporary (custom)</option>`, role.Roles.ID)) {
		t.Errorf("the stored custom role is not the selected one:\n%s", selectOf(page))
	}
	h.Do(t, "DELETE", fmt.Sprintf("/api/admin/roles/%d", role.Roles.ID), a, nil).Want(t, 200)
	_, page = get(t, h, "/sso", cookie)
	sel := selectOf(page)
	if !strings.Contains(sel, `<option value="" selected>Temporary (no longer exists: choose another)</option>`) || strings.Count(sel, "selected") != 1 {
		t.Errorf("after the role was deleted the select is:\n%s", sel)
	}
	if strings.Contains(page, "very-secret-client-secret") {
		t.Error("the page carries the client secret")
	}
}

// selectOf is the default root role's select on the screen.
func selectOf(page string) string {
	return regexp.MustCompile(`(?s)<select id="oidc-root-role".*?</select>`).FindString(page)
}
