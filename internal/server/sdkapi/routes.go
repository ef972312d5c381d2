package sdkapi

import (
	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/server/route"
	"github.com/bunting-flags/bunting/internal/usage"
)

// Register registers the APIs that SDKs call: the client API (client
// tokens only) and the frontend API (frontend tokens only, with CORS).
func (s *API) Register(r route.Registrar) {
	// Client API: client tokens only.
	r.Client("GET /api/client/features", s.clientFeatures,
		route.API("Client API", "The flags of the token's project and environment, with their segments (ETag, 304)", 200, nil, engine.ClientFeatures{}))
	r.Client("GET /api/client/features/{featureName}", s.clientFeature,
		route.API("Client API", "One flag of the token's environment", 200, nil, engine.Feature{}))
	r.Client("POST /api/client/register", s.clientRegister, route.JSON,
		route.API("Client API", "Register an SDK instance", 202, usage.RegisterBody{}, nil))
	r.Client("POST /api/client/metrics", s.clientMetrics, route.JSON,
		route.API("Client API", "Report flag usage", 202, usage.MetricsBody{}, nil))
	r.Client("GET /api/client/streaming", s.clientStreaming)
	r.Client("GET /api/client/delta", s.clientDelta)

	front := s.front
	// Frontend API (frontend tokens): the evaluation handler of
	// internal/frontend, which the proxy mounts too.
	r.Frontend("GET /api/frontend", front.evaluate("frontend"))
	r.Frontend("POST /api/frontend", front.evaluate("frontend"))
	r.Frontend("GET /api/frontend/all", front.evaluate("frontend/all"))
	r.Frontend("POST /api/frontend/all", front.evaluate("frontend/all"))
	r.Frontend("POST /api/frontend/client/metrics", route.HTTP(s.log, s.frontendMetrics))
	r.Frontend("POST /api/frontend/client/register", route.HTTP(s.log, s.frontendRegister))
	r.Frontend("GET /api/frontend/client/features", route.HTTP(s.log, s.frontendUnsupported))
	r.Frontend("GET /api/frontend/health", route.HTTP(s.log, s.frontendUnsupported))
	r.Frontend("GET /api/frontend/internal-backstage/prometheus", route.HTTP(s.log, s.frontendUnsupported))
	r.Handle("OPTIONS /api/frontend", front.preflight())
	r.Handle("OPTIONS /api/frontend/", front.preflight())
}
