package server_test

import (
	"fmt"
	"net/url"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// person creates someone with a root role (by name) and returns a personal
// access token and their id.
func person(t *testing.T, h *servertest.Harness, name, role string) (string, int64) {
	t.Helper()
	ids := map[string]int64{"Admin": 1, "Editor": 2, "Viewer": 3}
	return matrixUser(t, h, name, ids[role])
}

// TestPrivateProjectIsInvisibleToNonMembers: a private project, its flags,
// events and API tokens do not exist for someone who holds no role in it —
// not in the projects list, the flags list, the search, the event log, the
// playground or the token list — until a group they are in gets a role
// there; admins see everything.
func TestPrivateProjectIsInvisibleToNonMembers(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		a := h.AdminToken
		h.Do(t, "POST", "/api/admin/projects", a, map[string]any{"id": "secret", "name": "Secret", "mode": "private"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/projects/secret/features", a, map[string]any{"name": "hidden-flag"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/projects/secret/features/hidden-flag/environments/development/on", a, nil).Want(t, 200)
		h.Do(t, "POST", "/api/admin/projects/secret/features/hidden-flag/environments/development/strategies", a, map[string]any{
			"name": "default", "constraints": []map[string]any{{"contextName": "appName", "operator": "IN", "values": []string{"x"}}}}).Want(t, 200)
		createFlag(t, h, "open-flag")
		h.Do(t, "POST", "/api/admin/api-tokens", a, map[string]any{"tokenName": "secret-sdk", "type": "client", "environment": "development", "projects": []string{"secret"}}).Want(t, 201)
		var tokenReader struct{ Roles struct{ ID int64 } }
		h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "TokenReader", "type": "root-custom", "description": "reads tokens",
			"permissions": []any{map[string]any{"name": "READ_CLIENT_API_TOKEN"}}}).Want(t, 200).JSON(t, &tokenReader)
		viewer, viewerID := person(t, h, "vic", "Viewer")
		editor, _ := person(t, h, "eddie", "Editor")
		reader, _ := matrixUser(t, h, "tess", tokenReader.Roles.ID)

		seesSecret := func(token string) map[string]bool {
			t.Helper()
			seen := map[string]bool{}
			var projects struct{ Projects []struct{ ID string } }
			h.Do(t, "GET", "/api/admin/projects", token, nil).Want(t, 200).JSON(t, &projects)
			for _, p := range projects.Projects {
				seen["projects list"] = seen["projects list"] || p.ID == "secret"
			}
			seen["project"] = h.Do(t, "GET", "/api/admin/projects/secret", token, nil).Status == 200
			seen["flags list"] = h.Do(t, "GET", "/api/admin/projects/secret/features", token, nil).Status == 200
			seen["flag"] = h.Do(t, "GET", "/api/admin/projects/secret/features/hidden-flag", token, nil).Status == 200
			seen["flag by name"] = h.Do(t, "GET", "/api/admin/features/hidden-flag/tags", token, nil).Status == 200
			var search struct {
				Features []struct{ Name string }
				Total    int
			}
			h.Do(t, "GET", "/api/admin/search/features?query=flag", token, nil).Want(t, 200).JSON(t, &search)
			for _, f := range search.Features {
				seen["search"] = seen["search"] || f.Name == "hidden-flag"
			}
			var events struct {
				Events      []struct{ Project *string }
				TotalEvents int
			}
			h.Do(t, "POST", "/api/admin/events/search", token, map[string]any{}).Want(t, 200).JSON(t, &events)
			for _, e := range events.Events {
				seen["events"] = seen["events"] || (e.Project != nil && *e.Project == "secret")
			}
			h.Do(t, "POST", "/api/admin/events/search", token, map[string]any{"project": "secret"}).Want(t, 200).JSON(t, &events)
			seen["events of the project"] = len(events.Events) > 0 || events.TotalEvents > 0
			h.Do(t, "POST", "/api/admin/events/search", token, map[string]any{"query": "hidden-flag"}).Want(t, 200).JSON(t, &events)
			seen["event text search"] = len(events.Events) > 0
			seen["flag's events"] = h.Do(t, "GET", "/api/admin/events/hidden-flag", token, nil).Status == 200
			var uses struct {
				Strategies []struct{ FeatureName string }
			}
			h.Do(t, "GET", "/api/admin/context/appName/strategies", token, nil).Want(t, 200).JSON(t, &uses)
			seen["context field uses"] = len(uses.Strategies) > 0
			var pg struct{ Features []struct{ Name string } }
			h.Do(t, "POST", "/api/admin/playground", token, map[string]any{"environment": "development", "context": map[string]any{}}).Want(t, 200).JSON(t, &pg)
			for _, f := range pg.Features {
				seen["playground"] = seen["playground"] || f.Name == "hidden-flag"
			}
			return seen
		}
		for name, token := range map[string]string{"viewer": viewer, "editor": editor} {
			for what, saw := range seesSecret(token) {
				if saw {
					t.Errorf("%s, not a member, sees the private project in: %s", name, what)
				}
			}
		}
		for what, saw := range seesSecret(a) {
			if !saw {
				t.Errorf("the admin token does not see the private project in: %s", what)
			}
		}
		// Not visible means not there, also for changes (404, not 403).
		h.Do(t, "POST", "/api/admin/projects/secret/features", editor, map[string]any{"name": "sneaky"}).WantError(t, 404, "NotFoundError")
		h.Do(t, "POST", "/api/admin/projects/secret/features/hidden-flag/environments/development/off", editor, nil).WantError(t, 404, "NotFoundError")
		h.Do(t, "GET", "/api/admin/projects/default/features/hidden-flag", editor, nil).WantError(t, 404, "NotFoundError")
		h.Do(t, "POST", "/api/admin/features/hidden-flag/stale/on", editor, nil).WantError(t, 404, "NotFoundError")
		var tokens struct{ Tokens []struct{ TokenName string } }
		h.Do(t, "GET", "/api/admin/api-tokens", reader, nil).Want(t, 200).JSON(t, &tokens)
		for _, tok := range tokens.Tokens {
			if tok.TokenName == "secret-sdk" {
				t.Errorf("a token reader outside the private project sees its token")
			}
		}
		if len(tokens.Tokens) == 0 {
			t.Errorf("the token reader sees no token at all")
		}

		// A group the viewer is in gets Member in the project: now they see
		// it all, and may switch its flags.
		var g struct{ ID int64 }
		h.Do(t, "POST", "/api/admin/groups", a, map[string]any{"name": "secret-team", "users": []any{map[string]any{"user": map[string]any{"id": viewerID}}}}).Want(t, 201).JSON(t, &g)
		h.Do(t, "POST", "/api/admin/projects/secret/access", a, map[string]any{"roles": []int{5}, "groups": []any{map[string]any{"id": g.ID}}}).Want(t, 200)
		for what, saw := range seesSecret(viewer) {
			if !saw {
				t.Errorf("a member through a group does not see the private project in: %s", what)
			}
		}
		h.Do(t, "POST", "/api/admin/projects/secret/features/hidden-flag/environments/development/off", viewer, nil).Want(t, 200)
		var prof struct{ Projects []string }
		h.Do(t, "GET", "/api/admin/user/profile", viewer, nil).Want(t, 200).JSON(t, &prof)
		if strings.Join(prof.Projects, ",") != "default,secret" {
			t.Errorf("profile projects %v", prof.Projects)
		}
	})
}

// TestProtectedProjectOnlyMembersCreateFlags: in a protected project an
// Editor who is not a member changes flags but creates none; as a member
// they may.
func TestProtectedProjectOnlyMembersCreateFlags(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		a := h.AdminToken
		h.Do(t, "POST", "/api/admin/projects", a, map[string]any{"id": "guarded", "name": "Guarded", "mode": "protected"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/projects/guarded/features", a, map[string]any{"name": "g1"}).Want(t, 201)
		editor, editorID := person(t, h, "eve", "Editor")
		h.Do(t, "GET", "/api/admin/projects/guarded/features", editor, nil).Want(t, 200)
		h.Do(t, "POST", "/api/admin/projects/guarded/features", editor, map[string]any{"name": "g2"}).WantError(t, 403, "NoAccessError", "CREATE_FEATURE")
		h.Do(t, "POST", "/api/admin/projects/guarded/features/g1/clone", editor, map[string]any{"name": "g3"}).WantError(t, 403, "NoAccessError", "CREATE_FEATURE")
		h.Do(t, "POST", "/api/admin/projects/guarded/features/g1/environments/production/on", editor, nil).Want(t, 200)
		h.Do(t, "PUT", fmt.Sprintf("/api/admin/projects/guarded/users/%d/roles", editorID), a, map[string]any{"roles": []int{5}}).Want(t, 200)
		h.Do(t, "POST", "/api/admin/projects/guarded/features", editor, map[string]any{"name": "g2"}).Want(t, 201)
		// The Editor's own projects are theirs: they own what they create.
		h.Do(t, "POST", "/api/admin/projects", editor, map[string]any{"id": "eves", "name": "Eve's", "mode": "private"}).Want(t, 201)
		h.Do(t, "PUT", "/api/admin/projects/eves", editor, map[string]any{"name": "Eve's own", "mode": "private"}).Want(t, 200)
		var acc struct {
			Users []struct {
				ID    int64
				Roles []int64
			}
		}
		h.Do(t, "GET", "/api/admin/projects/eves/access", editor, nil).Want(t, 200).JSON(t, &acc)
		if len(acc.Users) != 1 || acc.Users[0].ID != editorID || len(acc.Users[0].Roles) != 1 || acc.Users[0].Roles[0] != 4 {
			t.Fatalf("access of the creator's project: %+v", acc)
		}
		// Other Editors do not own it (and, private, do not see it).
		other, _ := person(t, h, "otto", "Editor")
		h.Do(t, "PUT", "/api/admin/projects/guarded", other, map[string]any{"name": "x"}).WantError(t, 403, "NoAccessError", "UPDATE_PROJECT")
		h.Do(t, "GET", "/api/admin/projects/eves", other, nil).WantError(t, 404, "NotFoundError")
	})
}

// TestRolesGroupsAndProjectAccessAPI: the write routes validate with clear
// errors, refuse what Unleash refuses, and write their events.
func TestRolesGroupsAndProjectAccessAPI(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		a := h.AdminToken
		perm := func(name, env string) map[string]any {
			m := map[string]any{"name": name}
			if env != "" {
				m["environment"] = env
			}
			return m
		}
		h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "", "type": "custom"}).WantError(t, 400, "ValidationError", "name")
		h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "x", "type": "admin"}).WantError(t, 400, "ValidationError", "type")
		h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "x", "permissions": []any{perm("NOPE", "")}}).WantError(t, 400, "ValidationError", "NOPE")
		h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "x", "permissions": []any{perm("UPDATE_FEATURE", "production")}}).WantError(t, 400, "ValidationError", "not an environment permission")
		h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "x", "permissions": []any{perm("UPDATE_FEATURE_ENVIRONMENT", "moon")}}).WantError(t, 400, "ValidationError", "moon")
		h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "x", "type": "root-custom", "permissions": []any{perm("CREATE_FEATURE", "")}}).WantError(t, 400, "ValidationError", "root permissions only")
		h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "x", "type": "custom", "permissions": []any{perm("CREATE_SEGMENT", "")}}).WantError(t, 400, "ValidationError", "root permission")
		h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "Editor"}).WantError(t, 409, "NameExistsError")
		h.Do(t, "PUT", "/api/admin/roles/2", a, map[string]any{"name": "Editor2"}).WantError(t, 400, "InvalidOperationError", "built in")
		h.Do(t, "DELETE", "/api/admin/roles/4", a, nil).WantError(t, 400, "InvalidOperationError")
		h.Do(t, "GET", "/api/admin/roles/999", a, nil).WantError(t, 404, "NotFoundError")
		h.Do(t, "GET", "/api/admin/roles/abc", a, nil).WantError(t, 400, "ValidationError")

		var role struct{ Roles struct{ ID int64 } }
		h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "Releaser", "description": "ships to production",
			"permissions": []any{perm("UPDATE_FEATURE_ENVIRONMENT", "production"), perm("CREATE_FEATURE_STRATEGY", "production"),
				perm("SKIP_CHANGE_REQUEST", "production")}}).Want(t, 200).JSON(t, &role)
		rid := fmt.Sprint(role.Roles.ID)
		h.Do(t, "POST", "/api/admin/roles/validate", a, map[string]any{"name": "releaser"}).WantError(t, 409, "NameExistsError")
		h.Do(t, "POST", "/api/admin/roles/validate", a, map[string]any{"name": "Releaser", "roleId": role.Roles.ID}).Want(t, 200)
		var got struct {
			Type        string
			Permissions []struct {
				Name        string
				Environment *string
			}
		}
		h.Do(t, "GET", "/api/admin/roles/"+rid, a, nil).Want(t, 200).JSON(t, &got)
		if got.Type != "custom" || len(got.Permissions) != 3 || got.Permissions[0].Environment == nil || *got.Permissions[0].Environment != "production" {
			t.Fatalf("role: %+v", got)
		}

		editor, editorID := person(t, h, "ed", "Editor")
		viewer, viewerID := person(t, h, "vi", "Viewer")
		h.Do(t, "POST", "/api/admin/groups", a, map[string]any{"name": " "}).WantError(t, 400, "ValidationError", "name")
		h.Do(t, "POST", "/api/admin/groups", a, map[string]any{"name": "g", "rootRole": 4}).WantError(t, 400, "ValidationError", "rootRole")
		h.Do(t, "POST", "/api/admin/groups", a, map[string]any{"name": "g", "users": []any{map[string]any{"user": map[string]any{"id": 999}}}}).WantError(t, 400, "ValidationError", "999")
		h.Do(t, "POST", "/api/admin/groups", editor, map[string]any{"name": "g"}).WantError(t, 403, "NoAccessError", "ADMIN")
		var g struct {
			ID    int64
			Users []struct{ User struct{ ID int64 } }
		}
		h.Do(t, "POST", "/api/admin/groups", a, map[string]any{"name": "releasers", "mappingsSSO": []string{"release-eng"},
			"users": []any{map[string]any{"user": map[string]any{"id": viewerID}}}}).Want(t, 201).JSON(t, &g)
		h.Do(t, "POST", "/api/admin/groups", a, map[string]any{"name": "releasers"}).WantError(t, 409, "NameExistsError")
		gid := fmt.Sprint(g.ID)

		// Project access: an Editor who owns the project may give what they
		// hold, not a role holding what they do not (SKIP_CHANGE_REQUEST).
		h.Do(t, "POST", "/api/admin/projects", editor, map[string]any{"id": "shop", "name": "Shop"}).Want(t, 201)
		h.Do(t, "PUT", "/api/admin/projects/shop/groups/"+gid+"/roles", editor, map[string]any{"roles": []int64{role.Roles.ID}}).WantError(t, 403, "NoAccessError", "SKIP_CHANGE_REQUEST")
		h.Do(t, "PUT", "/api/admin/projects/shop/groups/"+gid+"/roles", editor, map[string]any{"roles": []int64{5}}).Want(t, 200)
		h.Do(t, "PUT", "/api/admin/projects/shop/groups/"+gid+"/roles", editor, map[string]any{"roles": []int64{1}}).WantError(t, 400, "ValidationError", "not a project role")
		h.Do(t, "PUT", "/api/admin/projects/shop/users/999/roles", editor, map[string]any{"roles": []int64{5}}).WantError(t, 404, "NotFoundError")
		h.Do(t, "PUT", "/api/admin/projects/shop/access", a, map[string]any{"roles": []any{map[string]any{"id": role.Roles.ID, "users": []int64{viewerID}, "groups": []int64{g.ID}},
			map[string]any{"id": 4, "users": []int64{editorID}, "groups": []int64{}}}}).Want(t, 200)
		h.Do(t, "PUT", "/api/admin/projects/shop/access", a, map[string]any{}).WantError(t, 400, "ValidationError", "roles")
		h.Do(t, "POST", "/api/admin/projects/shop/access", a, map[string]any{"roles": []int{}, "users": []any{map[string]any{"id": viewerID}}}).WantError(t, 400, "ValidationError", "roles")
		h.Do(t, "POST", "/api/admin/projects/nope/access", a, map[string]any{"roles": []int{5}, "users": []any{map[string]any{"id": viewerID}}}).WantError(t, 404, "NotFoundError")
		// The viewer switches in production (their role), not in development.
		h.Do(t, "POST", "/api/admin/projects/shop/features", a, map[string]any{"name": "cart"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/projects/shop/features/cart/environments/production/on", viewer, nil).Want(t, 200)
		h.Do(t, "POST", "/api/admin/projects/shop/features/cart/environments/development/on", viewer, nil).
			WantError(t, 403, "NoAccessError", "UPDATE_FEATURE_ENVIRONMENT", `"development" environment`)
		var roles struct{ Roles []struct{ ID int64 } }
		h.Do(t, "GET", "/api/admin/projects/shop/roles", viewer, nil).Want(t, 200).JSON(t, &roles)
		if len(roles.Roles) != 1 || roles.Roles[0].ID != role.Roles.ID {
			t.Fatalf("viewer's roles in shop: %+v", roles)
		}
		h.Do(t, "DELETE", fmt.Sprintf("/api/admin/projects/shop/users/%d/roles", viewerID), a, nil).Want(t, 200)
		h.Do(t, "DELETE", "/api/admin/projects/shop/groups/"+gid+"/roles", a, nil).Want(t, 200)
		h.Do(t, "POST", "/api/admin/projects/shop/features/cart/environments/production/off", viewer, nil).WantError(t, 403, "NoAccessError")
		// A custom root role that someone holds cannot go; a project role
		// goes with its assignments.
		var keeper struct{ Roles struct{ ID int64 } }
		h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "Keeper", "type": "root-custom", "permissions": []any{perm("CREATE_SEGMENT", "")}}).Want(t, 200).JSON(t, &keeper)
		h.Do(t, "PUT", "/api/admin/groups/"+gid, a, map[string]any{"name": "release-team", "rootRole": keeper.Roles.ID, "users": []any{}}).Want(t, 200)
		h.Do(t, "DELETE", fmt.Sprint("/api/admin/roles/", keeper.Roles.ID), a, nil).WantError(t, 400, "RoleInUseError", "root role")
		h.Do(t, "PUT", "/api/admin/groups/"+gid, a, map[string]any{"name": "release-team", "rootRole": 2, "users": []any{}}).Want(t, 200)
		h.Do(t, "DELETE", fmt.Sprint("/api/admin/roles/", keeper.Roles.ID), a, nil).Want(t, 200)
		h.Do(t, "PUT", fmt.Sprintf("/api/admin/projects/shop/users/%d/roles", viewerID), a, map[string]any{"roles": []int64{role.Roles.ID}}).Want(t, 200)
		h.Do(t, "DELETE", "/api/admin/roles/"+rid, a, nil).Want(t, 200)
		var acc struct{ Users []struct{ ID int64 } }
		h.Do(t, "GET", "/api/admin/projects/shop/access", a, nil).Want(t, 200).JSON(t, &acc)
		if len(acc.Users) != 1 || acc.Users[0].ID != editorID {
			t.Errorf("after deleting the role, shop's access: %+v", acc)
		}
		h.Do(t, "DELETE", "/api/admin/groups/"+gid, a, nil).Want(t, 200)
		h.Do(t, "GET", "/api/admin/groups/"+gid, a, nil).WantError(t, 404, "NotFoundError")

		for _, typ := range []string{"role-created", "role-deleted", "group-created", "group-updated", "group-deleted", "project-access-updated",
			"project-access-group-roles-updated", "project-access-user-roles-deleted", "project-access-group-roles-deleted"} {
			if len(eventsOfType(t, h, typ)) == 0 {
				t.Errorf("no %s event", typ)
			}
		}
		updates := eventsOfType(t, h, "group-updated")
		upd := updates[len(updates)-1] // the first: renamed, members removed
		if data := upd["data"].(map[string]any); data["name"] != "release-team" || fmt.Sprint(data["users"]) != "[]" || fmt.Sprint(upd["preData"].(map[string]any)["users"]) != fmt.Sprintf("[%d]", viewerID) {
			t.Errorf("group-updated event: %v", upd)
		}
	})
}

// TestPeopleWithoutPasswordAndOneTimeLinks: a person created without a
// password (as Unleash allows) gets a one-time link, which sets a password
// once; admins make new links; answers have Unleash's user shape.
func TestPeopleWithoutPasswordAndOneTimeLinks(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		a := h.AdminToken
		var u map[string]any
		h.Do(t, "POST", "/api/admin/user-admin", a, map[string]any{"email": "nora@example.com", "name": "Nora", "rootRole": 2, "sendEmail": false}).Want(t, 201).JSON(t, &u)
		if u["rootRole"] != float64(2) || u["emailSent"] != false || u["hasPassword"] != false || u["accountType"] != "User" {
			t.Fatalf("created: %v", u)
		}
		if _, ok := u["username"]; ok {
			t.Fatalf("an absent username must be left out, not null: %v", u)
		}
		link, _ := u["inviteLink"].(string)
		lu, err := url.Parse(link)
		if err != nil || lu.Path != "/reset-password" || lu.Query().Get("token") == "" {
			t.Fatalf("invite link %q", link)
		}
		token := lu.Query().Get("token")
		id := fmt.Sprint(u["id"])
		h.Do(t, "GET", "/api/admin/user-admin/"+id, a, nil).Want(t, 200).JSON(t, &u)
		if u["email"] != "nora@example.com" || u["rootRole"] != float64(2) {
			t.Fatalf("get: %v", u)
		}
		var found []map[string]any
		h.Do(t, "GET", "/api/admin/user-admin/search?q=NORA@", a, nil).Want(t, 200).JSON(t, &found)
		if len(found) != 1 || found[0]["id"] != u["id"] {
			t.Fatalf("search: %v", found)
		}
		h.Do(t, "GET", "/api/admin/user-admin/search?q=n", a, nil).Want(t, 200).JSON(t, &found)
		if len(found) != 0 {
			t.Fatalf("a one-character search finds %v", found)
		}
		h.Do(t, "POST", "/auth/simple/login", "", map[string]any{"username": "nora@example.com", "password": "whatever1"}).WantError(t, 401, "AuthenticationRequired")
		h.Do(t, "GET", "/auth/reset/validate?token="+token, "", nil).Want(t, 200)
		h.Do(t, "POST", "/auth/reset/password", "", map[string]any{"token": token, "password": "short"}).WantError(t, 400, "ValidationError", "password")
		h.Do(t, "POST", "/auth/reset/password", "", map[string]any{"token": token, "password": "nora-password"}).Want(t, 200)
		h.Do(t, "POST", "/auth/reset/password", "", map[string]any{"token": token, "password": "nora-password2"}).WantError(t, 401, "AuthenticationRequired", "link")
		h.Do(t, "GET", "/auth/reset/validate?token="+token, "", nil).WantError(t, 401, "AuthenticationRequired")
		h.Do(t, "POST", "/auth/simple/login", "", map[string]any{"username": "nora@example.com", "password": "nora-password"}).Want(t, 200)

		var reset struct{ ResetPasswordURL string }
		h.Do(t, "POST", "/api/admin/user-admin/reset-password", a, map[string]any{"id": "nora@example.com"}).Want(t, 200).JSON(t, &reset)
		if !strings.Contains(reset.ResetPasswordURL, "/reset-password?token=") {
			t.Fatalf("reset link: %+v", reset)
		}
		h.Do(t, "POST", "/api/admin/user-admin/reset-password", a, map[string]any{"id": "nobody"}).WantError(t, 404, "NotFoundError")
		viewer, _ := person(t, h, "vi", "Viewer")
		h.Do(t, "POST", "/api/admin/user-admin/reset-password", viewer, map[string]any{"id": "nora@example.com"}).WantError(t, 403, "NoAccessError", "ADMIN")
		h.Do(t, "PUT", "/api/admin/user-admin/"+id, a, map[string]any{"rootRole": "Viewer", "name": "Nora N"}).Want(t, 200).JSON(t, &u)
		if u["rootRole"] != float64(3) || u["name"] != "Nora N" {
			t.Fatalf("update: %v", u)
		}
		h.Do(t, "PUT", "/api/admin/user-admin/"+id, a, map[string]any{"rootRole": 4}).WantError(t, 400, "ValidationError", "rootRole")
		for _, typ := range []string{"user-created", "user-updated"} {
			if len(eventsOfType(t, h, typ)) == 0 {
				t.Errorf("no %s event", typ)
			}
		}
		var events struct{ Events []struct{ Type string } }
		h.Do(t, "POST", "/api/admin/events/search", a, map[string]any{"query": "user-password"}).Want(t, 200).JSON(t, &events)
		kinds := map[string]int{}
		for _, e := range events.Events {
			kinds[e.Type]++
		}
		if kinds["user-password-reset"] != 1 || kinds["user-password-link-created"] != 2 {
			t.Errorf("password events: %v", kinds)
		}
	})
}

// TestServiceAccountsActWithTheirProjectRoles: a Viewer service account
// given Member in one project switches that project's flags with its
// token, and nothing elsewhere.
func TestServiceAccountsActWithTheirProjectRoles(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		a := h.AdminToken
		var sa struct{ ID int64 }
		h.Do(t, "POST", "/api/admin/service-account", a, map[string]any{"username": "ci", "name": "CI", "rootRole": 3}).Want(t, 201).JSON(t, &sa)
		var tok struct{ Secret string }
		h.Do(t, "POST", fmt.Sprintf("/api/admin/service-account/%d/token", sa.ID), a, map[string]any{"description": "ci"}).Want(t, 201).JSON(t, &tok)
		h.Do(t, "POST", "/api/admin/projects", a, map[string]any{"id": "ci-project", "name": "CI"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/projects/ci-project/features", a, map[string]any{"name": "ci-flag"}).Want(t, 201)
		createFlag(t, h, "other-flag")
		h.Do(t, "POST", "/api/admin/projects/ci-project/features/ci-flag/environments/development/on", tok.Secret, nil).WantError(t, 403, "NoAccessError")
		h.Do(t, "POST", "/api/admin/projects/ci-project/access", a, map[string]any{"roles": []int{5}, "users": []any{map[string]any{"id": sa.ID}}}).Want(t, 200)
		h.Do(t, "POST", "/api/admin/projects/ci-project/features/ci-flag/environments/development/on", tok.Secret, nil).Want(t, 200)
		h.Do(t, "POST", envPath("other-flag", "development")+"/on", tok.Secret, nil).WantError(t, 403, "NoAccessError")
	})
}
