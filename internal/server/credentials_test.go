package server_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// TestCredentialsOfDeactivatedPeople: when an admin deactivates a person,
// every credential of theirs fails at once with 401 — the browser session
// and their personal access tokens, on this instance even right after the
// token was used (cached); another instance stops accepting the token
// within the token cache's bound. Reactivation makes the tokens work again
// (the rows were kept); deleting the person, or a service account, ends
// their tokens for good.
func TestCredentialsOfDeactivatedPeople(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		h2 := servertest.Start(t, h.DB)
		admin, csrf := signIn(t, h, "admin", servertest.AdminPassword)
		asAdmin := func(method, path string, body any) *servertest.Response {
			return h.Do(t, method, path, "", body, "Cookie", admin, "X-CSRF-Token", csrf)
		}
		var ed struct{ ID int64 }
		asAdmin("POST", "/api/admin/user-admin", map[string]any{"username": "ed", "password": "ed-password", "rootRole": "Editor"}).Want(t, 201).JSON(t, &ed)
		session, ecsrf := signIn(t, h, "ed", "ed-password")
		var pat struct{ Secret string }
		h.Do(t, "POST", "/api/admin/user/tokens", "", map[string]any{"description": "laptop"}, "Cookie", session, "X-CSRF-Token", ecsrf).
			Want(t, 201).JSON(t, &pat)

		n := 0
		createFlag := func(h *servertest.Harness, token string) *servertest.Response {
			n++
			return h.Do(t, "POST", "/api/admin/projects/default/features", token, map[string]any{"name": fmt.Sprintf("by-ed-%d", n)})
		}
		// Both work, and both instances have the token in their caches.
		createFlag(h, pat.Secret).Want(t, 201)
		createFlag(h2, pat.Secret).Want(t, 201)
		h.Do(t, "GET", "/api/admin/projects", "", nil, "Cookie", session).Want(t, 200)

		// Deactivated: at once on this instance, for the token and the session.
		asAdmin("PUT", fmt.Sprintf("/api/admin/user-admin/%d", ed.ID), map[string]any{"deactivated": true}).Want(t, 200)
		createFlag(h, pat.Secret).WantError(t, 401, "AuthenticationRequired")
		h.Do(t, "GET", "/api/admin/projects", pat.Secret, nil).WantError(t, 401, "AuthenticationRequired")
		h.Do(t, "GET", "/api/admin/projects", "", nil, "Cookie", session).WantError(t, 401, "AuthenticationRequired")
		h.Do(t, "POST", "/auth/simple/login", "", map[string]string{"username": "ed", "password": "ed-password"}).
			WantError(t, 401, "AuthenticationRequired", "deactivated")
		// The other instance within its cache's bound (5 s), and for good.
		testutil.Eventually(t, 30*time.Second, "the second instance to refuse the deactivated person's token", func() bool {
			return h2.Do(t, "GET", "/api/admin/projects", pat.Secret, nil).Status == 401
		})
		createFlag(h2, pat.Secret).WantError(t, 401, "AuthenticationRequired")

		// Reactivated: the same token works again (its row was kept); the
		// session ended with the deactivation, so the person signs in anew.
		asAdmin("PUT", fmt.Sprintf("/api/admin/user-admin/%d", ed.ID), map[string]any{"deactivated": false}).Want(t, 200)
		createFlag(h, pat.Secret).Want(t, 201)
		h.Do(t, "GET", "/api/admin/projects", "", nil, "Cookie", session).WantError(t, 401, "AuthenticationRequired")
		session, _ = signIn(t, h, "ed", "ed-password")
		h.Do(t, "GET", "/api/admin/projects", "", nil, "Cookie", session).Want(t, 200)

		// Deleted: the token and the session fail at once.
		asAdmin("DELETE", fmt.Sprintf("/api/admin/user-admin/%d", ed.ID), nil).Want(t, 200)
		createFlag(h, pat.Secret).WantError(t, 401, "AuthenticationRequired")
		h.Do(t, "GET", "/api/admin/projects", "", nil, "Cookie", session).WantError(t, 401, "AuthenticationRequired")

		// A deleted service account's token fails at once.
		var sa struct{ ID int64 }
		h.Do(t, "POST", "/api/admin/service-account", h.AdminToken, map[string]any{"username": "deploy-bot", "rootRole": 2}).Want(t, 201).JSON(t, &sa)
		var tok struct{ Secret string }
		h.Do(t, "POST", fmt.Sprintf("/api/admin/service-account/%d/token", sa.ID), h.AdminToken, map[string]any{"description": "ci"}).Want(t, 201).JSON(t, &tok)
		createFlag(h, tok.Secret).Want(t, 201)
		h.Do(t, "DELETE", fmt.Sprintf("/api/admin/service-account/%d", sa.ID), h.AdminToken, nil).Want(t, 200)
		createFlag(h, tok.Secret).WantError(t, 401, "AuthenticationRequired")
	})
}
