// Package apierr holds Bunting's typed domain errors and the one function
// that turns any error into an HTTP status and the Unleash error body
// {id, name, message}. Domain and store code return these errors; only the
// HTTP edge calls Write.
package apierr

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/internal/redact"
)

// Kind classifies an error; each kind maps to one HTTP status and one
// Unleash error name.
type Kind int

// The kinds of domain error.
const (
	KindInternal Kind = iota
	KindValidation
	KindUnauthenticated
	KindForbidden
	KindNotFound
	KindConflict
	KindTooLarge
	KindUnsupportedMediaType
	KindRateLimited
	KindMethodNotAllowed
	KindUnavailable
	KindNotImplemented
	KindPreconditionFailed
	// The storage kinds: the database, not the request, is the trouble, so
	// an operator can tell them from a bug and a client may retry.
	KindDatabaseUnavailable
	KindDatabaseReadOnly
	KindDatabaseBusy
	KindDatabaseFull
)

var kindInfo = map[Kind]struct {
	status int
	name   string
}{
	KindInternal:             {http.StatusInternalServerError, "InternalError"},
	KindValidation:           {http.StatusBadRequest, "ValidationError"},
	KindUnauthenticated:      {http.StatusUnauthorized, "AuthenticationRequired"},
	KindForbidden:            {http.StatusForbidden, "NoAccessError"},
	KindNotFound:             {http.StatusNotFound, "NotFoundError"},
	KindConflict:             {http.StatusConflict, "NameExistsError"},
	KindTooLarge:             {http.StatusRequestEntityTooLarge, "ContentTooLargeError"},
	KindUnsupportedMediaType: {http.StatusUnsupportedMediaType, "ContentTypeError"},
	KindRateLimited:          {http.StatusTooManyRequests, "RateLimitError"},
	KindMethodNotAllowed:     {http.StatusMethodNotAllowed, "MethodNotAllowedError"},
	KindUnavailable:          {http.StatusServiceUnavailable, "ServiceUnavailableError"},
	KindNotImplemented:       {http.StatusNotImplemented, "NotImplementedError"},
	KindPreconditionFailed:   {http.StatusPreconditionFailed, "PreconditionFailedError"},
	KindDatabaseUnavailable:  {http.StatusServiceUnavailable, "DatabaseUnavailable"},
	KindDatabaseReadOnly:     {http.StatusServiceUnavailable, "DatabaseReadOnly"},
	KindDatabaseBusy:         {http.StatusServiceUnavailable, "DatabaseBusy"},
	KindDatabaseFull:         {http.StatusInsufficientStorage, "DatabaseFull"},
}

// kindRetryAfter is the Retry-After, in seconds, sent with every error of
// a kind (others send one only when the error sets its own).
var kindRetryAfter = map[Kind]int{
	KindDatabaseUnavailable: 2,
	KindDatabaseReadOnly:    10,
	KindDatabaseBusy:        1,
	KindDatabaseFull:        30,
}

// Error is a domain error with a kind and a message for the caller.
type Error struct {
	Kind    Kind
	Message string
	// Name overrides the Unleash error name of the kind when set.
	Name string
	// RetryAfter, in seconds, is sent as Retry-After with rate-limit errors.
	RetryAfter int
	// Err is the underlying cause; it is logged, never sent.
	Err error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Status is the HTTP status of the error.
func (e *Error) Status() int { return kindInfo[e.Kind].status }

// ErrorName is the Unleash error name sent in the body.
func (e *Error) ErrorName() string {
	if e.Name != "" {
		return e.Name
	}
	return kindInfo[e.Kind].name
}

func newf(k Kind, format string, args ...any) *Error {
	return &Error{Kind: k, Message: fmt.Sprintf(format, args...)}
}

// Validation reports a request that does not match the schema; the message
// names the offending property.
func Validation(format string, args ...any) *Error { return newf(KindValidation, format, args...) }

// Unauthenticated reports a missing or invalid credential.
func Unauthenticated(format string, args ...any) *Error {
	return newf(KindUnauthenticated, format, args...)
}

// Forbidden reports a valid credential without the permission; the message
// names the permission (and the environment when it is scoped).
func Forbidden(format string, args ...any) *Error { return newf(KindForbidden, format, args...) }

// NotFound reports a resource that does not exist.
func NotFound(format string, args ...any) *Error { return newf(KindNotFound, format, args...) }

// Conflict reports a name that already exists.
func Conflict(format string, args ...any) *Error { return newf(KindConflict, format, args...) }

// TooLarge reports a request body over the limit.
func TooLarge(format string, args ...any) *Error { return newf(KindTooLarge, format, args...) }

// UnsupportedMediaType reports a body whose content type is not accepted.
func UnsupportedMediaType(format string, args ...any) *Error {
	return newf(KindUnsupportedMediaType, format, args...)
}

// RateLimited reports too many requests; retryAfter is in seconds.
func RateLimited(retryAfter int, format string, args ...any) *Error {
	e := newf(KindRateLimited, format, args...)
	e.RetryAfter = retryAfter
	return e
}

// Unavailable reports a service that cannot answer yet (for example a proxy
// that has not synced with its upstream).
func Unavailable(format string, args ...any) *Error { return newf(KindUnavailable, format, args...) }

// MethodNotAllowed is the one 405 answer: a method or endpoint this API
// does not serve (MethodNotAllowedError).
func MethodNotAllowed(format string, args ...any) *Error {
	return newf(KindMethodNotAllowed, format, args...)
}

// Unsupported is the 405 of an Unleash endpoint that Bunting's API of the
// same family does not offer. Unleash names this answer
// NotImplementedError (with status 405), so SDKs and tests that read the
// name see the same.
func Unsupported(format string, args ...any) *Error {
	e := newf(KindMethodNotAllowed, format, args...)
	e.Name = "NotImplementedError"
	return e
}

// NotImplemented reports an endpoint that is switched off by configuration.
func NotImplemented(format string, args ...any) *Error {
	return newf(KindNotImplemented, format, args...)
}

// PreconditionFailed reports a change made on a version of an object that
// is no longer current (If-Match): someone else changed it meanwhile.
func PreconditionFailed(format string, args ...any) *Error {
	return newf(KindPreconditionFailed, format, args...)
}

// Database reports storage trouble of kind k (KindDatabaseUnavailable,
// KindDatabaseReadOnly, KindDatabaseBusy or KindDatabaseFull); message
// names the cause for the caller, err is the driver's error, which is
// logged, never sent.
func Database(k Kind, err error, message string) *Error {
	return &Error{Kind: k, Message: message, Err: err}
}

// IsDatabase reports whether err is storage trouble (any of the
// KindDatabase… kinds).
func IsDatabase(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind >= KindDatabaseUnavailable && e.Kind <= KindDatabaseFull
}

// Internal wraps an unexpected failure. The cause is logged; the caller
// only sees a generic message and the error id.
func Internal(err error) *Error {
	return &Error{Kind: KindInternal, Message: "Unexpected error", Err: err}
}

// IsKind reports whether err is a domain error of kind k.
func IsKind(err error, k Kind) bool {
	var e *Error
	return errors.As(err, &e) && e.Kind == k
}

// Body is the Unleash error body.
type Body struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Message string `json:"message"`
}

// From converts any error into a domain error; errors that are not domain
// errors become internal errors.
func From(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return TooLarge("request body is larger than the limit of %d bytes", mbe.Limit)
	}
	return Internal(err)
}

// Write sends err as the Unleash error body with its status. Internal
// errors are logged with the same id that the body carries, so a report
// can be matched to its log line. Storage errors are not: the store logs
// when the database gets into trouble and out of it, once each, where a
// line per refused request would flood the log during an outage.
func Write(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	e := From(err)
	body := Body{ID: uuid.NewString(), Name: e.ErrorName(), Message: e.Message}
	if e.Kind == KindInternal && log != nil {
		log.ErrorContext(r.Context(), "request failed", "errorId", body.ID,
			"method", r.Method, "path", redact.Path(r.URL.Path), "err", err)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	if ra := cmp.Or(e.RetryAfter, kindRetryAfter[e.Kind]); ra > 0 {
		h.Set("Retry-After", strconv.Itoa(ra))
	}
	w.WriteHeader(e.Status())
	_ = json.NewEncoder(w).Encode(body)
}
