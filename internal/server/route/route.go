// Package route holds what the HTTP surfaces share with the server that
// assembles them: the route table's types, the options written on each
// registration line (documentation, JSON body, environment scope) and the
// Registrar through which each surface package registers its routes.
// It imports no surface and no server, so every surface can use it.
package route

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// Route describes one registered route, so that tests and tools can walk
// the whole HTTP surface (the HTTP fuzz test covers every route from it).
type Route struct {
	// Pattern is the ServeMux pattern, e.g. "POST /api/admin/projects/{projectId}/features".
	Pattern string
	// Surface says who may call it: "public", "admin", "client" or "frontend".
	Surface string
	// Permission is checked before the handler runs ("" = none, or decided
	// by the handler from the body).
	Permission string
	// JSON marks a route that requires a JSON request body (415 otherwise).
	JSON bool
	// EnvScoped marks a route whose permission is checked in the
	// environment its path names ({environment}).
	EnvScoped bool
	// Doc documents the route in the OpenAPI document (zero = undocumented).
	Doc Doc
}

// Doc is what the OpenAPI document says about a route, written at its
// registration line (API).
type Doc struct {
	// Tag groups operations; Summary is one line about what it does.
	Tag, Summary string
	// Status is the success status.
	Status int
	// Body and Response are the Go types of the JSON request and response
	// bodies (nil = none).
	Body, Response reflect.Type
}

// Handler is an HTTP handler that returns its error; the registrar writes
// a returned error once, through apierr.Write.
type Handler func(http.ResponseWriter, *http.Request) error

// Registrar registers routes with the middleware their surface needs:
// authentication, the permission check, the body rule and the text check
// of path values and query parameters.
type Registrar interface {
	// Public registers a route that needs no credentials.
	Public(pattern string, h Handler, opts ...Option)
	// Admin registers an admin API route; perm "" means any authenticated
	// admin principal (reads).
	Admin(pattern, perm string, h Handler, opts ...Option)
	// Client registers a client API route (client tokens only).
	Client(pattern string, h Handler, opts ...Option)
	// Frontend registers a frontend API route (frontend tokens only, with
	// CORS around authentication).
	Frontend(pattern string, h http.Handler)
	// Handle registers a public route without middleware (preflights).
	Handle(pattern string, h http.Handler)
	// Custom records rt in the route table and serves it with h behind
	// the text check only: h authenticates the caller itself (OFREP).
	Custom(rt Route, h http.Handler)
}

// Spec is a route's options, applied.
type Spec struct {
	// JSON requires a JSON request body; Gzip compresses the answers.
	JSON, Gzip bool
	// Import takes the import body limit instead of the usual one: whole
	// documents of flags are posted there.
	Import bool
	// EnvFrom scopes the permission to an environment taken from the
	// request (nil = not scoped).
	EnvFrom func(*http.Request) string
	// Doc documents the route.
	Doc Doc
}

// Option adjusts one route's middleware or documentation.
type Option func(*Spec)

// Apply returns the Spec that opts describe.
func Apply(opts ...Option) Spec {
	var s Spec
	for _, o := range opts {
		o(&s)
	}
	return s
}

// API documents a route in the OpenAPI document: its tag and summary, its
// success status, and the Go types of its JSON request and response
// bodies, given as values (nil = no body), e.g.
//
//	r.Admin("POST /api/admin/segments", domain.PermCreateSegment, h.createSegment, route.JSON,
//		route.API("Segments", "Create a segment", 201, domain.SegmentInput{}, store.Segment{}))
func API(tag, summary string, status int, body, response any) Option {
	d := Doc{Tag: tag, Summary: summary, Status: status}
	if body != nil {
		d.Body = reflect.TypeOf(body)
	}
	if response != nil {
		d.Response = reflect.TypeOf(response)
	}
	return func(s *Spec) { s.Doc = d }
}

// JSON requires a JSON request body (415 otherwise).
func JSON(s *Spec) { s.JSON = true }

// Import marks a route that takes whole documents (an import or its
// validation): its body may be as large as IMPORT_BODY_LIMIT.
func Import(s *Spec) { s.Import = true }

// Compressed gzips the route's answers for clients that accept it; every
// admin route is.
func Compressed(s *Spec) { s.Gzip = true }

// EnvScoped scopes the route's permission to the {environment} path value.
func EnvScoped(s *Spec) { s.EnvFrom = PathEnv }

// PathEnv is the {environment} path value.
func PathEnv(r *http.Request) string { return r.PathValue("environment") }

// HTTP adapts an error-returning handler: a returned error is written
// once, through apierr.Write (nothing for a cancelled request).
func HTTP(log *slog.Logger, fn Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			WriteError(w, r, log, err)
		}
	})
}

// WriteError writes err as the answer, unless the request was cancelled.
func WriteError(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	apierr.Write(w, r, log, err)
}

// Bearer strips an optional "Bearer " prefix (any case, any spacing).
func Bearer(h string) string {
	h = strings.TrimSpace(h)
	if len(h) > 6 && strings.EqualFold(h[:6], "bearer") && (h[6] == ' ' || h[6] == '\t') {
		h = strings.TrimSpace(h[6:])
	}
	return h
}

// PathID reads the named path value as a positive integer (400 naming
// it otherwise).
func PathID(r *http.Request, name string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id < 1 {
		return 0, apierr.Validation("The `%s` path parameter must be a positive integer. You sent %q.", name, r.PathValue(name))
	}
	return id, nil
}
