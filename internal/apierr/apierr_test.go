package apierr_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// Every constructor gives its kind, its status and its Unleash error name,
// and formats its message.
func TestConstructorsStatusAndName(t *testing.T) {
	cases := []struct {
		err    *apierr.Error
		kind   apierr.Kind
		status int
		name   string
	}{
		{apierr.Validation("bad %s", "x"), apierr.KindValidation, 400, "ValidationError"},
		{apierr.Unauthenticated("bad %s", "x"), apierr.KindUnauthenticated, 401, "AuthenticationRequired"},
		{apierr.Forbidden("bad %s", "x"), apierr.KindForbidden, 403, "NoAccessError"},
		{apierr.NotFound("bad %s", "x"), apierr.KindNotFound, 404, "NotFoundError"},
		{apierr.Conflict("bad %s", "x"), apierr.KindConflict, 409, "NameExistsError"},
		{apierr.TooLarge("bad %s", "x"), apierr.KindTooLarge, 413, "ContentTooLargeError"},
		{apierr.UnsupportedMediaType("bad %s", "x"), apierr.KindUnsupportedMediaType, 415, "ContentTypeError"},
		{apierr.RateLimited(7, "bad %s", "x"), apierr.KindRateLimited, 429, "RateLimitError"},
		{apierr.Unavailable("bad %s", "x"), apierr.KindUnavailable, 503, "ServiceUnavailableError"},
		{apierr.PreconditionFailed("bad %s", "x"), apierr.KindPreconditionFailed, 412, "PreconditionFailedError"},
		{apierr.NotImplemented("bad %s", "x"), apierr.KindNotImplemented, 501, "NotImplementedError"},
		{&apierr.Error{Kind: apierr.KindMethodNotAllowed, Message: "bad x"}, apierr.KindMethodNotAllowed, 405, "MethodNotAllowedError"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.err.Kind != c.kind || c.err.Status() != c.status || c.err.ErrorName() != c.name {
				t.Fatalf("got kind %d status %d name %q; want %d %d %q", c.err.Kind, c.err.Status(), c.err.ErrorName(), c.kind, c.status, c.name)
			}
			if c.err.Message != "bad x" || c.err.Error() != "bad x" {
				t.Fatalf("message %q, Error() %q", c.err.Message, c.err.Error())
			}
			if !apierr.IsKind(c.err, c.kind) || apierr.IsKind(c.err, apierr.KindInternal) {
				t.Fatal("IsKind disagrees with Kind")
			}
		})
	}
	if e := apierr.RateLimited(7, "slow down"); e.RetryAfter != 7 {
		t.Fatalf("RetryAfter = %d", e.RetryAfter)
	}
	if e := (&apierr.Error{Kind: apierr.KindConflict, Name: "ConflictError"}); e.ErrorName() != "ConflictError" || e.Status() != 409 {
		t.Fatalf("a Name overrides the kind's name only: %q %d", e.ErrorName(), e.Status())
	}
}

// Internal hides its cause from the message but keeps it for errors.Is and
// the log; IsKind and From see through wrapping.
func TestInternalWrappingAndFrom(t *testing.T) {
	cause := errors.New("disk on fire")
	e := apierr.Internal(cause)
	if e.Kind != apierr.KindInternal || e.Status() != 500 || e.ErrorName() != "InternalError" || e.Message != "Unexpected error" {
		t.Fatalf("Internal: %+v", e)
	}
	if e.Error() != "Unexpected error: disk on fire" || !errors.Is(e, cause) || errors.Unwrap(e) != cause {
		t.Fatalf("cause lost: %q", e.Error())
	}

	nf := apierr.NotFound("no flag %s", "f1")
	wrapped := fmt.Errorf("load: %w", nf)
	if !apierr.IsKind(wrapped, apierr.KindNotFound) || apierr.IsKind(errors.New("plain"), apierr.KindNotFound) {
		t.Fatal("IsKind must see through %w and reject other errors")
	}
	if got := apierr.From(wrapped); got != nf {
		t.Fatalf("From(wrapped domain error) = %+v, want the same error", got)
	}

	plain := errors.New("boom")
	if got := apierr.From(plain); got.Kind != apierr.KindInternal || !errors.Is(got, plain) {
		t.Fatalf("From(plain) = %+v", got)
	}

	// A body over http.MaxBytesReader's limit becomes 413 with the limit.
	_, err := io.ReadAll(http.MaxBytesReader(httptest.NewRecorder(), io.NopCloser(strings.NewReader("0123456789")), 4))
	got := apierr.From(fmt.Errorf("decode: %w", err))
	if got.Kind != apierr.KindTooLarge || got.Status() != 413 || !strings.Contains(got.Message, "4 bytes") {
		t.Fatalf("From(MaxBytesError) = %+v", got)
	}
}

func write(t *testing.T, err error, path string) (*httptest.ResponseRecorder, apierr.Body, string) {
	t.Helper()
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	rec := httptest.NewRecorder()
	apierr.Write(rec, httptest.NewRequest(http.MethodPost, path, nil), log, err)
	var body apierr.Body
	if jerr := json.Unmarshal(rec.Body.Bytes(), &body); jerr != nil {
		t.Fatalf("body %q: %v", rec.Body.String(), jerr)
	}
	if _, perr := uuid.Parse(body.ID); perr != nil {
		t.Fatalf("error id %q is not a UUID", body.ID)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Fatalf("Content-Type %q", ct)
	}
	return rec, body, logs.String()
}

// Write answers with the status and the Unleash body {id, name, message};
// domain errors are not logged, internal ones are, with the body's id, the
// cause and a redacted path, while the body shows no cause.
func TestWrite(t *testing.T) {
	rec, body, logs := write(t, fmt.Errorf("ctx: %w", apierr.Forbidden("You need permission=%s", "UPDATE_FEATURE")), "/api/admin/x")
	if rec.Code != 403 || body.Name != "NoAccessError" || body.Message != "You need permission=UPDATE_FEATURE" {
		t.Fatalf("403: %d %+v", rec.Code, body)
	}
	if logs != "" || rec.Header().Get("Retry-After") != "" {
		t.Fatalf("a domain error is not logged and has no Retry-After: %q", logs)
	}

	rec, body, _ = write(t, apierr.RateLimited(30, "too many"), "/x")
	if rec.Code != 429 || body.Name != "RateLimitError" || rec.Header().Get("Retry-After") != "30" {
		t.Fatalf("429: %d %+v %v", rec.Code, body, rec.Header())
	}

	secret := "default:development.0123456789abcdef0123456789abcdef"
	rec, body, logs = write(t, errors.New("database is locked"), "/api/client/"+secret)
	if rec.Code != 500 || body.Name != "InternalError" || body.Message != "Unexpected error" {
		t.Fatalf("500: %d %+v", rec.Code, body)
	}
	if strings.Contains(rec.Body.String(), "locked") {
		t.Fatalf("the cause leaked into the body: %s", rec.Body.String())
	}
	for _, want := range []string{"errorId=" + body.ID, "database is locked", "method=POST"} {
		if !strings.Contains(logs, want) {
			t.Fatalf("log %q lacks %q", logs, want)
		}
	}
	if strings.Contains(logs, secret) {
		t.Fatalf("the log holds the secret from the path: %q", logs)
	}

	// Without a logger an internal error is still answered.
	rec = httptest.NewRecorder()
	apierr.Write(rec, httptest.NewRequest(http.MethodGet, "/", nil), nil, errors.New("x"))
	if rec.Code != 500 {
		t.Fatalf("nil logger: %d", rec.Code)
	}
}

// The storage kinds have their own statuses and names, a Retry-After each,
// a message for the caller that holds no cause, and IsDatabase tells them
// from every other kind.
func TestDatabaseKinds(t *testing.T) {
	cause := errors.New(`FATAL: database "secret_db" is not currently accepting connections`)
	cases := []struct {
		kind        apierr.Kind
		status      int
		name, retry string
	}{
		{apierr.KindDatabaseUnavailable, 503, "DatabaseUnavailable", "2"},
		{apierr.KindDatabaseReadOnly, 503, "DatabaseReadOnly", "10"},
		{apierr.KindDatabaseBusy, 503, "DatabaseBusy", "1"},
		{apierr.KindDatabaseFull, 507, "DatabaseFull", "30"},
	}
	for _, c := range cases {
		e := apierr.Database(c.kind, cause, "the database is in trouble")
		rec, body, logs := write(t, fmt.Errorf("wrapped: %w", e), "/api/admin/x")
		if rec.Code != c.status || body.Name != c.name || body.Message != "the database is in trouble" || rec.Header().Get("Retry-After") != c.retry {
			t.Fatalf("%s: %d %+v Retry-After %q", c.name, rec.Code, body, rec.Header().Get("Retry-After"))
		}
		if strings.Contains(rec.Body.String(), "secret_db") || logs != "" {
			t.Fatalf("%s: the cause reached the body or a log line per request: %s %q", c.name, rec.Body.String(), logs)
		}
		if !apierr.IsDatabase(e) || !errors.Is(e, cause) {
			t.Fatalf("%s: IsDatabase or the cause lost", c.name)
		}
	}
	for _, e := range []error{apierr.Unavailable("proxy not ready"), apierr.Internal(cause), apierr.RateLimited(1, "x"), cause} {
		if apierr.IsDatabase(e) {
			t.Fatalf("IsDatabase(%v)", e)
		}
	}
}
