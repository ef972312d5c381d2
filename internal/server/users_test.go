package server_test

import (
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

func TestUserProfileAndRootRoles(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		viewer := accountToken(t, h, "viewer-bot", 3)
		editor := accountToken(t, h, "editor-bot", 2)
		admin := accountToken(t, h, "admin-bot", 1)

		var prof struct {
			RootRole struct {
				ID   int
				Type string
				Name string
			}
			Projects []string
			Features []any
		}
		h.Do(t, "GET", "/api/admin/user/profile", viewer, nil).Want(t, 200).JSON(t, &prof)
		if prof.RootRole.ID != 3 || prof.RootRole.Name != "Viewer" || prof.RootRole.Type != "root" ||
			len(prof.Projects) != 1 || prof.Projects[0] != "default" || prof.Features == nil || len(prof.Features) != 0 {
			t.Fatalf("viewer profile: %+v", prof)
		}
		h.Do(t, "GET", "/api/admin/user/profile", editor, nil).Want(t, 200).JSON(t, &prof)
		if prof.RootRole.Name != "Editor" || prof.RootRole.ID != 2 {
			t.Fatalf("editor profile: %+v", prof)
		}
		h.Do(t, "GET", "/api/admin/user/profile", h.AdminToken, nil).Want(t, 200).JSON(t, &prof)
		if prof.RootRole.Name != "Admin" {
			t.Fatalf("admin token profile: %+v", prof)
		}
		h.Do(t, "GET", "/api/admin/user/profile", "", nil).WantError(t, 401, "AuthenticationRequired")
		h.Do(t, "GET", "/api/admin/user/profile", h.ClientToken, nil).WantError(t, 403, "NoAccessError")

		// Viewer reads but cannot change.
		h.Do(t, "GET", "/api/admin/strategies", viewer, nil).Want(t, 200)
		h.Do(t, "GET", "/api/admin/feature-types", viewer, nil).Want(t, 200)
		h.Do(t, "POST", "/api/admin/strategies", viewer, map[string]any{"name": "v", "parameters": []any{}}).WantError(t, 403, "NoAccessError", "CREATE_STRATEGY")
		h.Do(t, "PUT", "/api/admin/strategies/default", viewer, map[string]any{"parameters": []any{}}).WantError(t, 403, "NoAccessError", "UPDATE_STRATEGY")
		h.Do(t, "PUT", "/api/admin/feature-types/release/lifetime", viewer, map[string]any{"lifetimeDays": 3}).WantError(t, 403, "NoAccessError", "ADMIN")
		// Editor changes but cannot manage tokens or accounts.
		h.Do(t, "POST", "/api/admin/strategies", editor, map[string]any{"name": "e", "parameters": []any{}}).Want(t, 201)
		h.Do(t, "GET", "/api/admin/service-account", editor, nil).WantError(t, 403, "NoAccessError", "ADMIN")
		h.Do(t, "POST", "/api/admin/service-account/1/token", editor, map[string]any{"description": "x"}).WantError(t, 403, "NoAccessError", "ADMIN")
		// 403 is decided before 415 and 400.
		h.Do(t, "POST", "/api/admin/strategies", viewer, "nope", "Content-Type", "text/plain").WantError(t, 403, "NoAccessError")
		// A user-role Admin may manage accounts.
		h.Do(t, "GET", "/api/admin/service-account", admin, nil).Want(t, 200)
		// Events record the user.
		evs := eventsOfType(t, h, "strategy-created")
		if evs[0]["createdBy"] != "editor-bot" || evs[0]["createdByUserId"] == nil {
			t.Fatalf("event actor: %v", evs[0])
		}
	})
}

func TestServiceAccountsAndTokens(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		var acct struct {
			ID       int64
			Username string
			RootRole int
		}
		h.Do(t, "POST", "/api/admin/service-account", h.AdminToken, map[string]any{"username": "ci", "name": "CI", "rootRole": "Editor"}).Want(t, 201).JSON(t, &acct)
		if acct.Username != "ci" || acct.RootRole != 2 {
			t.Fatalf("account: %+v", acct)
		}
		id := itoa(acct.ID)
		h.Do(t, "POST", "/api/admin/service-account", h.AdminToken, map[string]any{"username": "ci", "rootRole": 2}).WantError(t, 409, "NameExistsError")
		h.Do(t, "POST", "/api/admin/service-account", h.AdminToken, map[string]any{"username": "x", "rootRole": 9}).WantError(t, 400, "ValidationError", "rootRole")
		h.Do(t, "POST", "/api/admin/service-account", h.AdminToken, map[string]any{"username": "x"}).WantError(t, 400, "ValidationError", "rootRole")
		h.Do(t, "POST", "/api/admin/service-account", h.AdminToken, map[string]any{"rootRole": 1}).WantError(t, 400, "ValidationError", "username")

		var tok struct {
			ID     int64
			Secret string
		}
		h.Do(t, "POST", "/api/admin/service-account/"+id+"/token", h.AdminToken, map[string]any{"description": "deploys", "expiresAt": "2099-01-01T00:00:00Z"}).Want(t, 201).JSON(t, &tok)
		h.Do(t, "POST", "/api/admin/service-account/"+id+"/token", h.AdminToken, map[string]any{"description": "old", "expiresAt": "2001-01-01T00:00:00Z"}).WantError(t, 400, "ValidationError", "expiresAt")
		h.Do(t, "POST", "/api/admin/service-account/"+id+"/token", h.AdminToken, map[string]any{}).WantError(t, 400, "ValidationError", "description")
		h.Do(t, "POST", "/api/admin/service-account/999/token", h.AdminToken, map[string]any{"description": "x"}).WantError(t, 404, "NotFoundError")
		h.Do(t, "GET", "/api/admin/service-account/abc/token", h.AdminToken, nil).WantError(t, 400, "ValidationError", "id")
		var toks struct{ Pats []map[string]any }
		h.Do(t, "GET", "/api/admin/service-account/"+id+"/token", h.AdminToken, nil).Want(t, 200).JSON(t, &toks)
		if len(toks.Pats) != 1 || toks.Pats[0]["secret"] == tok.Secret {
			t.Fatalf("tokens list (must not show the secret): %v", toks)
		}
		// The token acts as the account; role changes apply.
		h.Do(t, "POST", "/api/admin/strategies", tok.Secret, map[string]any{"name": "s1", "parameters": []any{}}).Want(t, 201)
		h.Do(t, "PUT", "/api/admin/service-account/"+id, h.AdminToken, map[string]any{"rootRole": 3}).Want(t, 200)
		h.Do(t, "POST", "/api/admin/strategies", tok.Secret, map[string]any{"name": "s2", "parameters": []any{}}).WantError(t, 403, "NoAccessError")
		// Personal tokens of the calling user.
		var pat struct {
			ID     int64
			Secret string
		}
		h.Do(t, "POST", "/api/admin/user/tokens", tok.Secret, map[string]any{"description": "mine"}).Want(t, 201).JSON(t, &pat)
		var pats struct{ Pats []map[string]any }
		h.Do(t, "GET", "/api/admin/user/tokens", pat.Secret, nil).Want(t, 200).JSON(t, &pats)
		if len(pats.Pats) != 2 {
			t.Fatalf("pats: %v", pats)
		}
		h.Do(t, "GET", "/api/admin/user/tokens", h.AdminToken, nil).WantError(t, 400, "ValidationError", "user")
		h.Do(t, "DELETE", "/api/admin/user/tokens/"+itoa(pat.ID), tok.Secret, nil).Want(t, 200)
		h.Do(t, "DELETE", "/api/admin/user/tokens/"+itoa(pat.ID), tok.Secret, nil).WantError(t, 404, "NotFoundError")
		h.Do(t, "GET", "/api/admin/user/profile", pat.Secret, nil).WantError(t, 401, "AuthenticationRequired")
		// Revoking and deleting.
		h.Do(t, "DELETE", "/api/admin/service-account/"+id+"/token/"+itoa(tok.ID), h.AdminToken, nil).Want(t, 200)
		h.Do(t, "GET", "/api/admin/user/profile", tok.Secret, nil).WantError(t, 401, "AuthenticationRequired")
		h.Do(t, "DELETE", "/api/admin/service-account/"+id, h.AdminToken, nil).Want(t, 200)
		h.Do(t, "DELETE", "/api/admin/service-account/"+id, h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		for typ, want := range map[string]int{"service-account-created": 1, "service-account-updated": 1, "service-account-deleted": 1, "pat-created": 2, "pat-deleted": 2} {
			if evs := eventsOfType(t, h, typ); len(evs) != want {
				t.Errorf("%s: %d events, want %d", typ, len(evs), want)
			}
		}
	})
}
