package server

// opsRoutes registers the unauthenticated operations surface: health,
// readiness, Prometheus metrics and the API documentation.
func (s *Server) opsRoutes(r *router) {
	r.public("GET /health", s.health)
	r.public("GET /ready", s.health)
	r.public("GET /internal-backstage/health", s.health)
	r.public("GET /internal-backstage/prometheus", s.prometheusMetrics)
	r.public("GET /docs/openapi.json", s.openAPIJSON)
	r.public("GET /docs/openapi", s.docsPage)
	r.public("GET /docs/openapi/", s.docsPage)
}
