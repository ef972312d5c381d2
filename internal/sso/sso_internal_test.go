package sso

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/secretbox"
)

// TestClaimedGroups reads groups where providers put them: a top-level
// list (Okta, Entra ID), nested objects (Keycloak's realm_access.roles),
// claim names holding dots (Auth0's namespaced claims), array indexes, a
// single name or a space-separated string.
func TestClaimedGroups(t *testing.T) {
	var claims map[string]any
	if err := json.Unmarshal([]byte(`{
		"groups": ["devs", "ops", "devs", ""],
		"realm_access": {"roles": ["admin-role", "user"]},
		"https://example.com/groups": ["auth0-group"],
		"cognito:groups": ["pool-group"],
		"orgs": [{"teams": ["a"]}, {"teams": ["b", 7]}],
		"single": "only-one",
		"spaced": "one two,three",
		"number": 3
	}`), &claims); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path  string
		want  []string
		found bool
	}{
		{"groups", []string{"devs", "ops"}, true},
		{"$.groups", []string{"devs", "ops"}, true},
		{"realm_access.roles", []string{"admin-role", "user"}, true},
		{"['https://example.com/groups']", []string{"auth0-group"}, true},
		{`["https://example.com/groups"]`, []string{"auth0-group"}, true},
		{"cognito:groups", []string{"pool-group"}, true},
		{"orgs[1].teams", []string{"b", "7"}, true},
		{"orgs[0]['teams']", []string{"a"}, true},
		{"single", []string{"only-one"}, true},
		{"spaced", []string{"one", "two", "three"}, true},
		{"missing", nil, false},
		{"orgs[5].teams", nil, false},
		{"realm_access.roles.deeper", nil, false},
		{"number", nil, false},
	} {
		p, err := ParseGroupPath(c.path)
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		got, found := ClaimedGroups(claims, p)
		if found != c.found || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v %v, want %v %v", c.path, got, found, c.want, c.found)
		}
	}
	for _, bad := range []string{"", "$", "a..b", "a.", "['x", "a[x]", "a[-1]", ".[0"} {
		if _, err := ParseGroupPath(bad); err == nil {
			t.Errorf("%q parsed; want an error", bad)
		}
	}
}

// TestKeyring: the client secret is sealed by the server's box, and a
// secret SSO sealed before the box was shared (its own keyring, the same
// SECRETS_KEY) still opens.
func TestKeyring(t *testing.T) {
	box, err := secretbox.New("servertest-secrets-key", "")
	if err != nil {
		t.Fatal(err)
	}
	k := keyring{box: box}
	const before = "v1:Ulypw6P6yAoGQA3WwIM3Vo/W5NTqNdXwsO84I8lDb4N7HG6/ijawmufgGrEW/yap/yU8bO/P/w"
	if plain, err := k.open(before); err != nil || plain != "client-secret-sealed-before" {
		t.Errorf("open a secret sealed before: %q %v", plain, err)
	}
	sealed, err := k.seal("top-secret")
	if err != nil || strings.Contains(sealed, "top-secret") {
		t.Fatalf("sealed %q, %v", sealed, err)
	}
	if plain, err := k.open(sealed); err != nil || plain != "top-secret" {
		t.Errorf("open: %q %v", plain, err)
	}
	other, _ := secretbox.New("another-secrets-key", "")
	if _, err := (keyring{box: other}).open(sealed); err == nil || !strings.Contains(err.Error(), "SECRETS_KEY") {
		t.Errorf("open with another key: %v", err)
	}
	none := keyring{}
	if _, err := none.seal("x"); err != errNoKey {
		t.Errorf("seal without a key: %v", err)
	}
	if s, err := none.seal(""); err != nil || s != "" {
		t.Errorf("an empty secret needs no key: %q %v", s, err)
	}
}

// TestAllowsEmail: auto-creation is limited to the listed domains (any
// case, exact domain), or open to all when none is listed.
func TestAllowsEmail(t *testing.T) {
	s := Settings{EmailDomains: "example.com, @Example.org"}
	for email, want := range map[string]bool{
		"a@example.com": true, "a@EXAMPLE.COM": true, "a@example.org": true,
		"a@sub.example.com": false, "a@example.com.evil.test": false, "example.com": false, "a@evil.test": false,
	} {
		if got := s.allowsEmail(email); got != want {
			t.Errorf("%s: %v, want %v", email, got, want)
		}
	}
	if !(Settings{}).allowsEmail("anyone@anywhere.test") {
		t.Errorf("no listed domain should allow every email")
	}
}
