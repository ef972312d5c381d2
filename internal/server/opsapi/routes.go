package opsapi

import "github.com/bunting-flags/bunting/internal/server/route"

// Register registers the unauthenticated operations surface: health,
// readiness, Prometheus metrics and the API documentation.
func (o *Ops) Register(r route.Registrar) {
	r.Public("GET /health", o.health)
	r.Public("GET /ready", o.ready)
	r.Public("GET /internal-backstage/health", o.health)
	r.Public("GET /internal-backstage/prometheus", o.prometheusMetrics)
	r.Public("GET /docs/openapi.json", o.openAPIJSON)
	r.Public("GET /docs/openapi", o.docsPage)
	r.Public("GET /docs/openapi/", o.docsPage)
}
