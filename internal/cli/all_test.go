package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/testutil"
)

// startAll runs the all-in-one mode on free ports with its data in dir and
// returns the server URL, the proxy URL, the tokens it printed and a stop
// function that waits for a clean exit. extra are more variables, name
// then value.
func startAll(t *testing.T, dir string, extra ...string) (serverURL, proxyURL string, tokens quickstartTokens, stop func()) {
	t.Helper()
	serverURL, proxyURL, tokens, _, stop = startAllBanner(t, dir, extra...)
	return serverURL, proxyURL, tokens, stop
}

// startAllBanner is startAll that also returns what it printed.
func startAllBanner(t *testing.T, dir string, extra ...string) (serverURL, proxyURL string, tokens quickstartTokens, banner func() string, stop func()) {
	t.Helper()
	// The ports were free a moment ago; a test running in parallel may
	// take one first, so a start refused for a port in use is tried again
	// on new ones.
	for attempt := 1; ; attempt++ {
		serverURL, proxyURL, tokens, banner, stop, err := tryStartAll(t, dir, extra...)
		if err == nil {
			return serverURL, proxyURL, tokens, banner, stop
		}
		if attempt == 5 || !strings.Contains(err.Error(), "address already in use") {
			t.Fatal(err)
		}
	}
}

// tryStartAll is one start of startAllBanner: an error when bunting exits
// before it is running.
func tryStartAll(t *testing.T, dir string, extra ...string) (serverURL, proxyURL string, tokens quickstartTokens, banner func() string, stop func(), err error) {
	t.Helper()
	serverPort, proxyPort := testutil.FreePort(t), testutil.FreePort(t)
	env := map[string]string{
		"HTTP_PORT":     strconv.Itoa(serverPort),
		"PROXY_PORT":    strconv.Itoa(proxyPort),
		"DATABASE_PATH": filepath.Join(dir, "bunting.db"),
		"LOG_LEVEL":     "warn",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		env[extra[i]] = extra[i+1]
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr testutil.Buffer
	done := make(chan int, 1)
	go func() { done <- Run(ctx, nil, lookup, &stdout, &stderr) }()

	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(stdout.String(), "Bunting is running") {
		select {
		case code := <-done:
			cancel()
			return "", "", tokens, nil, nil, fmt.Errorf("bunting exited with %d before it was running:\n%s", code, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("bunting did not start:\n%s\n%s", stdout.String(), stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, err := os.ReadFile(filepath.Join(dir, "quickstart-tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &tokens); err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{tokens.Admin, tokens.Client, tokens.Frontend, tokens.ClientKey} {
		if !strings.Contains(stdout.String(), secret) {
			t.Fatalf("the banner does not print %q:\n%s", secret, stdout.String())
		}
	}
	stop = func() {
		cancel()
		select {
		case code := <-done:
			if code != 0 {
				t.Errorf("bunting exited with %d:\n%s", code, stderr.String())
			}
		case <-time.After(15 * time.Second):
			t.Error("bunting did not stop")
		}
	}
	return "http://127.0.0.1:" + strconv.Itoa(serverPort), "http://127.0.0.1:" + strconv.Itoa(proxyPort), tokens, stdout.String, stop, nil
}

// readmeWalkthrough returns the README's quick-start walkthrough: the body
// of its one fenced block opened with "```sh walkthrough".
func readmeWalkthrough(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var block []string
	inBlock, found := false, 0
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case !inBlock && strings.TrimSpace(line) == "```sh walkthrough":
			inBlock, found = true, found+1
		case inBlock && strings.TrimSpace(line) == "```":
			inBlock = false
		case inBlock:
			block = append(block, line)
		}
	}
	if found != 1 || inBlock {
		t.Fatalf("README.md has %d blocks opened with ```sh walkthrough (want one, closed)", found)
	}
	return strings.Join(block, "\n") + "\n"
}

// expectedOutputs are the walkthrough's comment lines that show what a
// command prints ("# {...}"), each as a pattern for one whole line of
// output in which "…" stands for anything.
func expectedOutputs(script string) []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "# {") {
			continue
		}
		parts := strings.Split(strings.TrimPrefix(line, "# "), "…")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		out = append(out, regexp.MustCompile("^"+strings.Join(parts, ".*")+"$"))
	}
	return out
}

// TestAllInOneServesTheWalkthroughAndKeepsItsTokens runs the README's
// quick-start walkthrough with bash against the real all-in-one process
// (the README's ports replaced by the process's), checks that it prints
// what the README says it prints, in that order, and that a restart keeps
// the tokens and the flag.
func TestAllInOneServesTheWalkthroughAndKeepsItsTokens(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the README's walkthrough needs %s: %v", tool, err)
		}
	}
	script := readmeWalkthrough(t)
	want := expectedOutputs(script)
	if len(want) < 3 {
		t.Fatalf("the walkthrough shows %d outputs; want the proxy's two answers and the event", len(want))
	}
	root := t.TempDir()
	dir := filepath.Join(root, "data") // the walkthrough reads data/quickstart-tokens.json
	server, proxy, tokens, stop := startAll(t, dir)

	script = strings.NewReplacer("http://localhost:4242", server, "http://localhost:3000", proxy).Replace(script)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the walkthrough failed: %v\n%s", err, out)
	}
	lines := strings.Split(string(out), "\n")
	next := 0
	for _, re := range want {
		for next < len(lines) && !re.MatchString(lines[next]) {
			next++
		}
		if next == len(lines) {
			t.Fatalf("the walkthrough did not print a line matching %s after the ones before it; it printed:\n%s", re, out)
		}
		next++
	}

	if code, body := testutil.Call(t, http.MethodGet, server+"/api/frontend", tokens.Frontend, ""); code != http.StatusOK {
		t.Fatalf("frontend API: %d %s", code, body)
	}
	if code, _ := testutil.Call(t, http.MethodGet, proxy+"/proxy", "wrong-key", ""); code != http.StatusUnauthorized {
		t.Fatalf("a wrong client key gets %d, want 401", code)
	}

	// The quick start's tokens cover every project: a flag in a project
	// made after the start reaches the proxy too.
	for _, c := range []struct{ path, body string }{
		{"/api/admin/projects", `{"id":"shop","name":"Shop"}`},
		{"/api/admin/projects/shop/features", `{"name":"shop-banner"}`},
		{"/api/admin/projects/shop/features/shop-banner/environments/development/strategies", `{"name":"default"}`},
		{"/api/admin/projects/shop/features/shop-banner/environments/development/on", ``},
	} {
		if code, body := testutil.Call(t, http.MethodPost, server+c.path, tokens.Admin, c.body); code/100 != 2 {
			t.Fatalf("POST %s: %d %s", c.path, code, body)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, body := testutil.Call(t, http.MethodGet, proxy+"/proxy", tokens.ClientKey, "")
		if strings.Contains(body, `"shop-banner"`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the quick-start proxy does not serve a flag of a new project: %s", body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.HasPrefix(tokens.Client, "*:development.") || !strings.HasPrefix(tokens.Frontend, "*:development.") {
		t.Errorf("the quick-start client and frontend tokens are %s… and %s…, want *:development ones", tokens.Client[:14], tokens.Frontend[:14])
	}
	stop()

	// A restart reuses the same tokens, and the flag is still there.
	server2, proxy2, tokens2, stop2 := startAll(t, dir)
	defer stop2()
	if tokens2 != tokens {
		t.Fatalf("tokens changed across restarts: %+v then %+v", tokens, tokens2)
	}
	if code, body := testutil.Call(t, http.MethodGet, server2+"/api/admin/projects/default/features/new-checkout", tokens.Admin, ""); code != http.StatusOK {
		t.Fatalf("flag after restart: %d %s", code, body)
	}
	if code, _ := testutil.Call(t, http.MethodGet, proxy2+"/proxy", tokens.ClientKey, ""); code != http.StatusOK {
		t.Fatalf("proxy after restart answers %d", code)
	}
}

// signsIn reports whether the web UI's sign-in accepts user and password.
func signsIn(t *testing.T, serverURL, user, password string) bool {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"username": user, "password": password})
	code, answer := testutil.Call(t, http.MethodPost, serverURL+"/auth/simple/login", "", string(body))
	if code != http.StatusOK && code != http.StatusUnauthorized {
		t.Fatalf("sign-in answered %d %s", code, answer)
	}
	return code == http.StatusOK
}

// rawQuickstartFile is the tokens file as JSON properties.
func rawQuickstartFile(t *testing.T, dir string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "quickstart-tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestQuickstartRecordsOnlyAWorkingAdminPassword: the tokens file records
// the first admin's password only when it made that password and it
// works; a password given in INIT_ADMIN_PASSWORD is neither recorded nor
// replaced by a made-up one, on the first start or later ones.
func TestQuickstartRecordsOnlyAWorkingAdminPassword(t *testing.T) {
	t.Run("generated", func(t *testing.T) {
		dir := t.TempDir()
		server, _, tokens, banner, stop := startAllBanner(t, dir)
		if tokens.AdminPassword == "" || !signsIn(t, server, "admin", tokens.AdminPassword) {
			t.Errorf("the file records admin password %q, which does not sign in", tokens.AdminPassword)
		}
		if !strings.Contains(banner(), tokens.AdminPassword) {
			t.Errorf("the banner does not show the password:\n%s", banner())
		}
		stop()
		// Given a password later, the admin keeps the one it has, and
		// the file keeps saying so.
		server, _, tokens2, stop := startAll(t, dir, "INIT_ADMIN_PASSWORD", "given-later-password")
		defer stop()
		if tokens2.AdminPassword != tokens.AdminPassword || !signsIn(t, server, "admin", tokens.AdminPassword) {
			t.Errorf("after a restart with INIT_ADMIN_PASSWORD the file says %q (was %q)", tokens2.AdminPassword, tokens.AdminPassword)
		}
	})
	t.Run("given", func(t *testing.T) {
		dir := t.TempDir()
		const given = "given-password-123"
		server, _, _, banner, stop := startAllBanner(t, dir, "INIT_ADMIN_PASSWORD", given)
		if !signsIn(t, server, "admin", given) {
			t.Fatal("the given password does not sign in")
		}
		for k, v := range rawQuickstartFile(t, dir) {
			if k == "adminPassword" || v == given {
				t.Errorf("the tokens file records %s=%q for a password that was given", k, v)
			}
		}
		if strings.Contains(banner(), given) {
			t.Errorf("the banner prints the given password:\n%s", banner())
		}
		stop()
		// A later start without it must not make one up either.
		server, _, tokens, banner, stop := startAllBanner(t, dir)
		defer stop()
		if pw := rawQuickstartFile(t, dir)["adminPassword"]; pw != "" {
			t.Errorf("after a restart the file records admin password %q (signs in: %v)", pw, signsIn(t, server, "admin", pw))
		}
		if tokens.AdminPassword != "" && strings.Contains(banner(), tokens.AdminPassword) {
			t.Errorf("the banner shows a made-up password:\n%s", banner())
		}
		if !signsIn(t, server, "admin", given) {
			t.Error("after a restart the given password does not sign in")
		}
	})
}

// TestQuickstartTokensFromBeforeCoverEveryProject: a tokens file made when
// the quick start's tokens were default:development ones is read with
// them covering every project, and written back so.
func TestQuickstartTokensFromBeforeCoverEveryProject(t *testing.T) {
	path := filepath.Join(t.TempDir(), "quickstart-tokens.json")
	old := `{"adminToken":"*:*.a1","clientToken":"default:development.c1","frontendToken":"default:development.f1","proxyClientKey":"proxy-k1"}`
	if err := os.WriteFile(path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens, err := loadQuickstartTokens(path)
	if err != nil {
		t.Fatal(err)
	}
	if tokens.Client != "*:development.c1" || tokens.Frontend != "*:development.f1" || tokens.Admin != "*:*.a1" || tokens.ClientKey != "proxy-k1" {
		t.Errorf("the old file reads as %+v", tokens)
	}
	if again := rawQuickstartFile(t, filepath.Dir(path)); again["clientToken"] != "*:development.c1" || again["frontendToken"] != "*:development.f1" {
		t.Errorf("the file is now %v", again)
	}
}
