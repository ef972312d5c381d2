package server

import (
	"net/http"

	"github.com/bunting-flags/bunting/internal/httpgzip"
)

// routes lists the whole HTTP surface with its middleware. Every route is
// one line: pattern, surface (which principals it accepts), permission,
// body rule, handler. The other parts add theirs in registerExtrasRoutes
// (routes_extras.go) and registerSignalsRoutes (routes_signals.go).
func (s *Server) routes() http.Handler {
	r := &router{s: s, mux: &routeMux{ServeMux: http.NewServeMux()}}

	// Unauthenticated.
	r.public("GET /health", s.health)
	r.public("GET /ready", s.health)

	// Admin API: admin tokens and users with a root role.
	r.admin("GET /api/admin/feature-types", "", s.listFeatureTypes)
	r.admin("GET /api/admin/events", PermAdmin, s.listEvents)
	r.admin("POST /api/admin/events/search", "", s.searchEvents, withJSON)
	r.admin("GET /api/admin/events/{featureName}", "", s.listFeatureEvents)

	// Projects and their environments.
	r.admin("GET /api/admin/projects", "", s.listProjects)
	r.admin("POST /api/admin/projects", PermCreateProject, s.createProject, withJSON)
	r.admin("GET /api/admin/projects/{projectId}", "", s.getProject)
	r.admin("PUT /api/admin/projects/{projectId}", PermUpdateProject, s.updateProject, withJSON)
	r.admin("DELETE /api/admin/projects/{projectId}", PermDeleteProject, s.deleteProject)
	r.admin("POST /api/admin/projects/{projectId}/environments", PermUpdateProject, s.addProjectEnvironment, withJSON)
	r.admin("DELETE /api/admin/projects/{projectId}/environments/{environment}", PermUpdateProject, s.removeProjectEnvironment)

	// Environments.
	r.admin("GET /api/admin/environments", "", s.listEnvironments)
	r.admin("POST /api/admin/environments", PermAdmin, s.createEnvironment, withJSON)
	r.admin("GET /api/admin/environments/{name}", "", s.getEnvironment)
	r.admin("PUT /api/admin/environments/update/{name}", PermAdmin, s.updateEnvironment, withJSON)
	r.admin("PUT /api/admin/environments/{name}", PermAdmin, s.updateEnvironment, withJSON)
	r.admin("DELETE /api/admin/environments/{name}", PermAdmin, s.deleteEnvironment)
	r.admin("POST /api/admin/environments/{name}/on", PermAdmin, s.environmentOn)
	r.admin("POST /api/admin/environments/{name}/off", PermAdmin, s.environmentOff)

	// Features.
	const F = "/api/admin/projects/{projectId}/features/{featureName}"
	const E = F + "/environments/{environment}"
	r.admin("GET /api/admin/projects/{projectId}/features", "", s.listProjectFeatures)
	r.admin("POST /api/admin/projects/{projectId}/features", PermCreateFeature, s.createFeature, withJSON)
	r.admin("GET /api/admin/projects/{projectId}/archive", "", s.listArchivedFeatures)
	r.admin("GET "+F, "", s.getFeature)
	r.admin("PUT "+F, PermUpdateFeature, s.updateFeature, withJSON)
	r.admin("PATCH "+F, PermUpdateFeature, s.patchFeature, withJSON)
	r.admin("DELETE "+F, PermDeleteFeature, s.archiveFeature)
	r.admin("POST "+F+"/clone", PermCreateFeature, s.cloneFeature, withJSON)
	r.admin("GET /api/admin/archive/features", "", s.listAllArchivedFeatures)
	r.admin("POST /api/admin/archive/revive/{featureName}", PermUpdateFeature, s.reviveFeature)
	r.admin("DELETE /api/admin/archive/{featureName}", PermDeleteFeature, s.deleteFeature)

	// Feature environments, strategies and variants.
	r.admin("GET "+E, "", s.getFeatureEnvironment)
	r.admin("POST "+E+"/on", PermUpdateFeatureEnvironment, s.featureEnvironmentOn, envScoped)
	r.admin("POST "+E+"/off", PermUpdateFeatureEnvironment, s.featureEnvironmentOff, envScoped)
	r.admin("POST /api/admin/projects/{projectId}/bulk_features/environments/{environment}/on", PermUpdateFeatureEnvironment, s.bulkEnvironmentOn, withJSON, envScoped)
	r.admin("POST /api/admin/projects/{projectId}/bulk_features/environments/{environment}/off", PermUpdateFeatureEnvironment, s.bulkEnvironmentOff, withJSON, envScoped)
	r.admin("GET "+E+"/strategies", "", s.listStrategies)
	r.admin("POST "+E+"/strategies", PermCreateFeatureStrategy, s.addStrategy, withJSON, envScoped)
	r.admin("POST "+E+"/strategies/set-sort-order", PermUpdateFeatureStrategy, s.reorderStrategies, withJSON, envScoped)
	r.admin("GET "+E+"/strategies/{strategyId}", "", s.getStrategy)
	r.admin("PUT "+E+"/strategies/{strategyId}", PermUpdateFeatureStrategy, s.updateStrategy, withJSON, envScoped)
	r.admin("PATCH "+E+"/strategies/{strategyId}", PermUpdateFeatureStrategy, s.patchStrategy, withJSON, envScoped)
	r.admin("DELETE "+E+"/strategies/{strategyId}", PermDeleteFeatureStrategy, s.deleteStrategy, envScoped)
	r.admin("GET "+E+"/variants", "", s.getEnvironmentVariants)
	r.admin("PUT "+E+"/variants", PermUpdateEnvVariants, s.putEnvironmentVariants, withJSON, envScoped)

	// Dependencies.
	r.admin("GET "+F+"/parents", "", s.listParents)
	r.admin("POST "+F+"/dependencies", PermUpdateFeatureDependency, s.addDependency, withJSON)
	r.admin("DELETE "+F+"/dependencies/{parent}", PermUpdateFeatureDependency, s.deleteDependency)
	r.admin("DELETE "+F+"/dependencies", PermUpdateFeatureDependency, s.deleteDependencies)

	// Segments.
	r.admin("GET /api/admin/segments", "", s.listSegments)
	r.admin("POST /api/admin/segments", PermCreateSegment, s.createSegment, withJSON)
	r.admin("GET /api/admin/segments/{segmentId}", "", s.getSegment)
	r.admin("PUT /api/admin/segments/{segmentId}", PermUpdateSegment, s.updateSegment, withJSON)
	r.admin("DELETE /api/admin/segments/{segmentId}", PermDeleteSegment, s.deleteSegment)

	// API tokens (the permission depends on the token type; checked inside).
	r.admin("GET /api/admin/api-tokens", "", s.listAPITokens)
	r.admin("POST /api/admin/api-tokens", "", s.createAPIToken, withJSON)
	r.admin("PUT /api/admin/api-tokens/{token}", "", s.updateAPIToken, withJSON)
	r.admin("DELETE /api/admin/api-tokens/{token}", "", s.deleteAPIToken)

	// Usage reported by SDKs, read back.
	r.admin("GET /api/admin/client-metrics/features/{featureName}", "", s.featureUsage)
	r.admin("GET /api/admin/client-metrics/features/{featureName}/raw", "", s.featureUsage)
	r.admin("GET /api/admin/metrics/applications", "", s.listApplications)

	// Client API: client tokens only.
	r.client("GET /api/client/features", s.clientFeatures)
	r.client("GET /api/client/features/{featureName}", s.clientFeature)
	r.client("POST /api/client/register", s.clientRegister, withJSON)
	r.client("POST /api/client/metrics", s.clientMetrics, withJSON)
	r.client("GET /api/client/streaming", s.clientStreaming)
	r.client("GET /api/client/delta", s.clientDelta)

	s.registerExtrasRoutes(r)
	s.registerSignalsRoutes(r)

	r.mux.Handle("/", http.HandlerFunc(s.notFound))
	s.routeTable = r.mux.table
	return chain(r.mux.ServeMux, s.observe, s.limitBody)
}

// router registers routes with the middleware their surface needs.
type router struct {
	s   *Server
	mux *routeMux
	// frontendCORS, when set, wraps every frontend route outside
	// authentication, so browsers can read its 401 and 403 answers too.
	frontendCORS middleware
}

// routeOption adjusts one route's middleware.
type routeOption func(*routeSpec)

type routeSpec struct {
	json    bool
	gzip    bool
	envFrom func(*http.Request) string
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
	rt := Route{Pattern: pattern, Surface: "public", Permission: perm, JSON: spec.json}
	if sf != nil {
		rt.Surface = sf.String()
	}
	r.mux.register(rt, chain(textChecked(pattern, handlerFunc(r.s, h)), mw...), false)
}
