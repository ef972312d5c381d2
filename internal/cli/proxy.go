package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/bunting-flags/bunting/internal/redact"
	"github.com/bunting-flags/bunting/proxy"
)

// runProxy runs the client proxy until ctx ends: configuration from the
// environment and flags, then the listener, the upstream sync and a
// graceful shutdown.
func runProxy(ctx context.Context, args []string, env LookupEnv, stdout, stderr io.Writer) error {
	cfg, err := proxy.LoadConfigTo(env, args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return errUsage
	}
	if err != nil {
		return err
	}
	log := proxy.NewLogger(cfg, stderr)
	proxy.Version = versionString()
	p, err := proxy.New(cfg, proxy.WithLogger(log), proxy.WithMemoryCompaction())
	if err != nil {
		return err
	}
	return serveProxy(ctx, p, cfg, log)
}

// serveProxy listens on the configured port and runs the proxy's upstream
// sync until ctx ends, then shuts down gracefully.
func serveProxy(ctx context.Context, p *proxy.Proxy, cfg proxy.Config, log *slog.Logger) error {
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.ListenAddress, strconv.Itoa(cfg.Port)))
	if err != nil {
		return fmt.Errorf("listening on port %d: %w", cfg.Port, err)
	}
	srv := cfg.HTTP.Server(p, log)
	ln = proxy.CoalesceWrites(srv, ln)
	log.Info("bunting proxy is listening", "address", ln.Addr().String(), "upstream", redact.URL(cfg.UpstreamURL))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runDone := make(chan error, 1)
	go func() { runDone <- p.Run(ctx) }()
	serveDone := make(chan error, 1)
	go func() { serveDone <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err = <-serveDone:
		cancel()
		<-runDone
		return fmt.Errorf("serving: %w", err)
	}
	shutdownCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	err = srv.Shutdown(shutdownCtx)
	<-runDone
	return err
}
