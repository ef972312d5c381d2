package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// signIn posts a username and password and returns the session cookie
// ("name=value") and the CSRF token.
func signIn(t *testing.T, h *servertest.Harness, user, password string) (cookie, csrf string) {
	t.Helper()
	res := h.Do(t, "POST", "/auth/simple/login", "", map[string]string{"username": user, "password": password}).Want(t, 200)
	var body struct {
		CSRFToken string `json:"csrfToken"`
		User      struct{ Name, RootRole string }
	}
	res.JSON(t, &body)
	if body.CSRFToken == "" || !strings.EqualFold(body.User.Name, user) {
		t.Fatalf("sign-in answered %s", res)
	}
	for _, c := range (&http.Response{Header: res.Header}).Cookies() {
		if c.Name == "bunting_session" {
			return c.Name + "=" + c.Value, body.CSRFToken
		}
	}
	t.Fatalf("sign-in set no session cookie: %v", res.Header)
	return "", ""
}

func TestSessionsSignInCSRFAndSignOut(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		h.Do(t, "POST", "/auth/simple/login", "", map[string]string{"username": "admin", "password": "wrong password"}).
			WantError(t, 401, "AuthenticationRequired", "Wrong username or password")
		h.Do(t, "POST", "/auth/simple/login", "", map[string]string{"username": "nobody", "password": "wrong password"}).
			WantError(t, 401, "AuthenticationRequired", "Wrong username or password")
		h.Do(t, "POST", "/auth/simple/login", "", `{"username":"admin"`).WantError(t, 400, "ValidationError")

		res := h.Do(t, "POST", "/auth/simple/login", "", map[string]string{"username": "admin", "password": servertest.AdminPassword}).Want(t, 200)
		setCookie := res.Header.Get("Set-Cookie")
		for _, want := range []string{"bunting_session=", "HttpOnly", "SameSite=Lax", "Path=/"} {
			if !strings.Contains(setCookie, want) {
				t.Errorf("Set-Cookie %q lacks %q", setCookie, want)
			}
		}
		if strings.Contains(setCookie, "Secure") {
			t.Errorf("Set-Cookie %q is Secure on plain HTTP", setCookie)
		}
		tls := h.Do(t, "POST", "/auth/simple/login", "", map[string]string{"username": "admin", "password": servertest.AdminPassword}, "X-Forwarded-Proto", "https").Want(t, 200)
		if !strings.Contains(tls.Header.Get("Set-Cookie"), "Secure") {
			t.Errorf("behind TLS the cookie is not Secure: %q", tls.Header.Get("Set-Cookie"))
		}

		cookie, csrf := signIn(t, h, "admin", servertest.AdminPassword)
		h.Do(t, "GET", "/api/admin/projects", "", nil, "Cookie", cookie).Want(t, 200)
		var who struct {
			CSRFToken   string `json:"csrfToken"`
			User        struct{ Name, RootRole string }
			Permissions []string
		}
		h.Do(t, "GET", "/api/admin/user/session", "", nil, "Cookie", cookie).Want(t, 200).JSON(t, &who)
		if who.CSRFToken != csrf || who.User.RootRole != "Admin" || len(who.Permissions) < 10 {
			t.Fatalf("session: %+v", who)
		}

		// A change needs the session's CSRF token.
		flag := map[string]any{"name": "from-the-ui"}
		h.Do(t, "POST", "/api/admin/projects/default/features", "", flag, "Cookie", cookie).WantError(t, 403, "NoAccessError", "CSRF")
		h.Do(t, "POST", "/api/admin/projects/default/features", "", flag, "Cookie", cookie, "X-CSRF-Token", csrf+"x").WantError(t, 403, "NoAccessError", "CSRF")
		h.Do(t, "POST", "/auth/logout", "", nil, "Cookie", cookie).WantError(t, 403, "NoAccessError", "CSRF")
		h.Do(t, "POST", "/api/admin/projects/default/features", "", flag, "Cookie", cookie, "X-CSRF-Token", csrf).Want(t, 201)

		// The event names the person.
		var events struct {
			Events []struct {
				Type            string
				CreatedBy       string `json:"createdBy"`
				CreatedByUserID *int64 `json:"createdByUserId"`
				FeatureName     string `json:"featureName"`
			}
		}
		h.Do(t, "GET", "/api/admin/events/from-the-ui", h.AdminToken, nil).Want(t, 200).JSON(t, &events)
		if len(events.Events) == 0 || events.Events[0].CreatedBy != "admin" || events.Events[0].CreatedByUserID == nil || *events.Events[0].CreatedByUserID < 1 {
			t.Fatalf("the flag's event does not name the person: %+v", events)
		}

		// The session lives in the database: another instance accepts it.
		h2 := servertest.Start(t, h.DB)
		h2.Do(t, "GET", "/api/admin/projects", "", nil, "Cookie", cookie).Want(t, 200)

		// Sign out ends this session only.
		other, otherCSRF := signIn(t, h, "admin", servertest.AdminPassword)
		out := h.Do(t, "POST", "/auth/logout", "", nil, "Cookie", cookie, "X-CSRF-Token", csrf).Want(t, 204)
		if !strings.Contains(out.Header.Get("Set-Cookie"), "Max-Age=0") {
			t.Errorf("sign-out did not clear the cookie: %q", out.Header.Get("Set-Cookie"))
		}
		h.Do(t, "GET", "/api/admin/projects", "", nil, "Cookie", cookie).WantError(t, 401, "AuthenticationRequired", "session has ended")
		h.Do(t, "GET", "/api/admin/projects", "", nil, "Cookie", other).Want(t, 200)

		// Sign out everywhere ends every session of the person, on every instance.
		third, _ := signIn(t, h2, "admin", servertest.AdminPassword)
		var ended struct{ SessionsEnded int }
		h.Do(t, "POST", "/auth/logout-everywhere", "", nil, "Cookie", other, "X-CSRF-Token", otherCSRF).Want(t, 200).JSON(t, &ended)
		if ended.SessionsEnded < 2 {
			t.Errorf("sign out everywhere ended %d sessions", ended.SessionsEnded)
		}
		h.Do(t, "GET", "/api/admin/projects", "", nil, "Cookie", other).WantError(t, 401, "AuthenticationRequired")
		h2.Do(t, "GET", "/api/admin/projects", "", nil, "Cookie", third).WantError(t, 401, "AuthenticationRequired")

		// An API token needs no CSRF token (no cookie involved).
		h.Do(t, "POST", "/api/admin/projects/default/features", h.AdminToken, map[string]any{"name": "from-a-token"}).Want(t, 201)
	})
}

func TestSessionsRolesAndPeople(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		admin, csrf := signIn(t, h, "admin", servertest.AdminPassword)
		h.Do(t, "POST", "/api/admin/user-admin", "", map[string]any{"username": "vera", "password": "short", "rootRole": "Viewer"},
			"Cookie", admin, "X-CSRF-Token", csrf).WantError(t, 400, "ValidationError", "password")
		var vera struct{ ID int64 }
		h.Do(t, "POST", "/api/admin/user-admin", "", map[string]any{"username": "vera", "password": "vera-password", "rootRole": "Viewer"},
			"Cookie", admin, "X-CSRF-Token", csrf).Want(t, 201).JSON(t, &vera)
		h.Do(t, "POST", "/api/admin/user-admin", "", map[string]any{"email": "ed@example.com", "password": "ed-password", "rootRole": 2},
			"Cookie", admin, "X-CSRF-Token", csrf).Want(t, 201)
		h.Do(t, "POST", "/api/admin/user-admin", "", map[string]any{"username": "vera", "password": "vera-password"},
			"Cookie", admin, "X-CSRF-Token", csrf).WantError(t, 409, "NameExistsError")

		// A Viewer reads but is refused every change, with its CSRF token right.
		viewer, vcsrf := signIn(t, h, "vera", "vera-password")
		h.Do(t, "GET", "/api/admin/projects/default/features", "", nil, "Cookie", viewer).Want(t, 200)
		h.Do(t, "POST", "/api/admin/projects/default/features", "", map[string]any{"name": "viewer-flag"},
			"Cookie", viewer, "X-CSRF-Token", vcsrf).WantError(t, 403, "NoAccessError", "CREATE_FEATURE")
		h.Do(t, "GET", "/api/admin/user-admin", "", nil, "Cookie", viewer).WantError(t, 403, "NoAccessError", "ADMIN")

		// An Editor (signed in by email, any case) changes flags but not tokens.
		editor, ecsrf := signIn(t, h, "Ed@Example.com", "ed-password")
		h.Do(t, "POST", "/api/admin/projects/default/features", "", map[string]any{"name": "editor-flag"},
			"Cookie", editor, "X-CSRF-Token", ecsrf).Want(t, 201)
		h.Do(t, "POST", "/api/admin/api-tokens", "", map[string]any{"tokenName": "x", "type": "client", "environment": "development"},
			"Cookie", editor, "X-CSRF-Token", ecsrf).WantError(t, 403, "NoAccessError")

		// Deactivating a person ends their sessions and refuses sign-in.
		h.Do(t, "PUT", fmt.Sprintf("/api/admin/user-admin/%d", vera.ID), "", map[string]any{"deactivated": true},
			"Cookie", admin, "X-CSRF-Token", csrf).Want(t, 200)
		h.Do(t, "GET", "/api/admin/projects", "", nil, "Cookie", viewer).WantError(t, 401, "AuthenticationRequired")
		h.Do(t, "POST", "/auth/simple/login", "", map[string]string{"username": "vera", "password": "vera-password"}).
			WantError(t, 401, "AuthenticationRequired", "deactivated")

		// A reset password works; the old one does not.
		h.Do(t, "POST", fmt.Sprintf("/api/admin/user-admin/%d/reset-password", vera.ID), "", map[string]any{"password": "new-vera-password"},
			"Cookie", admin, "X-CSRF-Token", csrf).Want(t, 200)
		h.Do(t, "PUT", fmt.Sprintf("/api/admin/user-admin/%d", vera.ID), "", map[string]any{"deactivated": false, "rootRole": "Editor"},
			"Cookie", admin, "X-CSRF-Token", csrf).Want(t, 200)
		signIn(t, h, "vera", "new-vera-password")

		// The last admin cannot demote itself.
		var me struct{ User struct{ ID int64 } }
		h.Do(t, "GET", "/api/admin/user/session", "", nil, "Cookie", admin).Want(t, 200).JSON(t, &me)
		h.Do(t, "PUT", fmt.Sprintf("/api/admin/user-admin/%d", me.User.ID), "", map[string]any{"rootRole": "Viewer"},
			"Cookie", admin, "X-CSRF-Token", csrf).WantError(t, 400, "ValidationError", "Admin")
	})
}

func TestSessionsLoginRateLimit(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		for i := 0; i < 5; i++ {
			h.Do(t, "POST", "/auth/simple/login", "", map[string]string{"username": "admin", "password": "guess-" + fmt.Sprint(i)}).
				WantError(t, 401, "AuthenticationRequired")
		}
		// Past the limit even the right password is refused, with a clear message.
		res := h.Do(t, "POST", "/auth/simple/login", "", map[string]string{"username": "admin", "password": servertest.AdminPassword})
		res.WantError(t, 429, "RateLimitError", "Too many failed sign-in attempts for this user", "Try again in")
		if res.Header.Get("Retry-After") == "" {
			t.Errorf("no Retry-After header: %v", res.Header)
		}
		// Another person is not blocked by someone else's failures.
		h.Do(t, "POST", "/api/admin/user-admin", h.AdminToken, map[string]any{"username": "other", "password": "other-password"}).Want(t, 201)
		signIn(t, h, "other", "other-password")
	})
}
