// Package httpserver holds the connection limits every Bunting HTTP
// listener applies (`bunting server`, `bunting proxy` and the all-in-one
// mode): read, write and idle timeouts and a request header size limit,
// with their defaults and the options that change them.
package httpserver

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/bunting-flags/bunting/internal/config"
)

// Limits bound what one connection may cost the server. A slow or idle
// client is disconnected once a timeout passes, and a request whose
// headers are larger than MaxHeaderBytes gets 431.
type Limits struct {
	// ReadHeaderTimeout bounds reading a request's headers
	// (HTTP_READ_HEADER_TIMEOUT).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included
	// (HTTP_READ_TIMEOUT).
	ReadTimeout time.Duration
	// WriteTimeout bounds writing a response, from the end of the request
	// headers (HTTP_WRITE_TIMEOUT). Streaming routes lift it (Streaming).
	WriteTimeout time.Duration
	// IdleTimeout is how long a kept-alive connection may wait for its
	// next request (HTTP_IDLE_TIMEOUT).
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request line and headers
	// (HTTP_MAX_HEADER_BYTES).
	MaxHeaderBytes int
}

// DefaultLimits are generous for any real client (a 100 kB body at 4 kB/s
// takes 25 s) and short enough that idle or trickling connections do not
// pile up. They are the defaults of Options.
func DefaultLimits() Limits {
	var l Limits
	config.Defaults(Options(&l))
	return l
}

// Validate reports a limit that is not positive.
func (l Limits) Validate() error {
	var errs []error
	bad := []bool{l.ReadHeaderTimeout <= 0, l.ReadTimeout <= 0, l.WriteTimeout <= 0, l.IdleTimeout <= 0, l.MaxHeaderBytes <= 0}
	for i, o := range Options(&l) {
		if bad[i] {
			errs = append(errs, fmt.Errorf("%s (-%s) must be positive", o.Env[0], o.Flag))
		}
	}
	return errors.Join(errs...)
}

// Server returns an http.Server serving h with the limits, logging its own
// errors (failed handshakes, panics) to log at warn level.
func (l Limits) Server(h http.Handler, log *slog.Logger) *http.Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// Streaming lifts the write timeout for the requests h serves, for routes
// whose answer stays open (server-sent events): the connection's write
// deadline is cleared before h runs. The request's headers (and body) are
// read under the usual timeouts, and the idle timeout applies after it.
// (net/http already clears the read deadline while a handler runs.)
func Streaming(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		h.ServeHTTP(w, r)
	})
}

// Options are the limits as options of `bunting server` and `bunting
// proxy`, bound to l, in the order docs/configuration.md shows them. Durations are
// Go durations ("30s", "2m") or whole numbers of milliseconds ("30000").
func Options(l *Limits) []config.Option {
	return []config.Option{
		{Name: "read-header-timeout", Env: []string{"HTTP_READ_HEADER_TIMEOUT"}, Flag: "read-header-timeout", Default: "10s", Usage: "longest time to read a request's headers", Value: config.DurationOrMillis(&l.ReadHeaderTimeout)},
		{Name: "read-timeout", Env: []string{"HTTP_READ_TIMEOUT"}, Flag: "read-timeout", Default: "30s", Usage: "longest time to read a whole request, body included", Value: config.DurationOrMillis(&l.ReadTimeout)},
		{Name: "write-timeout", Env: []string{"HTTP_WRITE_TIMEOUT"}, Flag: "write-timeout", Default: "1m", Usage: "longest time to write a response (streaming routes excepted)", Value: config.DurationOrMillis(&l.WriteTimeout)},
		{Name: "idle-timeout", Env: []string{"HTTP_IDLE_TIMEOUT"}, Flag: "idle-timeout", Default: "2m", Usage: "how long a kept-alive connection may wait for its next request", Value: config.DurationOrMillis(&l.IdleTimeout)},
		{Name: "max-header-bytes", Env: []string{"HTTP_MAX_HEADER_BYTES"}, Flag: "max-header-bytes", Default: "65536", Usage: "largest request line and headers in bytes (larger: 431)", Value: config.Int(&l.MaxHeaderBytes, 1, 1<<31-1)},
	}
}

// FromEnv reads every limit set in the environment; an error names the
// variable.
func (l *Limits) FromEnv(lookup func(string) (string, bool)) error {
	return config.FromEnv(Options(l), lookup)
}
