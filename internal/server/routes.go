package server

import "net/http"

// routes lists the whole HTTP surface with its middleware. Every route is
// one line: pattern, surface (which principals it accepts), permission,
// body rule, handler. The other parts add theirs in registerExtrasRoutes
// (routes_extras.go) and registerSignalsRoutes (routes_signals.go).
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	r := &router{s: s, mux: mux}

	// Unauthenticated.
	r.public("GET /health", s.health)
	r.public("GET /ready", s.health)

	// Admin API: admin tokens and users with a root role.
	r.admin("GET /api/admin/feature-types", "", s.listFeatureTypes)
	r.admin("GET /api/admin/projects", "", s.listProjects)
	r.admin("GET /api/admin/events", PermAdmin, s.listEvents)
	r.admin("POST /api/admin/events/search", "", s.searchEvents, withJSON)

	s.registerExtrasRoutes(r)
	s.registerSignalsRoutes(r)

	mux.HandleFunc("/", s.notFound)
	return chain(mux, s.observe, s.limitBody)
}

// router registers routes with the middleware their surface needs.
type router struct {
	s   *Server
	mux *http.ServeMux
}

// routeOption adjusts one route's middleware.
type routeOption func(*routeSpec)

type routeSpec struct {
	json    bool
	envFrom func(*http.Request) string
}

// withJSON requires a JSON request body (415 otherwise).
func withJSON(rs *routeSpec) { rs.json = true }

// envScoped scopes the route's permission to the {environment} path value.
func envScoped(rs *routeSpec) { rs.envFrom = pathEnv }

// public registers a route that needs no credentials.
func (r *router) public(pattern string, h func(http.ResponseWriter, *http.Request) error, opts ...routeOption) {
	r.handle(pattern, nil, "", h, opts...)
}

// admin registers an admin API route; perm "" means any authenticated
// admin principal (reads).
func (r *router) admin(pattern, perm string, h func(http.ResponseWriter, *http.Request) error, opts ...routeOption) {
	sf := surfaceAdmin
	r.handle(pattern, &sf, perm, h, opts...)
}

// client registers a client API route (client tokens only).
func (r *router) client(pattern string, h func(http.ResponseWriter, *http.Request) error, opts ...routeOption) {
	sf := surfaceClient
	r.handle(pattern, &sf, "", h, opts...)
}

// frontend registers a frontend API route (frontend tokens only).
func (r *router) frontend(pattern string, h http.Handler) {
	sf := surfaceFrontend
	r.mux.Handle(pattern, chain(h, r.s.authenticate(sf)))
}

// handle applies authentication, then the permission check, then the
// content-type check: 401 beats 403 beats 415 beats 400.
func (r *router) handle(pattern string, sf *surface, perm string, h func(http.ResponseWriter, *http.Request) error, opts ...routeOption) {
	var spec routeSpec
	for _, o := range opts {
		o(&spec)
	}
	var mw []middleware
	if sf != nil {
		mw = append(mw, r.s.authenticate(*sf))
	}
	if perm != "" {
		mw = append(mw, r.s.requirePermission(perm, spec.envFrom))
	}
	if spec.json {
		mw = append(mw, r.s.jsonBody)
	}
	r.mux.Handle(pattern, chain(handlerFunc(r.s, h), mw...))
}
