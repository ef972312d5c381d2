package ssoapi_test

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

const settingsPath = "/api/admin/auth/oidc/settings"

// TestOIDCSettings covers the settings routes on both databases: Unleash's
// defaults, ADMIN only, a clear 400 for each bad value, the secret sealed
// in the database and never in an event, a blank or masked secret keeping
// the stored one, properties left out keeping theirs, the events, and the
// body Unleash's Terraform provider sends to switch SSO off.
func TestOIDCSettings(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		got := h.Do(t, "GET", settingsPath, h.AdminToken, nil).Want(t, 200).Map(t)
		if got["enabled"] != false || got["defaultRootRole"] != "Viewer" || got["defaultRootRoleId"] != 3.0 ||
			got["groupJsonPath"] != "groups" || got["idTokenSigningAlgorithm"] != "RS256" || got["enablePkce"] != true {
			t.Errorf("defaults: %v", got)
		}
		editor := h.UserToken(t, "ed", "Editor")
		h.Do(t, "GET", settingsPath, editor, nil).WantError(t, 403, "NoAccessError", "UPDATE_AUTH_CONFIGURATION")
		h.Do(t, "POST", settingsPath, editor, map[string]any{"enabled": false}).WantError(t, 403, "NoAccessError", "UPDATE_AUTH_CONFIGURATION")

		for _, c := range []struct {
			body     map[string]any
			fragment string
		}{
			{map[string]any{"enabled": true, "clientId": "c", "secret": "s"}, "`discoverUrl` property is required"},
			{map[string]any{"enabled": true, "discoverUrl": "https://idp.example/.well-known/openid-configuration", "secret": "s"}, "`clientId` property is required"},
			{map[string]any{"enabled": true, "discoverUrl": "https://idp.example/.well-known/openid-configuration", "clientId": "c"}, "`secret` property"},
			{map[string]any{"discoverUrl": "ftp://idp.example/x"}, "`discoverUrl`"},
			{map[string]any{"discoverUrl": "https://user:pw@idp.example/x"}, "`discoverUrl`"},
			{map[string]any{"idTokenSigningAlgorithm": "none"}, "`idTokenSigningAlgorithm`"},
			{map[string]any{"idTokenSigningAlgorithm": "HS256"}, "`idTokenSigningAlgorithm`"},
			{map[string]any{"groupJsonPath": "realm_access..roles"}, "`groupJsonPath`"},
			{map[string]any{"groupJsonPath": "['unclosed"}, "`groupJsonPath`"},
			{map[string]any{"emailDomains": "example.com, someone@evil.test"}, "`emailDomains`"},
			{map[string]any{"defaultRootRoleId": 7}, "`defaultRootRoleId`"},
			{map[string]any{"defaultRootRoleId": "x"}, "`defaultRootRoleId`"},
			{map[string]any{"defaultRootRole": "Owner"}, "`defaultRootRole`"},
			{map[string]any{"clientId": strings.Repeat("c", 501)}, "too long"},
		} {
			h.Do(t, "POST", settingsPath, h.AdminToken, c.body).WantError(t, 400, "ValidationError", c.fragment)
		}
		h.Do(t, "POST", settingsPath, h.AdminToken, `{"enabled": "yes"}`).WantError(t, 400, "ValidationError", "enabled")

		const secret = "a-client-secret-nobody-may-see"
		set := h.Do(t, "POST", settingsPath, h.AdminToken, map[string]any{"enabled": true, "discoverUrl": "https://idp.example/.well-known/openid-configuration",
			"clientId": "bunting", "secret": secret, "autoCreate": true, "emailDomains": "example.com,Example.org", "defaultRootRoleId": 2,
			"enableGroupSyncing": true, "groupJsonPath": "realm_access.roles", "addGroupsScope": true, "enableSingleSignOut": true}).Want(t, 200).Map(t)
		if set["secret"] != secret || set["defaultRootRole"] != "Editor" || set["defaultRootRoleId"] != 2.0 || set["groupJsonPath"] != "realm_access.roles" {
			t.Errorf("after POST: %v", set)
		}
		var stored string
		if err := h.Store.DB().QueryRowContext(context.Background(), `SELECT document || COALESCE(secret, '') FROM auth_settings WHERE name = 'oidc'`).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(stored, secret) || !strings.Contains(stored, "v1:") {
			t.Errorf("the database holds the secret in clear or not sealed: %s", stored)
		}

		// A blank, missing or masked secret keeps the stored one; the PUT
		// leaves out properties, which keep their values.
		for _, body := range []string{`{"secret": ""}`, `{"secret": "********"}`, `{"clientId": "bunting2"}`} {
			got := h.Do(t, "PUT", settingsPath, h.AdminToken, body).Want(t, 200).Map(t)
			if got["secret"] != secret || got["emailDomains"] != "example.com,Example.org" || got["enableGroupSyncing"] != true {
				t.Errorf("after PUT %s: %v", body, got)
			}
		}

		// Unleash's Terraform provider switches SSO off with blank id and
		// secret.
		off := h.Do(t, "POST", settingsPath, h.AdminToken, `{"enabled": false, "clientId": " ", "secret": " "}`).Want(t, 200).Map(t)
		if off["enabled"] != false || off["clientId"] != "" {
			t.Errorf("switched off: %v", off)
		}

		events := h.Do(t, "GET", "/api/admin/events", h.AdminToken, nil).Want(t, 200)
		if strings.Contains(string(events.Body), secret) {
			t.Errorf("the event log shows the secret")
		}
		var log struct {
			Events []struct {
				Type string         `json:"type"`
				Data map[string]any `json:"data"`
			} `json:"events"`
		}
		events.JSON(t, &log)
		var types []string
		for _, e := range log.Events {
			if e.Data["id"] == "unleash.enterprise.auth.oidc" {
				types = append(types, e.Type)
			}
		}
		if strings.Join(types, ",") != "setting-updated,setting-updated,setting-created" {
			t.Errorf("OIDC setting events %v, want created then two updates (a no-op change writes none)", types)
		}
	})
}

// TestOIDCSettingsOnAnotherInstance: a change made on one instance shows
// on another sharing the database at once, without a restart.
func TestOIDCSettingsOnAnotherInstance(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		a, b := servertest.Start(t, db), servertest.Start(t, db)
		if opts := a.Do(t, "GET", "/auth/options", "", nil).Want(t, 200).Map(t); len(opts["options"].([]any)) != 0 {
			t.Fatalf("options before: %v", opts)
		}
		b.Do(t, "POST", settingsPath, b.AdminToken, map[string]any{"enabled": true, "discoverUrl": "https://login.example.com/.well-known/openid-configuration",
			"clientId": "c", "secret": "s"}).Want(t, 200)
		opts := a.Do(t, "GET", "/auth/options", "", nil).Want(t, 200).Map(t)
		if list := opts["options"].([]any); len(list) != 1 || list[0].(map[string]any)["message"] != "Sign in with login.example.com" {
			t.Fatalf("options on the other instance: %v", opts)
		}
		if got := a.Do(t, "GET", settingsPath, a.AdminToken, nil).Want(t, 200).Map(t); got["secret"] != "s" {
			t.Errorf("the other instance reads secret %v", got["secret"])
		}
	})
}

// TestOIDCSettingsFromEnvironment: a fresh install stores the OIDC_*
// settings; a later start with other values keeps what is stored.
func TestOIDCSettingsFromEnvironment(t *testing.T) {
	env := map[string]string{"OIDC_ENABLED": "true", "OIDC_DISCOVER_URL": "https://idp.example/.well-known/openid-configuration",
		"OIDC_CLIENT_ID": "from-env", "OIDC_CLIENT_SECRET": "env-secret", "OIDC_AUTO_CREATE": "true",
		"OIDC_AUTO_CREATE_EMAIL_DOMAINS": "example.com", "OIDC_DEFAULT_ROOT_ROLE": "editor", "OIDC_GROUP_JSON_PATH": "roles",
		"OIDC_ID_TOKEN_SIGNING_ALGORITHM": "es256", "OIDC_PROVIDER_NAME": "Example SSO", "DISABLE_PASSWORD_SIGN_IN": "true"}
	fromEnv := func(env map[string]string) servertest.Option {
		return func(c *server.Config) {
			parsed, err := server.ParseConfig(nil, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, nil)
			if err != nil {
				t.Fatal(err)
			}
			c.SSO = parsed.SSO
		}
	}
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		env := maps.Clone(env)
		h := servertest.Start(t, db, fromEnv(env))
		got := h.Do(t, "GET", settingsPath, h.AdminToken, nil).Want(t, 200).Map(t)
		if got["enabled"] != true || got["clientId"] != "from-env" || got["secret"] != "env-secret" || got["defaultRootRole"] != "Editor" ||
			got["groupJsonPath"] != "roles" || got["idTokenSigningAlgorithm"] != "ES256" || got["providerName"] != "Example SSO" {
			t.Errorf("seeded settings: %v", got)
		}
		if opts := h.Do(t, "GET", "/auth/options", "", nil).Want(t, 200).Map(t); opts["passwordSignIn"] != false {
			t.Errorf("password sign-in should start switched off: %v", opts)
		}
		h.Stop()
		env["OIDC_CLIENT_ID"] = "changed"
		h2 := servertest.Start(t, db, fromEnv(env))
		if got := h2.Do(t, "GET", settingsPath, h2.AdminToken, nil).Want(t, 200).Map(t); got["clientId"] != "from-env" {
			t.Errorf("a restart replaced stored settings: %v", got)
		}
	})
}

// TestPasswordSignInSwitch: password sign-in can be switched off only
// while OIDC is on; then only the break-glass admin (the first admin)
// signs in with a password.
func TestPasswordSignInSwitch(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		const simple = "/api/admin/auth/simple/settings"
		h.Do(t, "POST", "/api/admin/user-admin", h.AdminToken, map[string]any{"username": "dana", "rootRole": "Admin", "password": "dana-password"}).Want(t, 201)
		h.Do(t, "POST", simple, h.AdminToken, map[string]any{"disabled": true}).WantError(t, 400, "ValidationError", "Enable sign-in with OIDC")
		h.Do(t, "POST", settingsPath, h.AdminToken, map[string]any{"enabled": true, "discoverUrl": "https://idp.example/.well-known/openid-configuration",
			"clientId": "c", "secret": "s"}).Want(t, 200)
		if got := h.Do(t, "PUT", simple, h.AdminToken, map[string]any{"disabled": true}).Want(t, 200).Map(t); got["disabled"] != true {
			t.Fatalf("switch off: %v", got)
		}
		login := func(user, pw string) *servertest.Response {
			return h.Do(t, "POST", "/auth/simple/login", "", map[string]any{"username": user, "password": pw})
		}
		login("dana", "dana-password").WantError(t, 403, "NoAccessError", "Password sign-in is switched off")
		login(servertest.AdminUser, servertest.AdminPassword).Want(t, 200)
		if got := h.Do(t, "GET", simple, h.AdminToken, nil).Want(t, 200).Map(t); got["disabled"] != true {
			t.Errorf("GET: %v", got)
		}
		h.Do(t, "PUT", simple, h.AdminToken, map[string]any{"disabled": false}).Want(t, 200)
		login("dana", "dana-password").Want(t, 200)
	})
}

// TestSecretNeedsKeyOnPostgres: PostgreSQL instances share a database, so
// storing a client secret without SECRETS_KEY is refused, naming it.
func TestSecretNeedsKeyOnPostgres(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		if db.Kind != "postgres" {
			return
		}
		h := servertest.Start(t, db, func(c *server.Config) { c.Secrets.Key = "" })
		h.Do(t, "POST", settingsPath, h.AdminToken, map[string]any{"secret": "s"}).WantError(t, 400, "ValidationError", "SECRETS_KEY")
	})
}

// TestOIDCDefaultCustomRootRole: the default root role may be a custom
// root role, named by id or by name in any case (never a project role),
// and the settings always answer its current name, after a rename too.
func TestOIDCDefaultCustomRootRole(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		a := h.AdminToken
		var role struct{ Roles struct{ ID float64 } }
		h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "Auditor", "type": "root-custom", "description": "",
			"permissions": []any{map[string]any{"name": "READ_ROLE"}}}).Want(t, 200).JSON(t, &role)
		got := h.Do(t, "PUT", settingsPath, a, map[string]any{"defaultRootRole": "auditor"}).Want(t, 200).Map(t)
		if got["defaultRootRole"] != "Auditor" || got["defaultRootRoleId"] != role.Roles.ID {
			t.Errorf("by name: %v", got)
		}
		h.Do(t, "PUT", settingsPath, a, map[string]any{"defaultRootRoleId": 2}).Want(t, 200)
		got = h.Do(t, "PUT", settingsPath, a, map[string]any{"defaultRootRoleId": role.Roles.ID}).Want(t, 200).Map(t)
		if got["defaultRootRole"] != "Auditor" || got["defaultRootRoleId"] != role.Roles.ID {
			t.Errorf("by id: %v", got)
		}
		h.Do(t, "PUT", settingsPath, a, map[string]any{"defaultRootRoleId": 4}).WantError(t, 400, "ValidationError", "`defaultRootRoleId`")
		h.Do(t, "PUT", fmt.Sprintf("/api/admin/roles/%v", role.Roles.ID), a, map[string]any{"name": "Reviewer", "type": "root-custom", "description": "",
			"permissions": []any{map[string]any{"name": "READ_ROLE"}}}).Want(t, 200)
		if got := h.Do(t, "GET", settingsPath, a, nil).Want(t, 200).Map(t); got["defaultRootRole"] != "Reviewer" || got["defaultRootRoleId"] != role.Roles.ID {
			t.Errorf("after the role was renamed: %v", got)
		}
	})
}
