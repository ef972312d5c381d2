package server

import (
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/server/route"
)

// Route describes one registered route (route.Route).
type Route = route.Route

// RouteDoc is what the OpenAPI document says about a route (route.Doc).
type RouteDoc = route.Doc

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
