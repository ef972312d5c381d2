package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/store"
	"github.com/bunting-flags/bunting/proxy"
)

// quickstartTokens are the credentials the all-in-one mode makes on its
// first start and reuses afterwards, so every `make run` prints the same
// working tokens.
type quickstartTokens struct {
	Admin     string `json:"adminToken"`
	Client    string `json:"clientToken"`
	Frontend  string `json:"frontendToken"`
	ClientKey string `json:"proxyClientKey"`
	// AdminPassword is the first web UI admin's initial password (files
	// written before the web UI lack it; it is added on the next start).
	AdminPassword string `json:"adminPassword,omitempty"`
}

// quickstartFile is where the all-in-one mode keeps its tokens: next to the
// SQLite file, or in ./data when the server runs on PostgreSQL.
func quickstartFile(cfg server.Config) string {
	dir := "data"
	if cfg.DatabaseURL == "" && cfg.DatabasePath != "" {
		dir = filepath.Dir(cfg.DatabasePath)
	}
	return filepath.Join(dir, "quickstart-tokens.json")
}

// loadQuickstartTokens reads the tokens file, or makes new tokens (and the
// file, readable by its owner only) when there is none.
func loadQuickstartTokens(path string) (quickstartTokens, error) {
	var t quickstartTokens
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &t); err != nil || t.Admin == "" || t.Client == "" || t.Frontend == "" || t.ClientKey == "" {
			return t, fmt.Errorf("%s is not a valid quickstart tokens file; delete it to make new tokens", path)
		}
		if t.AdminPassword != "" {
			return t, nil
		}
		t.AdminPassword = server.RandomHex(8)
		b, _ = json.MarshalIndent(t, "", "  ")
		return t, os.WriteFile(path, append(b, '\n'), 0o600)
	case !errors.Is(err, fs.ErrNotExist):
		return t, err
	}
	t = quickstartTokens{
		Admin:         "*:*." + server.RandomHex(24),
		Client:        "default:development." + server.RandomHex(24),
		Frontend:      "default:development." + server.RandomHex(24),
		ClientKey:     "proxy-" + server.RandomHex(16),
		AdminPassword: server.RandomHex(8),
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return t, err
	}
	b, _ = json.MarshalIndent(t, "", "  ")
	return t, os.WriteFile(path, append(b, '\n'), 0o600)
}

// runAll runs the flag server and a proxy wired to it in one process, for
// trying Bunting out. Flags and environment configure the server as for
// `bunting server`; the proxy reads its usual environment variables, except
// that its upstream, token and client key default to the quickstart ones
// and its port comes from PROXY_PORT (default 3000) only.
func runAll(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) error {
	scfg, err := server.ParseConfig(args, server.LookupEnv(env), stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	log := NewLogger(stderr, scfg.LogLevel, scfg.JSONLogger)
	st, err := store.Open(ctx, store.Config{URL: scfg.DatabaseURL, Path: scfg.DatabasePath, Logger: log})
	if err != nil {
		return err
	}
	defer st.Close()
	tokensPath := quickstartFile(scfg)
	tokens, err := loadQuickstartTokens(tokensPath)
	if err != nil {
		return err
	}
	if scfg.InitAdminPassword == "" {
		scfg.InitAdminPassword = tokens.AdminPassword
	}
	uiUser, uiPassword := scfg.InitAdminUser, scfg.InitAdminPassword
	if uiUser == "" {
		uiUser = "admin"
	}
	if scfg.InitAdminPassword != tokens.AdminPassword {
		uiPassword = "(INIT_ADMIN_PASSWORD)"
	}
	srv, err := server.New(scfg, st, log)
	if err != nil {
		return err
	}
	if _, _, err := srv.BootstrapAdminUser(ctx); err != nil {
		return fmt.Errorf("create the first admin: %w", err)
	}
	if err := srv.BootstrapSSO(ctx); err != nil {
		return fmt.Errorf("store the OIDC settings: %w", err)
	}
	for _, t := range []struct{ name, typ, secret string }{
		{"quickstart-admin", store.TokenAdmin, tokens.Admin},
		{"quickstart-proxy", store.TokenClient, tokens.Client},
		{"quickstart-frontend", store.TokenFrontend, tokens.Frontend},
	} {
		if err := srv.EnsureAPIToken(ctx, t.name, t.typ, t.secret); err != nil {
			return fmt.Errorf("create the quickstart tokens: %w", err)
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	serverAddr := make(chan net.Addr, 1)
	serverDone := make(chan error, 1)
	go func() {
		serverDone <- srv.ListenAndServe(ctx, func(a net.Addr) { serverAddr <- a })
	}()
	var addr net.Addr
	select {
	case addr = <-serverAddr:
	case err := <-serverDone:
		return fmt.Errorf("server: %w", err)
	}
	serverURL := "http://127.0.0.1:" + strconv.Itoa(addr.(*net.TCPAddr).Port)

	pcfg, err := proxy.LoadConfigTo(quickstartProxyEnv(env, serverURL, filepath.Dir(tokensPath), tokens), nil, stderr)
	if err != nil {
		cancel()
		<-serverDone
		return fmt.Errorf("proxy: %w", err)
	}
	pcfg.HTTP = scfg.HTTP // one set of connection limits, from the server's variables and flags
	proxy.Version = versionString()
	p, err := proxy.New(pcfg, proxy.WithLogger(log))
	if err != nil {
		cancel()
		<-serverDone
		return fmt.Errorf("proxy: %w", err)
	}
	proxyURL := "http://127.0.0.1:" + strconv.Itoa(pcfg.Port) + pcfg.ProxyBasePath + "/proxy"
	// The banner waits until the proxy has its first flags (a moment: the
	// server is in this process), so that what it lists answers at once.
	bannerDone := make(chan struct{})
	go func() {
		defer close(bannerDone)
		select {
		case <-p.ReadyChan():
		case <-time.After(10 * time.Second):
		case <-ctx.Done():
			return
		}
		fmt.Fprintf(stdout, `Bunting is running (server and proxy in one process).

  Web UI         %[1]s%[8]s/    sign in as %[9]s with password %[10]s (the first admin's initial password)
  Admin API      %[1]s/api/admin        Authorization: %[3]s
  Client API     %[1]s/api/client       Authorization: %[4]s
  Frontend API   %[1]s/api/frontend     Authorization: %[5]s
  Proxy          %[2]s    Authorization: %[6]s
  API docs       %[1]s/docs/openapi

The tokens are kept in %[7]s (readable by you only). Stop with Ctrl-C.
`, serverURL, proxyURL, tokens.Admin, tokens.Client, tokens.Frontend, tokens.ClientKey, tokensPath, scfg.BasePath, uiUser, uiPassword)
	}()

	proxyErr := serveProxy(ctx, p, pcfg, log)
	cancel()
	<-bannerDone
	serverErr := <-serverDone
	if proxyErr != nil {
		return fmt.Errorf("proxy: %w", proxyErr)
	}
	if serverErr != nil {
		return fmt.Errorf("server: %w", serverErr)
	}
	return nil
}

// quickstartProxyEnv is the proxy's environment in the all-in-one mode: the
// user's variables, with the upstream, token, client key, backup directory
// and a 1 s refresh filled in when unset, and PORT left to the server.
func quickstartProxyEnv(env LookupEnv, serverURL, dataDir string, t quickstartTokens) LookupEnv {
	defaults := map[string]string{
		"EXP_BACKUP_DIR":             dataDir,
		"UPSTREAM_URL":               serverURL + "/api",
		"UPSTREAM_API_TOKEN":         t.Client,
		"UPSTREAM_PROXY_CLIENT_KEYS": t.ClientKey,
		"UPSTREAM_FETCH_INTERVAL":    "1000",
		"UPSTREAM_METRICS_INTERVAL":  "10000",
	}
	return func(name string) (string, bool) {
		if name == "PORT" {
			return "", false
		}
		if v, ok := env(name); ok && v != "" {
			return v, true
		}
		v, ok := defaults[name]
		return v, ok
	}
}
