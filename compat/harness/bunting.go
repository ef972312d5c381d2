package harness

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// buildTimeout bounds the one `go build` of the bunting binary.
const buildTimeout = 5 * time.Minute

var (
	buildOnce sync.Once
	buildDir  string
	buildPath string
	buildErr  error
)

// BuntingBinary builds cmd/bunting from the repository once per test binary
// and returns its path. Call Cleanup from TestMain to remove it.
func BuntingBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "bunting-compat-bin-")
		if buildErr != nil {
			return
		}
		buildPath = filepath.Join(buildDir, "bunting")
		ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", buildPath, "./cmd/bunting")
		cmd.Dir = RepoRoot()
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/bunting: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildPath
}

// Cleanup removes what the harness made outside the tests' own temporary
// directories (the built binary). TestMain calls it.
func Cleanup() {
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
}

// Proxy is a running client proxy.
type Proxy struct {
	// Kind names the implementation ("bunting", "unleash-proxy").
	Kind string
	// BaseURL is the server root; the proxy endpoint is BaseURL + "/proxy".
	BaseURL string
	// ClientKey is the accepted client key.
	ClientKey string
	// AppName is the name the proxy reports upstream.
	AppName string
	// ServerSDKToken, when set, lets server-side SDKs read
	// /proxy/client/features (expServerSideSdkConfig.tokens).
	ServerSDKToken string
	Process        *Process
}

// SDKEndpoint is where server-side SDKs connect to the proxy.
func (p *Proxy) SDKEndpoint() Endpoint {
	return Endpoint{URL: p.BaseURL + "/proxy", Token: p.ServerSDKToken}
}

// Client returns a /proxy client for p.
func (p *Proxy) Client() *ProxyClient { return NewProxyClient(p.BaseURL+"/proxy", p.ClientKey) }

// proxyReadyTimeout bounds the wait for a proxy's first upstream sync.
const proxyReadyTimeout = 30 * time.Second

// StartBuntingProxy runs `bunting proxy` against the upstream's client API,
// syncing and posting metrics every second, and waits until it is ready.
// extraEnv adds or overrides configuration variables. The proxy accepts
// server-side SDKs with its ServerSDKToken.
func StartBuntingProxy(t testing.TB, up *Upstream, appName string, extraEnv map[string]string) *Proxy {
	t.Helper()
	bin := BuntingBinary(t)
	port := FreePort(t)
	key := "compat-proxy-key-" + randomHex(4)
	sdkToken := "compat-proxy-sdk-token-" + randomHex(4)
	env := map[string]string{
		"EXP_SERVER_SIDE_SDK_CONFIG_TOKENS": sdkToken,
		"UPSTREAM_URL":                      up.APIURL(),
		"UPSTREAM_API_TOKEN":                up.ClientToken,
		"UPSTREAM_PROXY_CLIENT_KEYS":        key,
		"UPSTREAM_APP_NAME":                 appName,
		"UPSTREAM_INSTANCE_ID":              appName + "-1",
		"UPSTREAM_FETCH_INTERVAL":           "1000",
		"UPSTREAM_METRICS_INTERVAL":         "1000",
		"PORT":                              strconv.Itoa(port),
		"LISTEN_ADDRESS":                    "127.0.0.1",
		"LOG_LEVEL":                         "info",
		"TMPDIR":                            t.TempDir(),
	}
	maps.Copy(env, extraEnv)
	p := StartProcess(t, "bunting-proxy-"+appName, "", env, bin, "proxy")
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	WaitHTTP(t, p, base+"/proxy/health", nil, 200, proxyReadyTimeout)
	return &Proxy{Kind: "bunting", BaseURL: base, ClientKey: key, AppName: appName, ServerSDKToken: sdkToken, Process: p}
}

// StartNodeProxy runs the reference Node proxy (npm @unleash/proxy 1.4.19 on
// Node 22) against the upstream and waits until it is ready.
func StartNodeProxy(t testing.TB, up *Upstream, appName string) *Proxy {
	t.Helper()
	node := Node22(t)
	startJS := NodePackageFile(t, filepath.Join("@unleash", "proxy", "dist", "start.js"))
	port := FreePort(t)
	key := "compat-node-proxy-key-" + randomHex(4)
	env := map[string]string{
		"UNLEASH_URL":               up.APIURL(),
		"UNLEASH_API_TOKEN":         up.ClientToken,
		"UNLEASH_PROXY_CLIENT_KEYS": key,
		"UNLEASH_APP_NAME":          appName,
		"UNLEASH_INSTANCE_ID":       appName + "-1",
		"UNLEASH_FETCH_INTERVAL":    "1000",
		"UNLEASH_METRICS_INTERVAL":  "1000",
		"PORT":                      strconv.Itoa(port),
		"LOG_LEVEL":                 "warn",
		"TMPDIR":                    t.TempDir(),
	}
	p := StartProcess(t, "node-proxy-"+appName, "", env, node, startJS)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	WaitHTTP(t, p, base+"/proxy/health", nil, 200, proxyReadyTimeout)
	return &Proxy{Kind: "unleash-proxy", BaseURL: base, ClientKey: key, AppName: appName, Process: p}
}

// serverStartTimeout bounds the Bunting server start (migrations included).
const serverStartTimeout = 60 * time.Second

// Databases StartBuntingServer can use.
const (
	SQLite   = "sqlite"
	Postgres = "postgres"
)

// StartBuntingServer runs `bunting server` with the harness tokens on a
// fresh database (a SQLite file, or a new PostgreSQL database) and waits
// until it is healthy.
func StartBuntingServer(t testing.TB, database string) *Upstream {
	t.Helper()
	bin := BuntingBinary(t)
	port := FreePort(t)
	dir := t.TempDir()
	env := map[string]string{
		"DATABASE_PATH":            filepath.Join(dir, "bunting.db"),
		"INIT_ADMIN_API_TOKENS":    AdminToken,
		"INIT_CLIENT_API_TOKENS":   ClientToken,
		"INIT_FRONTEND_API_TOKENS": FrontendToken,
		"HTTP_HOST":                "127.0.0.1",
		"HTTP_PORT":                strconv.Itoa(port),
		"PORT":                     strconv.Itoa(port),
		"LOG_LEVEL":                "info",
		"TMPDIR":                   dir,
	}
	switch database {
	case SQLite:
	case Postgres:
		env["DATABASE_URL"] = CreateDatabase(t, "bunting_compat_server")
	default:
		t.Fatalf("unknown database %q", database)
	}
	p := StartProcess(t, "bunting-server", dir, env, bin, "server")
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	WaitHTTP(t, p, base+"/health", nil, 200, serverStartTimeout)
	u := &Upstream{Kind: "bunting", BaseURL: base, AdminToken: AdminToken, ClientToken: ClientToken, FrontendToken: FrontendToken, Process: p}
	starts := 1
	u.restart = func(t testing.TB) {
		u.Process.Stop()
		starts++
		u.Process = StartProcess(t, fmt.Sprintf("bunting-server-%d", starts), dir, env, bin, "server")
		WaitHTTP(t, u.Process, base+"/health", nil, 200, serverStartTimeout)
	}
	return u
}
