package server

import (
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
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
	// Doc documents the route in the OpenAPI document (zero = undocumented).
	Doc RouteDoc
}

// RouteDoc is what the OpenAPI document says about a route, written at its
// registration line (api in routes.go).
type RouteDoc struct {
	// Tag groups operations; Summary is one line about what it does.
	Tag, Summary string
	// Status is the success status.
	Status int
	// Body and Response are the Go types of the JSON request and response
	// bodies (nil = none).
	Body, Response reflect.Type
}

// Routes lists every registered route, in registration order.
func (s *Server) Routes() []Route { return slices.Clone(s.routeTable) }

// routeMux is the server's ServeMux. It records every route, and every
// handler behind it refuses path values and query parameters that are not
// valid UTF-8 text without NUL characters (400 naming them) before they can
// reach a database, which PostgreSQL would refuse with an error.
type routeMux struct {
	*http.ServeMux
	table []Route
}

// Handle registers a public route without middleware (preflights, the
// catch-all).
func (m *routeMux) Handle(pattern string, h http.Handler) {
	m.register(Route{Pattern: pattern, Surface: "public"}, h, true)
}

// register records rt and serves it with h; outer puts the text check in
// front of h, otherwise h must already contain it (textChecked).
func (m *routeMux) register(rt Route, h http.Handler, outer bool) {
	m.table = append(m.table, rt)
	if outer {
		h = textChecked(rt.Pattern, h)
	}
	m.ServeMux.Handle(rt.Pattern, h)
}

// textChecked refuses a request whose path values (the pattern's
// wildcards) or query parameters are not httpjson.ValidText.
func textChecked(pattern string, next http.Handler) http.Handler {
	var wildcards []string
	for rest := pattern; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 {
			break
		}
		if name := strings.TrimSuffix(rest[i+1:i+j], "..."); name != "$" {
			wildcards = append(wildcards, name)
		}
		rest = rest[i+j:]
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := checkRequestText(r, wildcards); err != nil {
			apierr.Write(w, r, nil, err)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// checkRequestText checks the named path values and every query parameter.
func checkRequestText(r *http.Request, wildcards []string) error {
	for _, name := range wildcards {
		if !httpjson.ValidText(r.PathValue(name)) {
			return httpjson.TextError("The `" + name + "` path parameter")
		}
	}
	raw := r.URL.RawQuery
	if raw == "" || (!strings.Contains(raw, "%") && httpjson.ValidText(raw)) {
		return nil // nothing escaped: the common case, without parsing
	}
	query := r.URL.Query()
	for _, key := range slices.Sorted(maps.Keys(query)) { // the same one named every time
		if !httpjson.ValidText(key) {
			return httpjson.TextError("A query parameter name")
		}
		for _, v := range query[key] {
			if !httpjson.ValidText(v) {
				return httpjson.TextError("The `" + key + "` query parameter")
			}
		}
	}
	return nil
}
