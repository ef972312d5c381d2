package server

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/redact"
)

// middleware wraps a handler.
type middleware func(http.Handler) http.Handler

// chain applies mw so that the first one runs first.
func chain(h http.Handler, mw ...middleware) http.Handler {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return h
}

// requestIDPrefix makes request ids unique across processes; the counter
// makes them unique within one, without a random read per request.
var (
	requestIDPrefix = func() string {
		var b [4]byte
		_, _ = rand.Read(b[:])
		return hex.EncodeToString(b[:])
	}()
	requestCounter atomic.Uint64
)

// requestIDValue is a request id as a header value, with its text, in one
// allocation.
type requestIDValue struct {
	value [1]string
	text  [32]byte
}

// nextRequestID returns a new request id as an X-Request-Id header value.
func nextRequestID() []string {
	v := &requestIDValue{}
	b := append(v.text[:0], requestIDPrefix...)
	b = strconv.AppendUint(append(b, '-'), requestCounter.Add(1), 36)
	v.value[0] = unsafe.String(unsafe.SliceData(b), len(b))
	return v.value[:]
}

// statusWriter records the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	size   int
}

// WriteHeader records the first status.
func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// Write counts the bytes sent.
func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.size += n
	return n, err
}

// Unwrap lets http.ResponseController reach the original writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe gives every request an id (X-Request-Id, kept when the caller
// sends a sane one, see saneRequestID), logs it when done, and turns a panic into a logged 500
// with the error body.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		idValue := r.Header["X-Request-Id"]
		if len(idValue) == 0 || !saneRequestID(idValue[0]) {
			idValue = nextRequestID()
		} else {
			idValue = idValue[:1:1]
		}
		id := idValue[0]
		w.Header()["X-Request-Id"] = idValue
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("panic serving request", "requestId", id, "method", r.Method, "path", redact.Path(r.URL.Path),
					"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if sw.status == 0 {
					apierr.Write(sw, r, nil, apierr.Internal(fmt.Errorf("panic: %v", p)))
				}
			}
			level := slog.LevelDebug
			switch {
			case sw.status == http.StatusServiceUnavailable || sw.status == http.StatusInsufficientStorage:
				level = slog.LevelWarn // the database's trouble, logged by the store, not a bug
			case sw.status >= 500:
				level = slog.LevelError
			}
			if s.log.Enabled(r.Context(), level) {
				s.log.Log(r.Context(), level, "request", "requestId", id, "method", r.Method, "path", redact.Path(r.URL.Path),
					"status", sw.status, "bytes", sw.size, "duration", time.Since(start))
			}
		}()
		next.ServeHTTP(sw, r)
	})
}

// saneRequestID reports whether a caller's X-Request-Id may be kept and
// echoed: 1–64 characters of visible ASCII.
func saneRequestID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] <= ' ' || id[i] >= 0x7f {
			return false
		}
	}
	return true
}

// limitBody caps request bodies at the configured size (BODY_LIMIT, or
// IMPORT_BODY_LIMIT on the routes that take whole documents); reading past
// it fails with *http.MaxBytesError, which apierr maps to 413.
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit, name := s.cfg.BodyLimit, "BODY_LIMIT"
		if r.Method == http.MethodPost && s.importPaths[r.URL.Path] {
			limit, name = max(limit, s.cfg.ImportBodyLimit), "IMPORT_BODY_LIMIT"
		}
		if r.ContentLength > limit {
			apierr.Write(w, r, s.log, apierr.TooLarge("request body is larger than the limit of %d bytes (%s)", limit, name))
			return
		}
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(w, r.Body, limit)
		}
		next.ServeHTTP(w, r)
	})
}

// jsonBody rejects a request whose body is not declared as JSON (415).
func (s *Server) jsonBody(next http.Handler) http.Handler {
	return handlerFunc(s, func(w http.ResponseWriter, r *http.Request) error {
		if err := httpjson.RequireJSON(r); err != nil {
			return err
		}
		next.ServeHTTP(w, r)
		return nil
	})
}

// notFound answers every unknown path with the 404 error body.
func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	apierr.Write(w, r, s.log, apierr.NotFound("The path you were looking for (%s) is not available.", r.URL.Path))
}
