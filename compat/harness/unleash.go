package harness

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Upstream is a running flag server that speaks the Unleash admin and client
// APIs: the real Unleash server or Bunting's.
type Upstream struct {
	// Kind names the implementation in messages ("unleash", "bunting").
	Kind string
	// BaseURL is the server root, without a trailing slash.
	BaseURL string
	// AdminToken, ClientToken and FrontendToken were issued at start.
	AdminToken, ClientToken, FrontendToken string
	// Process is the server process.
	Process *Process
	// restart stops the process and starts it again on the same address
	// and database (Bunting's servers only).
	restart func(t testing.TB)
}

// Restart stops the server and starts it again on the same address and
// database, waiting until it answers.
func (u *Upstream) Restart(t testing.TB) {
	t.Helper()
	if u.restart == nil {
		t.Fatalf("%s cannot be restarted", u.Kind)
	}
	u.restart(t)
}

// APIURL is what SDKs and proxies take as their upstream URL (with /api).
func (u *Upstream) APIURL() string { return u.BaseURL + "/api" }

// ClientEndpoint is where server-side SDKs connect: the API URL and the
// client token.
func (u *Upstream) ClientEndpoint() Endpoint { return Endpoint{URL: u.APIURL(), Token: u.ClientToken} }

// Endpoint is what a server-side SDK is configured with.
type Endpoint struct {
	// URL is the SDK's url option (it appends client/features etc.).
	URL string
	// Token goes in the Authorization header.
	Token string
}

// WaitRegistration waits until the upstream shows that the client appName
// (instance instanceID) registered: both list the instance under
// /api/admin/metrics/applications/:appName, and Bunting's event log also
// has the application-created event of its first sighting (the event
// search it reads is Bunting's).
func (u *Upstream) WaitRegistration(t testing.TB, appName, instanceID string, timeout time.Duration) {
	t.Helper()
	u.Admin().WaitApplicationInstance(t, appName, instanceID, timeout)
	if u.Kind != "unleash" {
		u.Admin().WaitApplicationCreatedEvent(t, appName, instanceID, timeout)
	}
}

// Admin returns an admin API client for this upstream.
func (u *Upstream) Admin() *Admin { return NewAdmin(u.BaseURL, u.AdminToken) }

// Tokens used by every upstream the tests start. Client and frontend tokens
// are scoped to project default, environment development.
const (
	AdminToken    = "*:*.compat-admin-secret"
	ClientToken   = "default:development.compat-client-secret"
	FrontendToken = "default:development.compat-frontend-secret"
)

// unleashStartTimeout bounds the Unleash start: migrations on a fresh
// database take 20–25 s on an idle machine and minutes on a loaded one.
const unleashStartTimeout = 300 * time.Second

// StartUnleash starts the real Unleash server (npm unleash-server 8.2.0 on
// Node 22) on a fresh PostgreSQL database and waits until it is healthy.
func StartUnleash(t testing.TB) *Upstream {
	t.Helper()
	node := Node22(t)
	serverJS := NodePackageFile(t, filepath.Join("unleash-server", "dist", "server.js"))
	dbURL, _, _ := strings.Cut(CreateDatabase(t, "bunting_compat_unleash"), "?") // DATABASE_SSL says it
	port := FreePort(t)
	env := map[string]string{
		"DATABASE_URL":             dbURL,
		"DATABASE_SSL":             "false",
		"INIT_ADMIN_API_TOKENS":    AdminToken,
		"INIT_CLIENT_API_TOKENS":   ClientToken,
		"INIT_FRONTEND_API_TOKENS": FrontendToken,
		"NODE_ENV":                 "production",
		"CHECK_VERSION":            "false",
		"SEND_TELEMETRY":           "false",
		"LOG_LEVEL":                "info", // the log is shown only when a test fails
		"HTTP_HOST":                "127.0.0.1",
		"HTTP_PORT":                strconv.Itoa(port),
		"TZ":                       "UTC",
		// Long differential runs (compat/differential) create more
		// segments and flags than the default limits (300, 5000) allow.
		"UNLEASH_SEGMENTS_LIMIT":      "100000",
		"UNLEASH_FEATURE_FLAGS_LIMIT": "100000",
	}
	p := StartProcess(t, "unleash-server", "", env, node, serverJS)
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	WaitHTTP(t, p, base+"/health", nil, 200, unleashStartTimeout)
	return &Upstream{Kind: "unleash", BaseURL: base, AdminToken: AdminToken, ClientToken: ClientToken, FrontendToken: FrontendToken, Process: p}
}
