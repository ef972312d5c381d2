package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// secretSession runs Bunting's processes at debug level and remembers
// every secret it creates or sends.
type secretSession struct {
	t       *testing.T
	secrets []string
	logs    []*buntingProcess
}

// secret makes a new secret: prefix and 48 random hex digits.
func (s *secretSession) secret(prefix string) string {
	v := prefix + randomName(48)
	s.secrets = append(s.secrets, v)
	return v
}

// remember adds a secret the session was given.
func (s *secretSession) remember(v string) string {
	if v == "" {
		s.t.Fatal("an empty secret")
	}
	s.secrets = append(s.secrets, v)
	return v
}

// do sends a request with a token in the Authorization header (when
// set) and returns the status and the body.
func (s *secretSession) do(method, target, token, body string, header ...string) (int, string) {
	s.t.Helper()
	req, err := http.NewRequest(method, target, strings.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// want fails unless a request answers status.
func (s *secretSession) want(status int, method, target, token, body string) string {
	s.t.Helper()
	code, answer := s.do(method, target, token, body)
	if code != status {
		s.t.Fatalf("%s %s: %d %s, want %d", method, target, code, answer, status)
	}
	return answer
}

// field reads one string property of a JSON answer.
func field(t *testing.T, answer, name string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(answer), &m); err != nil {
		t.Fatalf("%v: %s", err, answer)
	}
	switch v := m[name].(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	t.Fatalf("no %s in %s", name, answer)
	return ""
}

// useEverywhere sends a secret in a path, a query, a header and a body.
func (s *secretSession) useEverywhere(base, path, secret string) {
	s.do(http.MethodGet, base+path+"/"+url.PathEscape(secret), "", "")
	s.do(http.MethodGet, base+path+"?token="+url.QueryEscape(secret)+"&secret="+url.QueryEscape(secret), "", "")
	s.do(http.MethodPost, base+path, secret, `{"token":"`+secret+`","toggles":["`+secret+`"]}`, "X-Api-Key", secret)
}

// TestNoSecretReachesTheLogs runs a whole session of the server, proxies
// and the all-in-one mode at LOG_LEVEL=debug as real processes: it creates
// every kind of secret (admin, client and frontend API tokens from the
// environment and the API, service-account and personal tokens, signal
// tokens, proxy client keys and server-side SDK tokens, the bootstrap
// Authorization, a database password, credentials in upstream and
// bootstrap URLs), uses them in paths (the token routes included), queries,
// headers and bodies, on success and failure paths (wrong tokens, refused
// upstream token, unreachable bootstrap and database, bad options), and
// then scans everything the processes wrote for every secret. The
// all-in-one mode's banner on stdout, which shows its tokens on purpose,
// is the one exception.
func TestNoSecretReachesTheLogs(t *testing.T) {
	t.Parallel()
	s := &secretSession{t: t}
	db := servertest.NewPostgres(t)
	dbURL, err := url.Parse(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	dbURL.User = url.UserPassword(dbURL.User.Username(), s.secret("pgpass-")) // the test server trusts local connections
	admin, plainAdmin := s.secret("*:*."), s.secret("plain-admin-")
	initClient, initFrontend := s.secret("default:development."), s.secret("default:development.")

	// The flag server, on PostgreSQL.
	port := testutil.FreePort(t)
	base := "http://127.0.0.1:" + strconv.Itoa(port)
	server := startBunting(t, map[string]string{"PORT": strconv.Itoa(port), "HTTP_HOST": "127.0.0.1", "DATABASE_URL": dbURL.String(),
		"LOG_LEVEL": "debug", "INIT_ADMIN_API_TOKENS": admin + "," + plainAdmin, "INIT_CLIENT_API_TOKENS": initClient,
		"INIT_FRONTEND_API_TOKENS": initFrontend}, "server")
	s.logs = append(s.logs, server)
	server.waitFor(t, base+"/health", nil, http.StatusOK)

	const features = "/api/admin/projects/default/features"
	s.want(http.StatusCreated, http.MethodPost, base+features, admin, `{"name":"f1"}`)
	s.want(http.StatusOK, http.MethodPost, base+features+"/f1/environments/development/on", plainAdmin, "")
	created := map[string]string{}
	for _, typ := range []string{"client", "frontend", "admin"} {
		answer := s.want(http.StatusCreated, http.MethodPost, base+"/api/admin/api-tokens", admin,
			`{"tokenName":"t-`+typ+`","type":"`+typ+`","environment":"development"}`)
		created[typ] = s.remember(field(t, answer, "secret"))
	}
	future := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	for _, secret := range []string{created["client"], created["admin"], initFrontend, plainAdmin, s.secret("unknown-token-")} {
		s.do(http.MethodPut, base+"/api/admin/api-tokens/"+url.PathEscape(secret), admin, `{"expiresAt":"`+future+`"}`)
		s.do(http.MethodGet, base+"/api/admin/api-tokens/"+url.PathEscape(secret), admin, "")
		s.do(http.MethodPut, base+"/api/admin/api-tokens/"+url.PathEscape(secret)+"/more", admin, "")
	}
	s.want(http.StatusOK, http.MethodDelete, base+"/api/admin/api-tokens/"+url.PathEscape(created["admin"]), admin, "")

	// Service accounts and personal tokens.
	account := field(t, s.want(http.StatusCreated, http.MethodPost, base+"/api/admin/service-account", admin, `{"username":"robot","rootRole":1}`), "id")
	serviceToken := s.remember(field(t, s.want(http.StatusCreated, http.MethodPost, base+"/api/admin/service-account/"+account+"/token", admin,
		`{"description":"ci","expiresAt":"`+future+`"}`), "secret"))
	pat := s.remember(field(t, s.want(http.StatusCreated, http.MethodPost, base+"/api/admin/user/tokens", serviceToken,
		`{"description":"mine","expiresAt":"`+future+`"}`), "secret"))
	s.want(http.StatusOK, http.MethodGet, base+"/api/admin/projects", pat, "")
	s.do(http.MethodDelete, base+"/api/admin/user/tokens/"+url.PathEscape(pat), serviceToken, "")
	s.do(http.MethodDelete, base+"/api/admin/service-account/"+account+"/token/"+url.PathEscape(serviceToken), admin, "")

	// Signal endpoints and their tokens.
	endpoint := field(t, s.want(http.StatusCreated, http.MethodPost, base+"/api/admin/signal-endpoints", admin, `{"name":"alerts"}`), "id")
	signalToken := s.remember(field(t, s.want(http.StatusCreated, http.MethodPost, base+"/api/admin/signal-endpoints/"+endpoint+"/tokens", admin, `{"name":"pager"}`), "token"))
	s.want(http.StatusOK, http.MethodPost, base+"/api/signal-endpoint/alerts", "Bearer "+signalToken, `{"alert":"`+signalToken+`"}`)
	s.do(http.MethodPost, base+"/api/signal-endpoint/alerts", "Bearer "+s.secret("wrong-signal-"), `{}`)
	s.do(http.MethodPost, base+"/api/signal-endpoint/"+signalToken, "Bearer "+signalToken, `{}`)

	// Client and frontend APIs, with good and wrong tokens everywhere.
	s.want(http.StatusOK, http.MethodGet, base+"/api/client/features", created["client"], "")
	s.want(http.StatusOK, http.MethodGet, base+"/api/frontend", initFrontend, "")
	for _, secret := range []string{admin, plainAdmin, initClient, initFrontend, created["client"], created["frontend"], serviceToken, pat, signalToken,
		s.secret("*:*."), s.secret("default:development."), s.secret("user:")} {
		s.useEverywhere(base, "/api/client/features", secret)
		s.useEverywhere(base, "/api/frontend", secret)
		s.useEverywhere(base, "/api/admin/projects", secret)
		s.useEverywhere(base, "/api/admin/api-tokens", secret)
	}

	// A proxy in front of it, JSON logs, credentials in its upstream and
	// bootstrap URLs, an unreachable bootstrap.
	proxyPort := testutil.FreePort(t)
	proxyBase := "http://127.0.0.1:" + strconv.Itoa(proxyPort)
	key, otherKey, sdkToken := s.secret("key-"), s.secret("key-"), s.secret("sdk-")
	upstream := "http://" + url.UserPassword(s.secret("upuser-"), s.secret("uppass-")).String() + "@127.0.0.1:" + strconv.Itoa(port) + "/api"
	bootstrap := "http://" + url.UserPassword(s.secret("bootuser-"), s.secret("bootpass-")).String() + "@127.0.0.1:" + strconv.Itoa(testutil.FreePort(t)) +
		"/boot.json?token=" + s.secret("boot-query-")
	proxy := startBunting(t, map[string]string{"PORT": strconv.Itoa(proxyPort), "LISTEN_ADDRESS": "127.0.0.1", "UPSTREAM_URL": upstream,
		"UPSTREAM_API_TOKEN": created["client"], "UPSTREAM_PROXY_CLIENT_KEYS": key + "," + otherKey, "EXP_SERVER_SIDE_SDK_CONFIG_TOKENS": sdkToken,
		"EXP_BOOTSTRAP_URL": bootstrap, "EXP_BOOTSTRAP_AUTHORIZATION": s.secret("boot-auth-"), "UPSTREAM_FETCH_INTERVAL": "100",
		"UPSTREAM_METRICS_INTERVAL": "100", "EXP_BACKUP_DIR": t.TempDir(), "LOG_LEVEL": "debug", "JSON_LOGGER": "true"}, "proxy")
	s.logs = append(s.logs, proxy)
	proxy.waitFor(t, proxyBase+"/proxy", http.Header{"Authorization": {key}}, http.StatusOK)
	s.want(http.StatusOK, http.MethodPost, proxyBase+"/proxy", otherKey, `{"toggles":["f1"]}`)
	s.want(http.StatusOK, http.MethodGet, proxyBase+"/proxy/client/features", sdkToken, "")
	s.want(http.StatusOK, http.MethodPost, proxyBase+"/proxy/client/register", sdkToken, `{"appName":"a","interval":1,"started":"2026-01-01T00:00:00Z","strategies":[]}`)
	for _, secret := range []string{key, sdkToken, s.secret("wrong-key-")} {
		s.useEverywhere(proxyBase, "/proxy", secret)
		s.useEverywhere(proxyBase, "/proxy/client/metrics", secret)
		s.useEverywhere(proxyBase, "/proxy/client/features", secret)
	}

	// A proxy whose upstream refuses its token and whose bootstrap source
	// is unreachable, and one with a bad upstream URL that stops at startup.
	refused := startBunting(t, map[string]string{"PORT": strconv.Itoa(testutil.FreePort(t)), "LISTEN_ADDRESS": "127.0.0.1", "UPSTREAM_URL": base + "/api",
		"UPSTREAM_API_TOKEN": s.secret("default:development."), "UPSTREAM_PROXY_CLIENT_KEYS": s.secret("key-"), "UPSTREAM_FETCH_INTERVAL": "50",
		"EXP_BOOTSTRAP_URL": bootstrap, "EXP_BOOTSTRAP_AUTHORIZATION": s.secret("boot-auth-"),
		"EXP_BACKUP_DIR": t.TempDir(), "LOG_LEVEL": "debug"}, "proxy")
	s.logs = append(s.logs, refused)
	badURL := startBunting(t, map[string]string{"UPSTREAM_URL": "ftp://" + s.secret("ftpuser-") + ":" + s.secret("ftppass-") + "@example.com/api?k=" + s.secret("q-"),
		"UPSTREAM_API_TOKEN": s.secret("tok-"), "UPSTREAM_PROXY_CLIENT_KEYS": s.secret("key-"), "LOG_LEVEL": "debug"}, "proxy")
	s.logs = append(s.logs, badURL)
	// A server whose database is unreachable, one whose URL does not parse.
	for _, bad := range []string{"@127.0.0.1:1/db", "@127.0.0.1:5432/db?sslmode=bogus"} {
		p := startBunting(t, map[string]string{"DATABASE_URL": "postgres://u:" + s.secret("dbpass-") + bad, "LOG_LEVEL": "debug",
			"PORT": strconv.Itoa(testutil.FreePort(t)), "INIT_ADMIN_API_TOKENS": s.secret("*:*.")}, "server")
		s.logs = append(s.logs, p)
		if code := p.exited(20 * time.Second); code <= 0 {
			t.Errorf("a server on %s exited with %d", bad, code)
		}
	}
	if code := badURL.exited(10 * time.Second); code <= 0 {
		t.Errorf("a proxy with an ftp upstream exited with %d", code)
	}

	// The all-in-one mode: its quickstart tokens in paths and headers.
	dir := t.TempDir()
	allServer, allProxy := testutil.FreePort(t), testutil.FreePort(t)
	all := startBunting(t, map[string]string{"HTTP_PORT": strconv.Itoa(allServer), "PROXY_PORT": strconv.Itoa(allProxy),
		"DATABASE_PATH": filepath.Join(dir, "b.db"), "LOG_LEVEL": "debug"})
	all.waitFor(t, "http://127.0.0.1:"+strconv.Itoa(allProxy)+"/proxy/health", nil, http.StatusOK)
	var quick quickstartTokens
	data, err := os.ReadFile(filepath.Join(dir, "quickstart-tokens.json"))
	if err == nil {
		err = json.Unmarshal(data, &quick)
	}
	if err != nil {
		t.Fatal(err)
	}
	allBase := "http://127.0.0.1:" + strconv.Itoa(allServer)
	for _, secret := range []string{s.remember(quick.Admin), s.remember(quick.Client), s.remember(quick.Frontend), s.remember(quick.ClientKey)} {
		s.do(http.MethodPut, allBase+"/api/admin/api-tokens/"+url.PathEscape(secret), quick.Admin, `{"expiresAt":"`+future+`"}`)
		s.useEverywhere(allBase, "/api/admin/projects", secret)
		s.useEverywhere("http://127.0.0.1:"+strconv.Itoa(allProxy), "/proxy", secret)
	}

	// Upstream goes away, then usage is counted: failed syncs, and a failed
	// last metrics post when the proxy stops (counted before the upstream
	// stopped, the usage could reach it in a periodic post first).
	server.stop(t)
	for range 3 {
		s.want(http.StatusOK, http.MethodPost, proxyBase+"/proxy", key, `{"toggles":["f1"]}`)
	}
	waitLog(t, proxy, "upstream sync failed")
	proxy.stop(t)
	waitLog(t, refused, "bootstrap failed") // after its three attempts, 3 s
	refused.stop(t)
	all.stop(t)

	// The debug request log ran, with the token routes in it.
	if out := server.Stderr.String(); !strings.Contains(out, "method=PUT path=/api/admin/api-tokens/") || strings.Count(out, "msg=request") < 100 {
		t.Errorf("the server's debug log has no request lines for the token routes:\n%.2000s", out)
	}
	for p, lines := range map[*buntingProcess][]string{
		refused: {"upstream refuses the API token", "bootstrap failed"},
		proxy:   {"upstream sync failed", "final usage metrics post failed", "client registered", "configuration updated"},
	} {
		for _, line := range lines {
			if out := p.Stderr.String(); !strings.Contains(out, line) {
				t.Errorf("bunting %v did not log %q:\n%.3000s", p.Cmd.Args[1:], line, out)
			}
		}
	}
	outputs := map[string]string{"all-in-one stderr": all.Stderr.String()}
	for i, p := range s.logs {
		outputs[fmt.Sprintf("bunting %v (process %d) stderr", p.Cmd.Args[1:], i)] = p.Stderr.String()
		outputs[fmt.Sprintf("bunting %v (process %d) stdout", p.Cmd.Args[1:], i)] = p.Stdout.String()
	}
	total := 0
	for name, out := range outputs {
		total += len(out)
		for _, secret := range s.secrets {
			// The secret, and its random part alone (48 or 56 hex digits).
			for _, needle := range []string{secret, secret[max(0, len(secret)-32):]} {
				if i := strings.Index(out, needle); i >= 0 {
					t.Errorf("%s holds a secret (%s…): %q", name, secret[:min(len(secret), 12)], out[max(0, i-200):min(len(out), i+len(needle)+50)])
					break
				}
			}
		}
	}
	t.Logf("scanned %d bytes of output of %d processes for %d secrets", total, len(s.logs)+1, len(s.secrets))
}

// waitLog waits up to 10 s for a line of the process's log.
func waitLog(t *testing.T, p *buntingProcess, line string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.Stderr.String(), line) {
		if time.Now().After(deadline) {
			t.Fatalf("bunting %v did not log %q:\n%.3000s", p.Cmd.Args[1:], line, p.Stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
