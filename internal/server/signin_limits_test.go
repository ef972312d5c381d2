package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

func login(t *testing.T, h *servertest.Harness, user, password string) *servertest.Response {
	t.Helper()
	return h.Do(t, "POST", "/auth/simple/login", "", map[string]string{"username": user, "password": password})
}

// TestSignInLimitsPerAccount: failed sign-ins count against the account a
// name resolves to, whichever name was typed (username or email, any case
// of the email); names of nobody keep their own count.
func TestSignInLimitsPerAccount(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		h.Do(t, "POST", "/api/admin/user-admin", h.AdminToken, map[string]any{"username": "known1", "email": "known1@example.com", "password": "known1-password"}).Want(t, 201)
		for i := range 5 {
			login(t, h, "known1", fmt.Sprint("guess-", i)).WantError(t, 401, "AuthenticationRequired")
		}
		// The same account by its email, in any case: blocked, even with
		// the right password.
		for _, name := range []string{"known1@example.com", "KNOWN1@example.com", "known1"} {
			res := login(t, h, name, "known1-password")
			res.WantError(t, 429, "RateLimitError", "Too many failed sign-in attempts for this user")
			if res.Header.Get("Retry-After") == "" {
				t.Errorf("%s: no Retry-After", name)
			}
		}
		// A name of nobody has its own count, and does not block others.
		for i := range 5 {
			login(t, h, "ghost", fmt.Sprint("guess-", i)).WantError(t, 401, "AuthenticationRequired")
		}
		login(t, h, "ghost", "guess").WantError(t, 429, "RateLimitError", "for this user")
		login(t, h, "ghost2", "guess").WantError(t, 401, "AuthenticationRequired")
		signIn(t, h, "admin", servertest.AdminPassword)
	})
}

// TestSignInLimitHoldsForConcurrentGuesses: guesses sent at once are
// counted as they start, so of 12 at once on one account at most 5 have
// their password checked.
func TestSignInLimitHoldsForConcurrentGuesses(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		h.Do(t, "POST", "/api/admin/user-admin", h.AdminToken, map[string]any{"username": "known2", "password": "known2-password"}).Want(t, 201)
		var mu sync.Mutex
		statuses := map[int]int{}
		var wg sync.WaitGroup
		for i := range 12 {
			wg.Go(func() {
				res := login(t, h, "known2", fmt.Sprint("parallel-guess-", i))
				mu.Lock()
				statuses[res.Status]++
				mu.Unlock()
			})
		}
		wg.Wait()
		if statuses[401] > 5 || statuses[401]+statuses[429] != 12 {
			t.Errorf("12 guesses at once: %v, want at most 5 checked (401) and the rest refused (429)", statuses)
		}
	})
}

// TestSignInLimitPerAddress: 20 failures from one address, whatever the
// names, block that address.
func TestSignInLimitPerAddress(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	for i := range 20 {
		login(t, h, fmt.Sprint("nobody-", i), "guess").WantError(t, 401, "AuthenticationRequired")
	}
	login(t, h, "admin", servertest.AdminPassword).WantError(t, 429, "RateLimitError", "from your address")
}

// formLogin posts the sign-in form as a browser without script does.
func formLogin(t *testing.T, h *servertest.Harness, fields url.Values, headers ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("POST", h.URL+"/login", strings.NewReader(fields.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	req.Header.Set("Origin", h.URL)
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	return res
}

// TestSignInFormWithoutScript: the sign-in page's form posts itself (no
// password in a URL); the form route signs in and redirects as the
// script does, to a checked next; a wrong password shows the page again
// with the error; another site's form is refused.
func TestSignInFormWithoutScript(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		page := h.Do(t, "GET", "/login?next=%2Fevents", "", nil, "Accept", "text/html").Want(t, 200)
		form := string(page.Body)
		for _, want := range []string{`method="post"`, `action="/login"`, `name="next" value="/events"`} {
			if !strings.Contains(form, want) {
				t.Errorf("the sign-in page's form lacks %s:\n%s", want, form)
			}
		}

		ok := url.Values{"username": {"admin"}, "password": {servertest.AdminPassword}, "next": {"/events"}}
		res := formLogin(t, h, ok)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/events" {
			t.Fatalf("form sign-in: %s to %q, want 303 to /events", res.Status, res.Header.Get("Location"))
		}
		var cookie string
		for _, c := range res.Cookies() {
			if c.Name == "bunting_session" && c.HttpOnly {
				cookie = c.Name + "=" + c.Value
			}
		}
		if cookie == "" {
			t.Fatalf("form sign-in set no session cookie: %v", res.Header)
		}
		h.Do(t, "GET", "/api/admin/projects", "", nil, "Cookie", cookie).Want(t, 200)

		// next is checked as for the page.
		for _, next := range []string{`/\evil.example/`, "//evil.example", "https://evil.example/", "javascript:alert(1)", "/%0D%0A/evil.example/"} {
			ok.Set("next", next)
			if res := formLogin(t, h, ok); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/flags" {
				t.Errorf("form sign-in with next=%q: %s to %q, want 303 to /flags", next, res.Status, res.Header.Get("Location"))
			}
		}

		// A wrong password: the page again, with the error, the name kept
		// and the password not echoed.
		bad := url.Values{"username": {"admin"}, "password": {"not-the-password-42"}, "next": {"/events"}}
		res = formLogin(t, h, bad)
		body := readAll(t, res)
		if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "Wrong username or password") ||
			!strings.Contains(body, `value="admin"`) || strings.Contains(body, "not-the-password-42") || !strings.Contains(body, `name="next" value="/events"`) {
			t.Errorf("form sign-in with a wrong password: %s\n%s", res.Status, body)
		}

		// Another site's form, or a post that says nothing of where it
		// comes from, is refused (no session is made).
		for _, hdr := range [][]string{{"Origin", "https://evil.example"}, {"Origin", "null"}, {"Origin", "", "Referer", "https://evil.example/login"}, {"Origin", ""}} {
			res := formLogin(t, h, ok, hdr...)
			if res.StatusCode != http.StatusForbidden || len(res.Cookies()) > 0 {
				t.Errorf("form sign-in with %v: %s, cookies %v; want 403 and no session", hdr, res.Status, res.Cookies())
			}
		}
		// What is not a browser gets the API's error bodies.
		for _, c := range []struct {
			status  int
			name    string
			body    string
			headers []string
		}{
			{403, "NoAccessError", ok.Encode(), []string{"Origin", "https://evil.example"}},
			{401, "AuthenticationRequired", bad.Encode(), nil},
			{415, "ContentTypeError", `{"username":"admin"}`, []string{"Content-Type", "application/json"}},
			{400, "ValidationError", "username=%zz", nil},
		} {
			req, _ := http.NewRequest("POST", h.URL+"/login", strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Origin", h.URL)
			for i := 0; i+1 < len(c.headers); i += 2 {
				req.Header.Set(c.headers[i], c.headers[i+1])
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body := readAll(t, res)
			res.Body.Close()
			var e struct{ ID, Name, Message string }
			if res.StatusCode != c.status || json.Unmarshal([]byte(body), &e) != nil || e.ID == "" || e.Name != c.name || e.Message == "" {
				t.Errorf("POST /login (not a browser) %v: %s %s, want %d %s", c.headers, res.Status, body, c.status, c.name)
			}
		}
		// Without Origin, a Referer of this server is enough (older browsers).
		if res := formLogin(t, h, ok, "Origin", "", "Referer", h.URL+"/login"); res.StatusCode != http.StatusSeeOther {
			t.Errorf("form sign-in with this server's Referer: %s, want 303", res.Status)
		}
	})
}

func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return b.String()
}
