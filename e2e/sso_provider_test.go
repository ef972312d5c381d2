package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// The identity provider of the single sign-on tests is zitadel's OpenID
// provider library (pkg/op) with its example storage and login page, run
// in the test process. providerStorage wraps the example storage only
// where a test must make the provider misbehave (an ID token for another
// audience, signed with a key it does not publish, already expired) or
// rotate its key; every token is made and signed by the library.

// Provider users (username / password / email).
var providerUsers = map[string]*storage.User{
	"alice":   {ID: "alice", Username: "alice", Password: "alice-pass", FirstName: "Alice", LastName: "Example", Email: "alice@example.com", EmailVerified: true},
	"carol":   {ID: "carol", Username: "carol", Password: "carol-pass", FirstName: "Carol", LastName: "Example", Email: "carol@example.com", EmailVerified: true},
	"bob":     {ID: "bob", Username: "bob", Password: "bob-pass", FirstName: "Bob", LastName: "Smith", Email: "bob.smith@other.test", EmailVerified: true},
	"mallory": {ID: "mallory", Username: "mallory", Password: "mallory-pass", FirstName: "Mallory", LastName: "Outsider", Email: "mallory@evil.test", EmailVerified: true},
}

const (
	providerClientID     = "bunting"
	providerClientSecret = "bunting-client-secret"
	// other-app is another application at the same provider.
	otherClientID     = "other-app"
	otherClientSecret = "other-app-secret"
	otherRedirectURI  = "http://127.0.0.1:1/other-app/callback"
)

// tokenForOtherApp signs user in to other-app and returns the token
// endpoint's answer it got: an ID token whose audience is other-app.
func (p *testProvider) tokenForOtherApp(t testing.TB, user, password string) []byte {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(req.URL.String(), otherRedirectURI) {
			return http.ErrUseLastResponse
		}
		return nil
	}}
	q := url.Values{"client_id": {otherClientID}, "response_type": {"code"}, "scope": {"openid email"},
		"redirect_uri": {otherRedirectURI}, "state": {"other-state"}, "nonce": {"other-nonce"}}
	res, err := c.Get(p.URL + "/auth?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	id := res.Request.URL.Query().Get("authRequestID")
	res, err = c.PostForm(p.URL+"/login/username", url.Values{"id": {id}, "username": {user}, "password": {password}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, err := res.Location()
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("other-app's sign-in got no code: %s %v", res.Status, loc)
	}
	req, _ := http.NewRequest("POST", p.URL+"/oauth/token", strings.NewReader(url.Values{"grant_type": {"authorization_code"},
		"code": {loc.Query().Get("code")}, "redirect_uri": {otherRedirectURI}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(otherClientID, otherClientSecret)
	res, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		t.Fatalf("other-app's token request: %s %s", res.Status, b)
	}
	return b
}

// testProvider is a running OpenID provider.
type testProvider struct {
	URL     string // the issuer
	Storage *providerStorage
	// tokenCalls and userinfoCalls count calls; providerTime adds up the
	// time the token and userinfo endpoints took (the benchmark subtracts
	// it from the callback's time).
	tokenCalls, userinfoCalls, keyCalls atomic.Int64
	providerTime                        atomic.Int64
	mu                                  sync.Mutex
	// lastToken is the token endpoint's last answer; forced, when set,
	// replaces its next answers (a replayed answer, or one made for
	// another client).
	lastToken, forced []byte
}

// force makes the token endpoint answer b (nil: the real answer).
func (p *testProvider) force(b []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.forced = b
}

// last is the token endpoint's last real answer.
func (p *testProvider) last() []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastToken
}

// startProvider runs the provider on loopback for a client whose redirect
// URI is redirectURI.
func startProvider(t testing.TB, redirectURI string) *testProvider {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	issuer := "http://" + ln.Addr().String()
	b, _ := json.Marshal(providerUsers)
	usersFile := filepath.Join(t.TempDir(), "users.json")
	if err := os.WriteFile(usersFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	users, err := storage.StoreFromFile(usersFile)
	if err != nil {
		t.Fatal(err)
	}
	clients := map[string]*storage.Client{
		providerClientID: storage.WebClient(providerClientID, providerClientSecret, redirectURI),
		otherClientID:    storage.WebClient(otherClientID, otherClientSecret, otherRedirectURI),
	}
	st := &providerStorage{Storage: storage.NewStorageWithClients(users, clients), groups: map[string][]string{}}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	st.keys = []*rsaKey{{id: "key-1", key: key}}
	p := &testProvider{URL: issuer, Storage: st}
	// The example's request log goes to slog's default logger: quiet.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	router := exampleop.SetupServer(issuer, st, nil, false)
	srv := &http.Server{Handler: p.observe(router), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return p
}

// observe counts and times the provider's token, userinfo and key
// endpoints, and replays an old token answer when asked.
func (p *testProvider) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		switch r.URL.Path {
		case "/oauth/token":
			p.tokenCalls.Add(1)
			p.mu.Lock()
			forced := p.forced
			p.mu.Unlock()
			if forced != nil {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(forced)
				return
			}
			rec := &recorder{ResponseWriter: w}
			next.ServeHTTP(rec, r)
			p.mu.Lock()
			p.lastToken = rec.body.Bytes()
			p.mu.Unlock()
			p.providerTime.Add(int64(time.Since(start)))
			return
		case "/userinfo":
			p.userinfoCalls.Add(1)
			defer func() { p.providerTime.Add(int64(time.Since(start))) }()
		case "/keys":
			p.keyCalls.Add(1)
		}
		next.ServeHTTP(w, r)
	})
}

type recorder struct {
	http.ResponseWriter
	body bytes.Buffer
}

func (r *recorder) Write(b []byte) (int, error) {
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// providerStorage is the example storage with switches for misbehaviour,
// key rotation and a groups claim.
type providerStorage struct {
	*storage.Storage
	mu sync.Mutex
	// keys are published (KeySet); the last one signs, unless signWith
	// is set: a key the provider does not publish.
	keys     []*rsaKey
	signWith *rsaKey
	// lifetime replaces the ID token's lifetime when set (negative: it
	// has expired when issued).
	lifetime time.Duration
	// groups are the groups claim per user id.
	groups map[string][]string
}

type rsaKey struct {
	id  string
	key *rsa.PrivateKey
}

func (k *rsaKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *rsaKey) Key() any                                    { return k.key }
func (k *rsaKey) ID() string                                  { return k.id }

type publicKey struct{ *rsaKey }

func (k publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k publicKey) Use() string                        { return "sig" }
func (k publicKey) Key() any                           { return &k.key.PublicKey }

func (s *providerStorage) set(f func(s *providerStorage)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// rotate publishes a new key and signs with it from now on.
func (s *providerStorage) rotate(t testing.TB, id string) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s.set(func(s *providerStorage) { s.keys = append(s.keys, &rsaKey{id: id, key: key}) })
}

func (s *providerStorage) SigningKey(ctx context.Context) (op.SigningKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.signWith != nil {
		return s.signWith, nil
	}
	return s.keys[len(s.keys)-1], nil
}

func (s *providerStorage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

func (s *providerStorage) KeySet(ctx context.Context) ([]op.Key, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]op.Key, 0, len(s.keys))
	for _, k := range s.keys {
		out = append(out, publicKey{k})
	}
	return out, nil
}

func (s *providerStorage) GetClientByClientID(ctx context.Context, clientID string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, clientID)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lifetime != 0 {
		return lifetimeClient{c, s.lifetime}, nil
	}
	return c, nil
}

type lifetimeClient struct {
	op.Client
	lifetime time.Duration
}

func (c lifetimeClient) IDTokenLifetime() time.Duration { return c.lifetime }

func (s *providerStorage) SetUserinfoFromRequest(ctx context.Context, userinfo *oidc.UserInfo, token op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, userinfo, token, scopes); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g, ok := s.groups[token.GetSubject()]; ok {
		userinfo.AppendClaims("groups", g)
	}
	return nil
}

// ssoSetup is Bunting with the provider configured as its OIDC provider.
type ssoSetup struct {
	h *servertest.Harness
	p *testProvider
}

// startSSO starts Bunting on db and the provider, and enables OIDC with
// settings (merged over the provider's discovery URL, client id and
// secret).
func startSSO(t testing.TB, db servertest.Database, settings map[string]any) *ssoSetup {
	t.Helper()
	h := servertest.Start(t, db)
	p := startProvider(t, h.URL+"/auth/oidc/callback")
	body := map[string]any{"enabled": true, "discoverUrl": p.URL + "/.well-known/openid-configuration",
		"clientId": providerClientID, "secret": providerClientSecret}
	for k, v := range settings {
		body[k] = v
	}
	h.Do(t, "POST", "/api/admin/auth/oidc/settings", h.AdminToken, body).Want(t, 200)
	return &ssoSetup{h: h, p: p}
}

// flow is one browser-like sign-in driven over HTTP, with its own cookies.
type flow struct {
	t      testing.TB
	s      *ssoSetup
	client *http.Client
}

func (s *ssoSetup) newFlow(t testing.TB) *flow {
	jar, _ := cookiejar.New(nil)
	return &flow{t: t, s: s, client: &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			// Stop before Bunting's callback: the test makes that request.
			if strings.HasSuffix(req.URL.Path, "/auth/oidc/callback") {
				return http.ErrUseLastResponse
			}
			return nil
		}}}
}

// toCallback starts a sign-in at Bunting and signs in at the provider as
// user; it returns the callback URL the provider sends the browser to.
func (f *flow) toCallback(user, password string) *url.URL {
	f.t.Helper()
	res, err := f.client.Get(f.s.h.URL + "/auth/oidc/login?next=/flags")
	if err != nil {
		f.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	// The provider's login page: /login/username?authRequestID=…
	id := res.Request.URL.Query().Get("authRequestID")
	if id == "" {
		f.t.Fatalf("did not reach the provider's login page: %s %s", res.Status, res.Request.URL)
	}
	res, err = f.client.PostForm(f.s.p.URL+"/login/username", url.Values{"id": {id}, "username": {user}, "password": {password}})
	if err != nil {
		f.t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	loc, err := res.Location()
	if err != nil || !strings.HasSuffix(loc.Path, "/auth/oidc/callback") {
		f.t.Fatalf("the provider did not send the browser back to the callback: %s %v", res.Status, loc)
	}
	return loc
}

// callback makes the callback request as an API client (JSON answers).
func (f *flow) callback(u *url.URL) (*http.Response, map[string]any) {
	f.t.Helper()
	req, _ := http.NewRequest("GET", u.String(), nil)
	req.Header.Set("Accept", "application/json")
	once := *f.client
	once.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	res, err := once.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	var body map[string]any
	_ = json.NewDecoder(res.Body).Decode(&body)
	return res, body
}

// session is the flow's signed-in person (nil when it has no session).
func (f *flow) session() map[string]any {
	f.t.Helper()
	u, _ := url.Parse(f.s.h.URL)
	for _, c := range f.client.Jar.Cookies(u) {
		if c.Name == "bunting_session" {
			req, _ := http.NewRequest("GET", f.s.h.URL+"/api/admin/user/session", nil)
			req.AddCookie(c)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				f.t.Fatal(err)
			}
			defer res.Body.Close()
			if res.StatusCode != 200 {
				return nil
			}
			var v map[string]any
			_ = json.NewDecoder(res.Body).Decode(&v)
			user, _ := v["user"].(map[string]any)
			return user
		}
	}
	return nil
}

// decodeJSON reads a JSON answer into v and closes its body.
func decodeJSON(t testing.TB, res *http.Response, v any) {
	t.Helper()
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatalf("decode %s answer: %v", res.Status, err)
	}
}
