package e2e

import (
	"crypto/rand"
	"crypto/rsa"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestSSOSignInAndRefusals signs in through a real OpenID provider over
// HTTP, on both databases: a first sign-in creates the person with the
// default root role, a second finds them again, and the provider's key
// rotation is followed (the cached key set is fetched again for an
// unknown key id). Then every refusal: a wrong state, a state used twice,
// a replayed ID token (its nonce belongs to another sign-in), an expired
// ID token, one for another audience, one signed by a key the provider
// does not publish, an email outside the allowed domains. Each answers
// 401 with its message and leaves no session and no new person.
func TestSSOSignInAndRefusals(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		s := startSSO(t, db, map[string]any{"autoCreate": true, "emailDomains": "example.com", "defaultRootRole": "Editor"})

		f := s.newFlow(t)
		res, body := f.callback(f.toCallback("alice", "alice-pass"))
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/flags" {
			t.Fatalf("sign-in: %s %v, want 303 to /flags", res.Status, body)
		}
		who := f.session()
		if who == nil || who["name"] != "alice@example.com" || who["rootRole"] != "Editor" {
			t.Fatalf("signed in as %v, want alice@example.com with Editor", who)
		}
		aliceID := who["id"]
		f2 := s.newFlow(t)
		f2.callback(f2.toCallback("alice", "alice-pass"))
		if again := f2.session(); again == nil || again["id"] != aliceID {
			t.Fatalf("the second sign-in is %v, want the same person %v", again, aliceID)
		}

		// Key rotation: the provider signs with a key Bunting has not
		// seen; the verifier fetches the key set again and accepts it.
		keysBefore := s.p.keyCalls.Load()
		s.p.Storage.rotate(t, "key-2")
		f3 := s.newFlow(t)
		if res, body := f3.callback(f3.toCallback("alice", "alice-pass")); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-in after key rotation: %s %v", res.Status, body)
		}
		if s.p.keyCalls.Load() <= keysBefore {
			t.Errorf("the key set was not fetched again for the new key id")
		}
		keysBefore = s.p.keyCalls.Load()
		f4 := s.newFlow(t)
		f4.callback(f4.toCallback("alice", "alice-pass"))
		if n := s.p.keyCalls.Load() - keysBefore; n != 0 {
			t.Errorf("a known key id fetched the key set %d more times; want it cached", n)
		}

		people := countPeople(t, s.h)
		refused := func(name string, res *http.Response, body map[string]any, f *flow, fragment string) {
			t.Helper()
			msg, _ := body["message"].(string)
			if res.StatusCode != http.StatusUnauthorized || !strings.Contains(msg, fragment) {
				t.Errorf("%s: %s %v, want 401 saying %q", name, res.Status, body, fragment)
			}
			for _, c := range res.Cookies() {
				if c.Name == "bunting_session" && c.MaxAge >= 0 {
					t.Errorf("%s: a session cookie was set", name)
				}
			}
			if who := f.session(); who != nil {
				t.Errorf("%s: signed in as %v", name, who)
			}
		}

		// A wrong state: the callback names a sign-in that never started.
		f = s.newFlow(t)
		cb := f.toCallback("alice", "alice-pass")
		q := cb.Query()
		q.Set("state", strings.Repeat("0", 64))
		wrong := *cb
		wrong.RawQuery = q.Encode()
		res, body = f.callback(&wrong)
		refused("wrong state", res, body, f, "unknown state")

		// The same callback twice: its state was used.
		f = s.newFlow(t)
		cb = f.toCallback("alice", "alice-pass")
		if res, _ := f.callback(cb); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("first use of the callback: %s", res.Status)
		}
		f.client.Jar.SetCookies(mustURL(s.h.URL), []*http.Cookie{{Name: "bunting_session", Value: "", Path: "/", MaxAge: -1}})
		res, body = f.callback(cb)
		refused("state used twice", res, body, f, "already used")

		// The callback from another browser (the binding cookie missing).
		f = s.newFlow(t)
		cb = f.toCallback("alice", "alice-pass")
		other := s.newFlow(t)
		res, body = other.callback(cb)
		refused("callback in another browser", res, body, other, "not started in this browser")

		// A replayed ID token: the token endpoint answers with an earlier
		// sign-in's tokens, whose nonce is not this sign-in's.
		f = s.newFlow(t)
		cb = f.toCallback("alice", "alice-pass")
		s.p.force(s.p.last())
		res, body = f.callback(cb)
		s.p.force(nil)
		refused("replayed nonce", res, body, f, "nonce does not match")

		// An ID token that has expired when it arrives.
		s.p.Storage.set(func(p *providerStorage) { p.lifetime = -time.Minute })
		f = s.newFlow(t)
		res, body = f.callback(f.toCallback("alice", "alice-pass"))
		s.p.Storage.set(func(p *providerStorage) { p.lifetime = 0 })
		refused("expired ID token", res, body, f, "has expired")

		// An ID token issued to another application at the same provider
		// (alice signed in to other-app), slipped into Bunting's sign-in.
		f = s.newFlow(t)
		cb = f.toCallback("alice", "alice-pass")
		s.p.force(s.p.tokenForOtherApp(t, "alice", "alice-pass"))
		res, body = f.callback(cb)
		s.p.force(nil)
		refused("wrong audience", res, body, f, "wrong audience")

		// An ID token signed by a key the provider does not publish (with
		// a key id it does publish, and with an unknown one).
		stranger, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			t.Fatal(err)
		}
		for _, kid := range []string{"key-2", "unknown-key"} {
			s.p.Storage.set(func(p *providerStorage) { p.signWith = &rsaKey{id: kid, key: stranger} })
			f = s.newFlow(t)
			res, body = f.callback(f.toCallback("alice", "alice-pass"))
			refused("signed by another key ("+kid+")", res, body, f, "signature does not match")
		}
		s.p.Storage.set(func(p *providerStorage) { p.signWith = nil })

		// An email outside the allowed domains, not yet a Bunting user.
		f = s.newFlow(t)
		res, body = f.callback(f.toCallback("mallory", "mallory-pass"))
		refused("email outside the allowed domains", res, body, f, "not in a domain allowed")
		if n := countPeople(t, s.h); n != people {
			t.Errorf("the refused sign-ins left %d people, want %d", n, people)
		}

		// The provider itself refusing (the person cancelled).
		f = s.newFlow(t)
		cb = f.toCallback("alice", "alice-pass")
		q = cb.Query()
		q.Del("code")
		q.Set("error", "access_denied")
		denied := *cb
		denied.RawQuery = q.Encode()
		res, body = f.callback(&denied)
		refused("provider error", res, body, f, "refused the sign-in")
	})
}

// TestSSOExistingPersonAndSingleSignOut: a person an admin added is found
// by email (in any case, at a domain auto-creation does not allow) and
// keeps their role; with single sign-out on, signing out sends the browser
// to the provider's end_session_endpoint with the ID token.
func TestSSOExistingPersonAndSingleSignOut(t *testing.T) {
	s := startSSO(t, servertest.NewSQLite(t), map[string]any{"autoCreate": true, "emailDomains": "example.com", "enableSingleSignOut": true})
	created := s.h.Do(t, "POST", "/api/admin/user-admin", s.h.AdminToken,
		map[string]any{"email": "Bob.Smith@Other.test", "rootRole": "Admin", "password": "bob-local-password"}).Want(t, 201).Map(t)
	f := s.newFlow(t)
	res, body := f.callback(f.toCallback("bob", "bob-pass"))
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("bob's sign-in: %s %v", res.Status, body)
	}
	who := f.session()
	if who == nil || who["id"] != created["id"] || who["rootRole"] != "Admin" {
		t.Fatalf("bob signed in as %v, want the existing person %v with Admin", who, created["id"])
	}
	// Sign out: the answer names the provider's end_session_endpoint.
	u := mustURL(s.h.URL)
	var csrf string
	for _, c := range f.client.Jar.Cookies(u) {
		if c.Name == "bunting_session" {
			req, _ := http.NewRequest("GET", s.h.URL+"/api/admin/user/session", nil)
			req.AddCookie(c)
			r, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var v struct {
				CSRF string `json:"csrfToken"`
			}
			decodeJSON(t, r, &v)
			csrf = v.CSRF
		}
	}
	req, _ := http.NewRequest("POST", s.h.URL+"/auth/logout", nil)
	req.Header.Set("X-CSRF-Token", csrf)
	res, err := f.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		RedirectURL string `json:"redirectUrl"`
	}
	decodeJSON(t, res, &out)
	end, err := url.Parse(out.RedirectURL)
	if err != nil || res.StatusCode != 200 || !strings.HasPrefix(out.RedirectURL, s.p.URL+"/end_session") ||
		end.Query().Get("id_token_hint") == "" || end.Query().Get("post_logout_redirect_uri") != s.h.URL+"/login" {
		t.Fatalf("sign-out: %s %q, want the provider's end_session_endpoint with id_token_hint and a way back", res.Status, out.RedirectURL)
	}
	if f.session() != nil {
		t.Errorf("the session survived sign-out")
	}
}

func countPeople(t testing.TB, h *servertest.Harness) int {
	var v struct {
		Users []any `json:"users"`
	}
	h.Do(t, "GET", "/api/admin/user-admin", h.AdminToken, nil).Want(t, 200).JSON(t, &v)
	return len(v.Users)
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}
