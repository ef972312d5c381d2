package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/store"
)

// runServer runs the flag server until ctx is cancelled.
func runServer(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) error {
	cfg, err := server.ParseConfig(args, server.LookupEnv(env), stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	log := NewLogger(stderr, cfg.LogLevel, cfg.JSONLogger)
	st, err := store.Open(ctx, store.Config{URL: cfg.DatabaseURL, Path: cfg.DatabasePath, Logger: log})
	if err != nil {
		return err
	}
	defer st.Close()
	srv, err := server.New(cfg, st, log)
	if err != nil {
		return err
	}
	admin, err := srv.Bootstrap(ctx)
	if err != nil {
		return fmt.Errorf("create initial API tokens: %w", err)
	}
	if admin != "" {
		fmt.Fprintf(stdout, "Created an admin API token (shown only this once):\n  %s\n", admin)
	}
	user, password, err := srv.BootstrapAdminUser(ctx)
	if err != nil {
		return fmt.Errorf("create the first admin: %w", err)
	}
	if password != "" {
		fmt.Fprintf(stdout, "Created the first admin of the web UI, %s, with a generated password (shown only this once):\n  %s\n", user, password)
	}
	if err := srv.BootstrapSSO(ctx); err != nil {
		return fmt.Errorf("store the OIDC settings: %w", err)
	}
	return srv.ListenAndServe(ctx, func(addr net.Addr) {
		log.Info("bunting server listening", "addr", addr.String(), "database", st.Dialect().Name)
	})
}

// NewLogger builds the slog logger for a level and format.
func NewLogger(w io.Writer, level string, json bool) *slog.Logger {
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: lv}
	if json {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
