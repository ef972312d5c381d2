package proxy

import (
	"io"
	"log/slog"
)

// NewLogger builds the proxy's default logger: text lines, or one-line
// JSON with UseJSONLogger, at LogLevel and above.
func NewLogger(cfg Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.UseJSONLogger {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
