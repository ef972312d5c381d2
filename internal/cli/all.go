package cli

import (
	"cmp"
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
	"strings"
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
	// AdminPassword is the first web UI admin's initial password, recorded
	// only when this mode made it and created the admin with it: never a
	// password given in INIT_ADMIN_PASSWORD, nor one made up for an admin
	// that already existed.
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
		// Files made before the tokens covered every project held
		// default:development ones, which cannot see a project made
		// later: they now cover all projects (same secret part).
		widened := false
		for _, tok := range []*string{&t.Client, &t.Frontend} {
			if rest, ok := strings.CutPrefix(*tok, "default:development."); ok {
				*tok, widened = "*:development."+rest, true
			}
		}
		if widened {
			return t, saveQuickstartTokens(path, t)
		}
		return t, nil
	case !errors.Is(err, fs.ErrNotExist):
		return t, err
	}
	t = quickstartTokens{
		Admin:     "*:*." + server.RandomHex(24),
		Client:    "*:development." + server.RandomHex(24),
		Frontend:  "*:development." + server.RandomHex(24),
		ClientKey: "proxy-" + server.RandomHex(16),
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return t, err
	}
	return t, saveQuickstartTokens(path, t)
}

// saveQuickstartTokens writes the tokens file, readable by its owner only.
func saveQuickstartTokens(path string, t quickstartTokens) error {
	b, _ := json.MarshalIndent(t, "", "  ")
	return os.WriteFile(path, append(b, '\n'), 0o600)
}

// quickstartAdmin creates the first web UI admin when the database holds
// nobody (srv.BootstrapAdminUser) and keeps the tokens file true about its
// password: the password this mode made is recorded once the admin is
// created with it; a recorded one that the new admin does not have (it
// was given INIT_ADMIN_PASSWORD) is removed. It returns what the banner
// says the password is. given is INIT_ADMIN_PASSWORD; made the password
// made for this start (when neither given nor recorded, else "").
func quickstartAdmin(ctx context.Context, srv *server.Server, path string, tokens *quickstartTokens, given, made string) (string, error) {
	name, _, err := srv.BootstrapAdminUser(ctx)
	if err != nil {
		return "", fmt.Errorf("create the first admin: %w", err)
	}
	created := name != ""
	switch {
	case created && made != "":
		tokens.AdminPassword = made
	case created && given != "":
		tokens.AdminPassword = ""
	}
	if created {
		if err := saveQuickstartTokens(path, *tokens); err != nil {
			return "", err
		}
	}
	switch {
	case tokens.AdminPassword != "":
		return tokens.AdminPassword + " (the first admin's initial password)", nil
	case created:
		return "(INIT_ADMIN_PASSWORD)", nil
	default:
		return "(the password the first admin was given)", nil
	}
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
	given, made := scfg.InitAdminPassword, ""
	if given == "" {
		if tokens.AdminPassword == "" {
			made = server.RandomHex(8)
		}
		scfg.InitAdminPassword = cmp.Or(tokens.AdminPassword, made)
	}
	uiUser := cmp.Or(scfg.InitAdminUser, "admin")
	srv, err := server.New(scfg, st, log)
	if err != nil {
		return err
	}
	uiPassword, err := quickstartAdmin(ctx, srv, tokensPath, &tokens, given, made)
	if err != nil {
		return err
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

  Web UI         %[1]s%[8]s/    sign in as %[9]s with password %[10]s
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
