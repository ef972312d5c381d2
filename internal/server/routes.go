package server

import (
	"net/http"
	"reflect"

	"github.com/bunting-flags/bunting/internal/httpgzip"
)

// routes builds the whole HTTP surface with its middleware, one file per
// surface: routes_admin.go (the admin API), routes_signals.go (signal
// endpoints and actions, also admin), routes_sdk.go (the client and
// frontend APIs for SDKs) and routes_ops.go (health, metrics, API docs).
// Every route is one registration: pattern, surface (which principals it
// accepts), permission, body rule, handler, and its documentation (api:
// tag, summary, success status, request and response types), from which
// the OpenAPI document is generated (openapi.go). It returns the handler
// and the route table (Routes).
func (s *Server) routes() (http.Handler, []Route) {
	r := &router{s: s, mux: &routeMux{ServeMux: http.NewServeMux()}, frontendCORS: s.front.corsHeaders}
	s.opsRoutes(r)
	s.adminRoutes(r)
	s.signalsRoutes(r)
	s.sdkRoutes(r)
	s.registerOFREPRoutes(r)
	s.webUIRoutes(r)
	r.mux.Handle("/", http.HandlerFunc(s.uiOrNotFound))
	return chain(r.mux.ServeMux, s.observe, s.limitBody), r.mux.table
}

// router registers routes with the middleware their surface needs.
type router struct {
	s   *Server
	mux *routeMux
	// frontendCORS wraps every frontend route outside authentication, so
	// browsers can read its 401 and 403 answers too.
	frontendCORS middleware
}

// routeOption adjusts one route's middleware.
type routeOption func(*routeSpec)

type routeSpec struct {
	json    bool
	gzip    bool
	envFrom func(*http.Request) string
	doc     RouteDoc
}

// api documents a route in the OpenAPI document (openapi.go): its tag and
// summary, its success status, and the Go types of its JSON request and
// response bodies, given as values (nil = no body), e.g.
//
//	r.admin("POST /api/admin/segments", domain.PermCreateSegment, s.createSegment, withJSON,
//		api("Segments", "Create a segment", 201, domain.SegmentInput{}, store.Segment{}))
func api(tag, summary string, status int, body, response any) routeOption {
	d := RouteDoc{Tag: tag, Summary: summary, Status: status}
	if body != nil {
		d.Body = reflect.TypeOf(body)
	}
	if response != nil {
		d.Response = reflect.TypeOf(response)
	}
	return func(rs *routeSpec) { rs.doc = d }
}

// withJSON requires a JSON request body (415 otherwise).
func withJSON(rs *routeSpec) { rs.json = true }

// compressed gzips the route's answers for clients that accept it
// (httpgzip.Handler); every admin route is.
func compressed(rs *routeSpec) { rs.gzip = true }

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
	r.handle(pattern, &sf, perm, h, append(opts, compressed)...)
}

// client registers a client API route (client tokens only).
func (r *router) client(pattern string, h func(http.ResponseWriter, *http.Request) error, opts ...routeOption) {
	sf := surfaceClient
	r.handle(pattern, &sf, "", h, opts...)
}

// frontend registers a frontend API route (frontend tokens only).
func (r *router) frontend(pattern string, h http.Handler) {
	sf := surfaceFrontend
	h = chain(textChecked(pattern, h), r.s.authenticate(sf))
	if r.frontendCORS != nil {
		h = r.frontendCORS(h)
	}
	r.mux.register(Route{Pattern: pattern, Surface: "frontend"}, h, false)
}

// handle applies authentication, then the permission check, then the
// content-type check, then the text check of path and query: 401 beats 403
// beats 415 beats 400.
func (r *router) handle(pattern string, sf *surface, perm string, h func(http.ResponseWriter, *http.Request) error, opts ...routeOption) {
	var spec routeSpec
	for _, o := range opts {
		o(&spec)
	}
	var mw []middleware
	if spec.gzip {
		mw = append(mw, httpgzip.Handler)
	}
	if sf != nil {
		mw = append(mw, r.s.authenticate(*sf))
	}
	if perm != "" {
		mw = append(mw, r.s.requirePermission(perm, spec.envFrom))
	}
	if spec.json {
		mw = append(mw, r.s.jsonBody)
	}
	rt := Route{Pattern: pattern, Surface: "public", Permission: perm, JSON: spec.json, Doc: spec.doc}
	if sf != nil {
		rt.Surface = sf.String()
	}
	r.mux.register(rt, chain(textChecked(pattern, handlerFunc(r.s, h)), mw...), false)
}
