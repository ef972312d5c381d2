// Package servertest starts the real Bunting server on loopback against a
// fresh SQLite file or a fresh PostgreSQL database, for black-box tests.
//
//	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
//		res := h.Do(t, "GET", "/api/admin/projects", h.AdminToken, nil)
//		res.Want(t, 200)
//	})
//
// Run executes the body against SQLite always and against PostgreSQL when
// TEST_POSTGRES_URL is set. With BUNTING_REQUIRE_POSTGRES=1 an unset or
// unreachable PostgreSQL fails the test instead of skipping that half.
package servertest

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // postgres driver for CREATE/DROP DATABASE

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/store"
)

// Well-known secrets every harness server is started with.
const (
	AdminToken    = "*:*.test-admin-secret"
	ClientToken   = "default:development.test-client-secret"
	ProdToken     = "default:production.test-client-prod-secret"
	FrontendToken = "default:development.test-frontend-secret"
	// AdminUser and AdminPassword sign in the first admin of the web UI.
	AdminUser     = "admin"
	AdminPassword = "test-admin-password"
)

// Database is where a harness server keeps its data; two servers started
// on the same Database share it (multi-instance tests).
type Database struct {
	// Kind is "sqlite" or "postgres".
	Kind string
	// URL is the PostgreSQL URL, Path the SQLite file.
	URL  string
	Path string
}

// Harness is one running server.
type Harness struct {
	// URL is the server's base address, e.g. http://127.0.0.1:41234.
	URL string
	// AdminToken, ClientToken and FrontendToken are valid secrets.
	AdminToken, ClientToken, FrontendToken string
	// DB is the database the server runs on.
	DB Database
	// Server and Store are the running objects, for white-box checks.
	Server *server.Server
	Store  *store.Store
	// Client is the HTTP client used by Do.
	Client *http.Client
	logs   *logBuffer
	stop   func()
}

// Option adjusts the configuration of a harness server.
type Option func(*server.Config)

// Run runs body against every available database as subtests named
// "sqlite" and "postgres".
func Run(t *testing.T, body func(t *testing.T, h *Harness), opts ...Option) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		body(t, Start(t, NewSQLite(t), opts...))
	})
	t.Run("postgres", func(t *testing.T) {
		db := NewPostgres(t)
		body(t, Start(t, db, opts...))
	})
}

// RunDB runs body with a fresh database of every available kind, without
// starting a server (store-level tests).
func RunDB(t *testing.T, body func(t *testing.T, db Database)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { body(t, NewSQLite(t)) })
	t.Run("postgres", func(t *testing.T) { body(t, NewPostgres(t)) })
}

// NewSQLite returns a fresh SQLite database file in a temporary directory.
func NewSQLite(t testing.TB) Database {
	return Database{Kind: "sqlite", Path: filepath.Join(t.TempDir(), "bunting.db")}
}

// NewPostgres creates a fresh PostgreSQL database (dropped at cleanup),
// already migrated: it is copied from a template database that this build's
// migrations made (see postgresTemplate), which is much faster than
// migrating each test's database. Without TEST_POSTGRES_URL it skips,
// unless BUNTING_REQUIRE_POSTGRES=1, which turns a missing or unreachable
// PostgreSQL into a failure.
func NewPostgres(t testing.TB) Database {
	t.Helper()
	return newPostgres(t, true)
}

// NewEmptyPostgres is NewPostgres without the migrations: an empty
// database, for tests of migrating itself.
func NewEmptyPostgres(t testing.TB) Database {
	t.Helper()
	return newPostgres(t, false)
}

func newPostgres(t testing.TB, migrated bool) Database {
	t.Helper()
	base := os.Getenv("TEST_POSTGRES_URL")
	require := os.Getenv("BUNTING_REQUIRE_POSTGRES") == "1"
	if base == "" {
		if require {
			t.Fatal("BUNTING_REQUIRE_POSTGRES=1 but TEST_POSTGRES_URL is not set")
		}
		t.Skip("TEST_POSTGRES_URL is not set")
	}
	baseURL, err := url.Parse(base)
	if err != nil {
		t.Fatalf("TEST_POSTGRES_URL: %v", err)
	}
	admin, err := sql.Open("pgx", base)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = admin.PingContext(ctx)
		cancel()
	}
	if err != nil {
		if require {
			t.Fatalf("PostgreSQL at TEST_POSTGRES_URL is unreachable: %v", err)
		}
		t.Skipf("PostgreSQL unreachable: %v", err)
	}
	name := "bunting_test_" + server.RandomHex(6)
	create := `CREATE DATABASE ` + name
	if migrated {
		template, err := postgresTemplate(admin, baseURL)
		if err != nil {
			admin.Close()
			t.Fatalf("template database: %v", err)
		}
		create += ` TEMPLATE ` + template
	}
	if err := execWhileInUse(admin, create); err != nil {
		admin.Close()
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.Exec(`DROP DATABASE IF EXISTS ` + name + ` WITH (FORCE)`); err != nil {
			t.Logf("drop database %s: %v", name, err)
		}
	})
	return Database{Kind: "postgres", URL: databaseURL(baseURL, name)}
}

func databaseURL(base *url.URL, name string) string {
	u := *base
	u.Path = "/" + name
	return u.String()
}

// templateLockKey is the PostgreSQL advisory lock under which test
// binaries (several run at once under go test ./...) look for the template
// database and build it when it is missing.
const templateLockKey = 0x62756e74696e67 // "bunting"

var (
	templateMu    sync.Mutex
	templateReady = map[string]bool{}
)

// postgresTemplate returns the name of a database migrated by this build's
// migrations, to copy test databases from. It is named after the
// migrations' digest, so builds with other migrations (other branches, the
// next commit) use their own; it is built once per PostgreSQL server, under
// an advisory lock, in a scratch database that is renamed when complete,
// so no test copies a half-migrated template. Connections to it are then
// refused: CREATE DATABASE … TEMPLATE needs it idle.
func postgresTemplate(admin *sql.DB, base *url.URL) (string, error) {
	digest, err := store.MigrationDigest("postgres")
	if err != nil {
		return "", err
	}
	name := "bunting_tmpl_" + digest[:16]
	templateMu.Lock()
	defer templateMu.Unlock()
	if templateReady[name] {
		return name, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	conn, err := admin.Conn(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, templateLockKey); err != nil {
		return "", err
	}
	defer conn.ExecContext(context.Background(), `SELECT pg_advisory_unlock($1)`, templateLockKey) //nolint:errcheck // the session ends soon after
	var exists bool
	if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", err
	}
	if !exists {
		scratch := name + "_build_" + server.RandomHex(4)
		if _, err := conn.ExecContext(ctx, `CREATE DATABASE `+scratch); err != nil {
			return "", err
		}
		st, err := store.Open(ctx, store.Config{URL: databaseURL(base, scratch)})
		if err == nil {
			err = st.Close()
		}
		if err == nil {
			err = execWhileInUse(admin, `ALTER DATABASE `+scratch+` RENAME TO `+name)
		}
		if err != nil {
			_, _ = conn.ExecContext(context.Background(), `DROP DATABASE IF EXISTS `+scratch+` WITH (FORCE)`)
			return "", fmt.Errorf("migrate the template: %w", err)
		}
		if _, err := conn.ExecContext(ctx, `ALTER DATABASE `+name+` WITH ALLOW_CONNECTIONS false`); err != nil {
			return "", err
		}
	}
	templateReady[name] = true
	return name, nil
}

// execWhileInUse runs a statement that needs a database nobody is
// connected to, retrying while the sessions of a closed store are still
// ending (SQLSTATE 55006, object in use).
func execWhileInUse(db *sql.DB, stmt string) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := db.Exec(stmt)
		var pgErr *pgconn.PgError
		if err == nil || !errors.As(err, &pgErr) || pgErr.Code != "55006" || time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// OpenStore opens (and migrates) a store on db, closed at cleanup.
func OpenStore(t testing.TB, db Database) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), store.Config{URL: db.URL, Path: db.Path})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Start runs a server on db until the test ends (or until h.Stop). By
// default it listens on any free loopback port; At chooses the address, so
// that a test can stop a server and start another on the same address and
// database (restarts).
func Start(t testing.TB, db Database, opts ...Option) *Harness {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Host, cfg.Port = "127.0.0.1", 0
	cfg.DatabaseURL, cfg.DatabasePath = db.URL, db.Path
	cfg.InitAdminTokens = []string{AdminToken}
	cfg.InitClientTokens = []string{ClientToken, ProdToken}
	cfg.InitFrontendTokens = []string{FrontendToken}
	cfg.InitAdminUser, cfg.InitAdminPassword = AdminUser, AdminPassword
	cfg.RevisionPollInterval = 200 * time.Millisecond
	if cfg.DatabaseURL != "" {
		// PostgreSQL instances share a database, so the key that seals
		// stored secrets comes from the configuration (SQLite keeps one
		// next to its file).
		cfg.Secrets.Key = "servertest-secrets-key"
	}
	for _, o := range opts {
		o(&cfg)
	}
	logs := &logBuffer{}
	log := slog.New(slog.NewTextHandler(testWriter{t, logs}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithCancel(context.Background())
	st, err := store.Open(ctx, store.Config{URL: cfg.DatabaseURL, Path: cfg.DatabasePath, Logger: log})
	if err != nil {
		cancel()
		t.Fatalf("open store: %v", err)
	}
	srv, err := server.New(cfg, st, log)
	if err == nil {
		_, err = srv.Bootstrap(ctx)
	}
	if err == nil {
		_, _, err = srv.BootstrapAdminUser(ctx)
	}
	if err == nil {
		err = srv.BootstrapSSO(ctx)
	}
	var ln net.Listener
	if err == nil {
		ln, err = net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(cfg.Port)))
	}
	if err != nil {
		cancel()
		st.Close()
		t.Fatalf("start server: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln, nil) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("server stopped with error: %v", err)
			}
			st.Close()
		})
	}
	t.Cleanup(stop)
	waitBuilt(t, "http://"+ln.Addr().String())
	return &Harness{
		URL: "http://" + ln.Addr().String(), AdminToken: AdminToken, ClientToken: ClientToken, FrontendToken: FrontendToken,
		DB: db, Server: srv, Store: st, Client: &http.Client{Timeout: 30 * time.Second}, logs: logs, stop: stop,
	}
}

// waitBuilt waits until the server at url has built the configuration it
// serves SDKs from (its /health stops answering 503), as a load balancer
// would, so that a test's first request never meets a starting server.
func waitBuilt(t testing.TB, url string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server did not finish starting within 60 s (/health: %v)", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// At makes Start listen on addr, e.g. the address of a server the test
// stopped ("127.0.0.1:0" = any free port).
func At(addr string) Option {
	return func(c *server.Config) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			panic("servertest.At: " + err.Error())
		}
		c.Host = host
		c.Port, err = strconv.Atoi(port)
		if err != nil {
			panic("servertest.At: port " + port)
		}
	}
}

// Stop stops the server: it waits for it to end and closes its store. It
// also runs at cleanup, and may be called more than once.
func (h *Harness) Stop() { h.stop() }

// FlushUsage writes the SDK usage and instances the server counted in
// memory (which it does by itself every few seconds), so that a test can
// read them back at once.
func (h *Harness) FlushUsage(t testing.TB) {
	t.Helper()
	if err := h.Server.FlushUsage(context.Background()); err != nil {
		t.Fatalf("flush usage: %v", err)
	}
}

// Logs returns what the server has logged so far (warnings and errors).
func (h *Harness) Logs() string { return h.logs.String() }

// logBuffer keeps a server's log lines for Logs.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// testWriter sends server logs to the test log and keeps them.
type testWriter struct {
	t    testing.TB
	logs *logBuffer
}

// Write logs one line to the test.
func (w testWriter) Write(p []byte) (int, error) {
	w.logs.Write(p)
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Response is a finished HTTP exchange.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends a request. body may be nil, a string or []byte (sent as is), or
// any other value (sent as JSON). A non-nil body gets Content-Type
// application/json unless headers override it. headers are name/value pairs.
func (h *Harness) Do(t testing.TB, method, path, token string, body any, headers ...string) *Response {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		if err != nil {
			t.Fatalf("encode body: %v", err)
		}
		rd = bytes.NewReader(enc)
	}
	req, err := http.NewRequest(method, h.URL+path, rd)
	if err != nil {
		t.Fatalf("new request: %v", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	res, err := h.Client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: b}
}

// Want fails the test unless the status is one of want.
func (r *Response) Want(t testing.TB, want int) *Response {
	t.Helper()
	if r.Status != want {
		t.Fatalf("status %d, want %d; body: %s", r.Status, want, r.Body)
	}
	return r
}

// JSON decodes the body into v.
func (r *Response) JSON(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// Map decodes the body as a JSON object.
func (r *Response) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.JSON(t, &m)
	return m
}

// WantError checks an error response: its status, its Unleash error name,
// that it has an id, and that its message contains every fragment.
func (r *Response) WantError(t testing.TB, status int, name string, fragments ...string) {
	t.Helper()
	r.Want(t, status)
	var body struct{ ID, Name, Message string }
	r.JSON(t, &body)
	if body.ID == "" || body.Name != name {
		t.Fatalf("error body %s: want name %q and an id", r.Body, name)
	}
	for _, f := range fragments {
		if !strings.Contains(body.Message, f) {
			t.Fatalf("error message %q does not contain %q", body.Message, f)
		}
	}
}

// String is the body as text.
func (r *Response) String() string { return fmt.Sprintf("%d %s", r.Status, r.Body) }

// UserToken creates a (non-service) user with a root role (its name) and
// returns a personal access token secret for it. Users come from outside Bunting
// (there is no API to create one), so the user is written through the
// store, in one transaction with its event.
func (h *Harness) UserToken(t testing.TB, username, role string) string {
	t.Helper()
	secret := "user:" + server.RandomHex(28)
	err := h.Store.Tx(context.Background(), func(tx *store.Tx) error {
		r, err := tx.RoleByName(role)
		if err != nil {
			return err
		}
		id, err := tx.InsertUser(store.User{Username: &username, RootRole: r.ID, CreatedAt: tx.Now()})
		if err != nil {
			return err
		}
		if _, err := tx.InsertUserToken(store.UserToken{UserID: id, CreatedAt: tx.Now()}, secret); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "user-created", Actor: store.Actor{Name: "test"},
			Data: map[string]any{"id": id, "username": username}})
	})
	if err != nil {
		t.Fatalf("create user %s: %v", username, err)
	}
	return secret
}
