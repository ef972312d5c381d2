package server

import (
	"net/http"
	"strings"

	"github.com/bunting-flags/bunting/internal/httpgzip"
	"github.com/bunting-flags/bunting/internal/server/route"
)

// routes builds the whole HTTP surface with its middleware, one file per
// surface package: adminapi (the admin API, with signal endpoints and
// actions, and the flag search), integrationsapi (the addon API), sdkapi (the client and
// frontend APIs for SDKs), opsapi (health, metrics, API docs), and
// accounts (sign-in, sessions, people).
// Every route is one registration: pattern, surface (which principals it
// accepts), permission, body rule, handler, and its documentation (api:
// tag, summary, success status, request and response types), from which
// the OpenAPI document is generated (openapi.go). It returns the handler
// and the route table (Routes).
func (s *Server) routes() (http.Handler, []Route) {
	s.importPaths = map[string]bool{}
	r := &router{s: s, mux: &routeMux{ServeMux: http.NewServeMux()}, frontendCORS: s.sdk.FrontendCORS}
	s.ops.Register(r)
	s.admin.Register(r)
	s.admin.RegisterSignals(r)
	s.addons.Register(r)
	s.admin.RegisterAccess(r)
	s.crAPI.Register(r)
	s.sdk.Register(r)
	s.sdk.RegisterOFREP(r)
	s.accounts.Register(r)
	s.ssoAPI.Register(r)
	s.admin.RegisterSearch(r)
	r.Handle("/", http.HandlerFunc(s.uiOrNotFound))
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

// Public registers a route that needs no credentials.
func (r *router) Public(pattern string, h route.Handler, opts ...route.Option) {
	r.handle(pattern, nil, "", h, opts...)
}

// Admin registers an admin API route; perm "" means any authenticated
// admin principal (reads).
func (r *router) Admin(pattern, perm string, h route.Handler, opts ...route.Option) {
	sf := surfaceAdmin
	r.handle(pattern, &sf, perm, h, append(opts, route.Compressed)...)
}

// Client registers a client API route (client tokens only).
func (r *router) Client(pattern string, h route.Handler, opts ...route.Option) {
	sf := surfaceClient
	r.handle(pattern, &sf, "", h, opts...)
}

// Frontend registers a frontend API route (frontend tokens only).
func (r *router) Frontend(pattern string, h http.Handler) {
	sf := surfaceFrontend
	h = chain(textChecked(pattern, h), r.s.authenticate(sf))
	if r.frontendCORS != nil {
		h = r.frontendCORS(h)
	}
	r.mux.register(Route{Pattern: pattern, Surface: "frontend"}, h, false)
}

// Handle registers a public route without middleware (preflights, the
// catch-all).
func (r *router) Handle(pattern string, h http.Handler) { r.mux.Handle(pattern, h) }

// Custom records rt and serves it with h behind the text check.
func (r *router) Custom(rt Route, h http.Handler) { r.mux.register(rt, h, true) }

// handle applies authentication, then the private-project check (404 for
// a project or flag the caller may not see), then the permission check,
// then the content-type check, then the text check of path and query: 401
// beats 404 beats 403 beats 415 beats 400.
func (r *router) handle(pattern string, sf *surface, perm string, h route.Handler, opts ...route.Option) {
	spec := route.Apply(opts...)
	var mw []middleware
	if spec.Gzip {
		mw = append(mw, httpgzip.Handler)
	}
	if sf != nil {
		mw = append(mw, r.s.authenticate(*sf))
		if *sf == surfaceAdmin && (strings.Contains(pattern, "{projectId}") || strings.Contains(pattern, "{featureName}")) {
			mw = append(mw, r.s.requireVisible)
		}
	}
	if perm != "" {
		mw = append(mw, r.s.requirePermission(perm, spec.EnvFrom))
	}
	if spec.JSON {
		mw = append(mw, r.s.jsonBody)
	}
	if spec.Import {
		_, path, _ := strings.Cut(pattern, " ")
		r.s.importPaths[path] = true
	}
	rt := Route{Pattern: pattern, Surface: "public", Permission: perm, JSON: spec.JSON, EnvScoped: spec.EnvFrom != nil, Doc: spec.Doc}
	if sf != nil {
		rt.Surface = sf.String()
	}
	r.mux.register(rt, chain(textChecked(pattern, handlerFunc(r.s, h)), mw...), false)
}
