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
	"strconv"
	"strings"
	"time"
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
// pile up.
func DefaultLimits() Limits {
	return Limits{
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
}

// Validate reports a limit that is not positive.
func (l Limits) Validate() error {
	var errs []error
	for _, o := range Options() {
		if o.value(&l) <= 0 {
			errs = append(errs, fmt.Errorf("%s (-%s) must be positive", o.Env, o.Flag))
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

// Option is one limit as an environment variable and a command-line flag.
// Durations are written as Go durations ("30s", "2m") or as a whole number
// of milliseconds ("30000"); sizes as a number of bytes.
type Option struct {
	// Env is the environment variable, Flag the flag name (without "-").
	Env, Flag string
	// Usage describes the option for the flag help.
	Usage string
	// Set parses a value into l.
	Set func(l *Limits, v string) error
	// value reads the option's current value, as a number, for
	// validation and defaults.
	value func(l *Limits) int64
	// show formats the option's current value.
	show func(l *Limits) string
}

// Default is the option's value in DefaultLimits, as written in the README.
func (o Option) Default() string {
	d := DefaultLimits()
	return o.show(&d)
}

// Options lists the limits' options in the order the README shows them.
func Options() []Option {
	return []Option{
		duration("HTTP_READ_HEADER_TIMEOUT", "read-header-timeout", "how long reading a request's headers may take", func(l *Limits) *time.Duration { return &l.ReadHeaderTimeout }),
		duration("HTTP_READ_TIMEOUT", "read-timeout", "how long reading a whole request, body included, may take", func(l *Limits) *time.Duration { return &l.ReadTimeout }),
		duration("HTTP_WRITE_TIMEOUT", "write-timeout", "how long writing a response may take (streaming routes excepted)", func(l *Limits) *time.Duration { return &l.WriteTimeout }),
		duration("HTTP_IDLE_TIMEOUT", "idle-timeout", "how long a kept-alive connection may wait for its next request", func(l *Limits) *time.Duration { return &l.IdleTimeout }),
		{
			Env: "HTTP_MAX_HEADER_BYTES", Flag: "max-header-bytes", Usage: "largest request line and headers in bytes (larger: 431)",
			Set: func(l *Limits, v string) error {
				n, err := strconv.Atoi(strings.TrimSpace(v))
				if err != nil || n <= 0 {
					return errors.New("not a positive number of bytes")
				}
				l.MaxHeaderBytes = n
				return nil
			},
			value: func(l *Limits) int64 { return int64(l.MaxHeaderBytes) },
			show:  func(l *Limits) string { return strconv.Itoa(l.MaxHeaderBytes) },
		},
	}
}

func duration(env, flag, usage string, field func(*Limits) *time.Duration) Option {
	return Option{
		Env: env, Flag: flag, Usage: usage,
		Set: func(l *Limits, v string) error {
			d, err := ParseDuration(v)
			if err != nil {
				return err
			}
			*field(l) = d
			return nil
		},
		value: func(l *Limits) int64 { return int64(*field(l)) },
		show:  func(l *Limits) string { return field(l).String() },
	}
}

// ParseDuration reads a positive Go duration ("30s") or a whole number of
// milliseconds ("30000"), the proxy's unit for its other intervals.
func ParseDuration(v string) (time.Duration, error) {
	v = strings.TrimSpace(v)
	d, err := time.ParseDuration(v)
	if err != nil {
		ms, msErr := strconv.ParseInt(v, 10, 64)
		if msErr != nil {
			return 0, errors.New("not a duration (30s, 2m) or a number of milliseconds")
		}
		d = time.Duration(ms) * time.Millisecond
	}
	if d <= 0 {
		return 0, errors.New("must be positive")
	}
	return d, nil
}

// FromEnv reads every limit set in the environment; an error names the
// variable.
func (l *Limits) FromEnv(lookup func(string) (string, bool)) error {
	var errs []error
	for _, o := range Options() {
		v, ok := lookup(o.Env)
		if !ok || strings.TrimSpace(v) == "" {
			continue
		}
		if err := o.Set(l, v); err != nil {
			errs = append(errs, fmt.Errorf("%s: %q: %w", o.Env, v, err))
		}
	}
	return errors.Join(errs...)
}
