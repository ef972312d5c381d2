package server

import (
	"context"
	"net/http"
)

// extras holds the server-extras part's runtime state.
type extras struct {
	metrics *serverMetrics
	openAPI []byte
	docs    http.Handler
	front   *frontendAPI
}

// registerExtrasRoutes is where the server-extras part registers its routes
// (tags, strategy types, context fields, feature-type lifetimes, user
// profile, service accounts, state export/import, frontend API, docs,
// metrics). Keep one line per route, as in routes.go.
func (s *Server) registerExtrasRoutes(r *router) {
	s.extras = &extras{metrics: newServerMetrics(s), openAPI: OpenAPIDocument(), docs: newDocsPage()}
	s.extras.front = newFrontendAPI(s)
	front := s.extras.front
	r.frontendCORS = front.corsHeaders

	// Frontend API (frontend tokens): the proxy package's handler.
	r.frontend("GET /api/frontend", front.evaluate("frontend"))
	r.frontend("POST /api/frontend", front.evaluate("frontend"))
	r.frontend("GET /api/frontend/all", front.evaluate("frontend/all"))
	r.frontend("POST /api/frontend/all", front.evaluate("frontend/all"))
	r.frontend("POST /api/frontend/client/metrics", handlerFunc(s, s.frontendMetrics))
	r.frontend("POST /api/frontend/client/register", handlerFunc(s, s.frontendRegister))
	r.frontend("GET /api/frontend/client/features", handlerFunc(s, s.frontendUnsupported))
	r.frontend("GET /api/frontend/health", handlerFunc(s, s.frontendUnsupported))
	r.frontend("GET /api/frontend/internal-backstage/prometheus", handlerFunc(s, s.frontendUnsupported))
	r.mux.Handle("OPTIONS /api/frontend", front.preflight())
	r.mux.Handle("OPTIONS /api/frontend/", front.preflight())

	// Operations: health, metrics, API documentation.
	r.public("GET /internal-backstage/health", s.health)
	r.public("GET /internal-backstage/prometheus", s.prometheusMetrics)
	r.public("GET /docs/openapi.json", s.openAPIJSON)
	r.public("GET /docs/openapi", s.docsPage)
	r.public("GET /docs/openapi/", s.docsPage)

	// Strategy types.
	r.admin("GET /api/admin/strategies", "", s.listStrategyTypes)
	r.admin("POST /api/admin/strategies", PermCreateStrategy, s.createStrategyType, withJSON)
	r.admin("GET /api/admin/strategies/{name}", "", s.getStrategyType)
	r.admin("PUT /api/admin/strategies/{name}", PermUpdateStrategy, s.updateStrategyType, withJSON)
	r.admin("DELETE /api/admin/strategies/{name}", PermDeleteStrategy, s.deleteStrategyType)
	r.admin("POST /api/admin/strategies/{name}/deprecate", PermUpdateStrategy, s.deprecateStrategyType)
	r.admin("POST /api/admin/strategies/{name}/reactivate", PermUpdateStrategy, s.reactivateStrategyType)

	// Feature types.
	r.admin("PUT /api/admin/feature-types/{id}/lifetime", PermAdmin, s.updateFeatureTypeLifetime, withJSON)

	// State export and import.
	r.admin("GET /api/admin/state/export", PermAdmin, s.exportState)
	r.admin("POST /api/admin/state/import", PermAdmin, s.importState)

	// Sign-in, sessions, people and flag search (routes_webui.go).
	s.registerWebUIRoutes(r)

	// User profile, personal access tokens, service accounts.
	r.admin("GET /api/admin/user/profile", "", s.userProfile)
	r.admin("GET /api/admin/user/tokens", "", s.listPersonalTokens)
	r.admin("POST /api/admin/user/tokens", "", s.createPersonalToken, withJSON)
	r.admin("DELETE /api/admin/user/tokens/{tokenId}", "", s.deletePersonalToken)
	r.admin("GET /api/admin/service-account", PermAdmin, s.listServiceAccounts)
	r.admin("POST /api/admin/service-account", PermAdmin, s.createServiceAccount, withJSON)
	r.admin("PUT /api/admin/service-account/{id}", PermAdmin, s.updateServiceAccount, withJSON)
	r.admin("DELETE /api/admin/service-account/{id}", PermAdmin, s.deleteServiceAccount)
	r.admin("GET /api/admin/service-account/{id}/token", PermAdmin, s.listServiceAccountTokens)
	r.admin("POST /api/admin/service-account/{id}/token", PermAdmin, s.createServiceAccountToken, withJSON)
	r.admin("DELETE /api/admin/service-account/{id}/token/{tokenId}", PermAdmin, s.deleteServiceAccountToken)

	// Staleness.
	r.admin("POST /api/admin/projects/{projectId}/stale", PermUpdateFeature, s.markProjectFeaturesStale, withJSON)
	r.admin("POST /api/admin/features/{featureName}/stale/on", PermUpdateFeature, s.staleOn)
	r.admin("POST /api/admin/features/{featureName}/stale/off", PermUpdateFeature, s.staleOff)

	// Tag types, tags and flag tags.
	r.admin("GET /api/admin/tag-types", "", s.listTagTypes)
	r.admin("POST /api/admin/tag-types", PermCreateTagType, s.createTagType, withJSON)
	r.admin("GET /api/admin/tag-types/{name}", "", s.getTagType)
	r.admin("PUT /api/admin/tag-types/{name}", PermUpdateTagType, s.updateTagType, withJSON)
	r.admin("DELETE /api/admin/tag-types/{name}", PermDeleteTagType, s.deleteTagType)
	r.admin("GET /api/admin/tags", "", s.listTags)
	r.admin("GET /api/admin/tags/{type}", "", s.listTags)
	r.admin("POST /api/admin/tags", PermUpdateFeature, s.createTag, withJSON)
	r.admin("DELETE /api/admin/tags/{type}/{value}", PermUpdateFeature, s.deleteTag)
	r.admin("GET /api/admin/features/{featureName}/tags", "", s.listFeatureTags)
	r.admin("POST /api/admin/features/{featureName}/tags", PermUpdateFeature, s.addFeatureTag, withJSON)
	r.admin("PUT /api/admin/features/{featureName}/tags", PermUpdateFeature, s.updateFeatureTags, withJSON)
	r.admin("DELETE /api/admin/features/{featureName}/tags/{type}/{value}", PermUpdateFeature, s.removeFeatureTag)

	// Context fields.
	r.admin("GET /api/admin/context", "", s.listContextFields)
	r.admin("POST /api/admin/context", PermCreateContextField, s.createContextField, withJSON)
	r.admin("POST /api/admin/context/validate", "", s.validateContextFieldName, withJSON)
	r.admin("GET /api/admin/context/{name}", "", s.getContextField)
	r.admin("PUT /api/admin/context/{name}", PermUpdateContextField, s.updateContextField, withJSON)
	r.admin("DELETE /api/admin/context/{name}", PermDeleteContextField, s.deleteContextField)
	r.admin("POST /api/admin/context/{name}/legal-values", PermUpdateContextField, s.addLegalValue, withJSON)
	r.admin("DELETE /api/admin/context/{name}/legal-values/{value}", PermUpdateContextField, s.removeLegalValue)
}

// runExtras runs the extras part's background jobs until ctx ends.
func (s *Server) runExtras(ctx context.Context) {
	go s.runStaleChecks(ctx)
}
