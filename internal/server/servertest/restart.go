package servertest

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/store"
)

// StartAt runs a server on db listening on addr ("127.0.0.1:0" for any
// port) and returns it with a stop function, so that a test can stop a
// server and start another on the same address and database (restarts).
// Stop waits for the server to end and closes its store; it is also run at
// cleanup, and may be called more than once.
func StartAt(t testing.TB, db Database, addr string, opts ...Option) (*Harness, func()) {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.Host, cfg.Port = "127.0.0.1", 0
	cfg.DatabaseURL, cfg.DatabasePath = db.URL, db.Path
	cfg.InitAdminTokens = []string{AdminToken}
	cfg.InitClientTokens = []string{ClientToken, ProdToken}
	cfg.InitFrontendTokens = []string{FrontendToken}
	cfg.RevisionPollInterval = 200 * time.Millisecond
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
	var ln net.Listener
	if err == nil {
		ln, err = net.Listen("tcp", addr)
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
	return &Harness{
		URL: "http://" + ln.Addr().String(), AdminToken: AdminToken, ClientToken: ClientToken, FrontendToken: FrontendToken,
		DB: db, Server: srv, Store: st, Client: &http.Client{Timeout: 30 * time.Second}, logs: logs,
	}, stop
}
