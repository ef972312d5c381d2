package server

import "github.com/bunting-flags/bunting/engine"

// sdkRoutes registers the APIs that SDKs call: the client API (client
// tokens only) and the frontend API (frontend tokens only, with CORS).
func (s *Server) sdkRoutes(r *router) {
	// Client API: client tokens only.
	r.Client("GET /api/client/features", s.clientFeatures,
		api("Client API", "The flags of the token's project and environment, with their segments (ETag, 304)", 200, nil, engine.ClientFeatures{}))
	r.Client("GET /api/client/features/{featureName}", s.clientFeature,
		api("Client API", "One flag of the token's environment", 200, nil, engine.Feature{}))
	r.Client("POST /api/client/register", s.clientRegister, withJSON,
		api("Client API", "Register an SDK instance", 202, registerBody{}, nil))
	r.Client("POST /api/client/metrics", s.clientMetrics, withJSON,
		api("Client API", "Report flag usage", 202, metricsBody{}, nil))
	r.Client("GET /api/client/streaming", s.clientStreaming)
	r.Client("GET /api/client/delta", s.clientDelta)

	front := s.front
	// Frontend API (frontend tokens): the proxy package's handler.
	r.Frontend("GET /api/frontend", front.evaluate("frontend"))
	r.Frontend("POST /api/frontend", front.evaluate("frontend"))
	r.Frontend("GET /api/frontend/all", front.evaluate("frontend/all"))
	r.Frontend("POST /api/frontend/all", front.evaluate("frontend/all"))
	r.Frontend("POST /api/frontend/client/metrics", handlerFunc(s, s.frontendMetrics))
	r.Frontend("POST /api/frontend/client/register", handlerFunc(s, s.frontendRegister))
	r.Frontend("GET /api/frontend/client/features", handlerFunc(s, s.frontendUnsupported))
	r.Frontend("GET /api/frontend/health", handlerFunc(s, s.frontendUnsupported))
	r.Frontend("GET /api/frontend/internal-backstage/prometheus", handlerFunc(s, s.frontendUnsupported))
	r.Handle("OPTIONS /api/frontend", front.preflight())
	r.Handle("OPTIONS /api/frontend/", front.preflight())
}
