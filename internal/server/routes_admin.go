package server

import "github.com/bunting-flags/bunting/internal/domain"

// adminRoutes registers the admin API: admin tokens and users with a root
// role. The permission argument ("" = any authenticated admin principal) is
// checked before the handler runs.
func (s *Server) adminRoutes(r *router) {
	r.admin("GET /api/admin/feature-types", "", s.listFeatureTypes)
	r.admin("POST /api/admin/playground", "", s.playground, withJSON)
	r.admin("GET /api/admin/events", domain.PermAdmin, s.listEvents)
	r.admin("POST /api/admin/events/search", "", s.searchEvents, withJSON)
	r.admin("GET /api/admin/events/{featureName}", "", s.listFeatureEvents)

	// Projects and their environments.
	r.admin("GET /api/admin/projects", "", s.listProjects)
	r.admin("POST /api/admin/projects", domain.PermCreateProject, s.createProject, withJSON)
	r.admin("GET /api/admin/projects/{projectId}", "", s.getProject)
	r.admin("PUT /api/admin/projects/{projectId}", domain.PermUpdateProject, s.updateProject, withJSON)
	r.admin("DELETE /api/admin/projects/{projectId}", domain.PermDeleteProject, s.deleteProject)
	r.admin("POST /api/admin/projects/{projectId}/environments", domain.PermUpdateProject, s.addProjectEnvironment, withJSON)
	r.admin("DELETE /api/admin/projects/{projectId}/environments/{environment}", domain.PermUpdateProject, s.removeProjectEnvironment)

	// Environments.
	r.admin("GET /api/admin/environments", "", s.listEnvironments)
	r.admin("POST /api/admin/environments", domain.PermAdmin, s.createEnvironment, withJSON)
	r.admin("GET /api/admin/environments/{name}", "", s.getEnvironment)
	r.admin("PUT /api/admin/environments/update/{name}", domain.PermAdmin, s.updateEnvironment, withJSON)
	r.admin("PUT /api/admin/environments/{name}", domain.PermAdmin, s.updateEnvironment, withJSON)
	r.admin("DELETE /api/admin/environments/{name}", domain.PermAdmin, s.deleteEnvironment)
	r.admin("POST /api/admin/environments/{name}/on", domain.PermAdmin, s.environmentOn)
	r.admin("POST /api/admin/environments/{name}/off", domain.PermAdmin, s.environmentOff)

	// Features.
	const F = "/api/admin/projects/{projectId}/features/{featureName}"
	const E = F + "/environments/{environment}"
	r.admin("GET /api/admin/projects/{projectId}/features", "", s.listProjectFeatures)
	r.admin("POST /api/admin/projects/{projectId}/features", domain.PermCreateFeature, s.createFeature, withJSON)
	r.admin("GET /api/admin/projects/{projectId}/archive", "", s.listArchivedFeatures)
	r.admin("GET "+F, "", s.getFeature)
	r.admin("PUT "+F, domain.PermUpdateFeature, s.updateFeature, withJSON)
	r.admin("PATCH "+F, domain.PermUpdateFeature, s.patchFeature, withJSON)
	r.admin("DELETE "+F, domain.PermDeleteFeature, s.archiveFeature)
	r.admin("POST "+F+"/clone", domain.PermCreateFeature, s.cloneFeature, withJSON)
	r.admin("GET /api/admin/archive/features", "", s.listAllArchivedFeatures)
	r.admin("POST /api/admin/archive/revive/{featureName}", domain.PermUpdateFeature, s.reviveFeature)
	r.admin("DELETE /api/admin/archive/{featureName}", domain.PermDeleteFeature, s.deleteFeature)

	// Feature environments, strategies and variants.
	r.admin("GET "+E, "", s.getFeatureEnvironment)
	r.admin("POST "+E+"/on", domain.PermUpdateFeatureEnvironment, s.featureEnvironmentOn, envScoped)
	r.admin("POST "+E+"/off", domain.PermUpdateFeatureEnvironment, s.featureEnvironmentOff, envScoped)
	r.admin("POST /api/admin/projects/{projectId}/bulk_features/environments/{environment}/on", domain.PermUpdateFeatureEnvironment, s.bulkEnvironmentOn, withJSON, envScoped)
	r.admin("POST /api/admin/projects/{projectId}/bulk_features/environments/{environment}/off", domain.PermUpdateFeatureEnvironment, s.bulkEnvironmentOff, withJSON, envScoped)
	r.admin("GET "+E+"/strategies", "", s.listStrategies)
	r.admin("POST "+E+"/strategies", domain.PermCreateFeatureStrategy, s.addStrategy, withJSON, envScoped)
	r.admin("POST "+E+"/strategies/set-sort-order", domain.PermUpdateFeatureStrategy, s.reorderStrategies, withJSON, envScoped)
	r.admin("GET "+E+"/strategies/{strategyId}", "", s.getStrategy)
	r.admin("PUT "+E+"/strategies/{strategyId}", domain.PermUpdateFeatureStrategy, s.updateStrategy, withJSON, envScoped)
	r.admin("PATCH "+E+"/strategies/{strategyId}", domain.PermUpdateFeatureStrategy, s.patchStrategy, withJSON, envScoped)
	r.admin("DELETE "+E+"/strategies/{strategyId}", domain.PermDeleteFeatureStrategy, s.deleteStrategy, envScoped)
	r.admin("GET "+E+"/variants", "", s.getEnvironmentVariants)
	r.admin("PUT "+E+"/variants", domain.PermUpdateEnvVariants, s.putEnvironmentVariants, withJSON, envScoped)

	// Dependencies.
	r.admin("GET "+F+"/parents", "", s.listParents)
	r.admin("POST "+F+"/dependencies", domain.PermUpdateFeatureDependency, s.addDependency, withJSON)
	r.admin("DELETE "+F+"/dependencies/{parent}", domain.PermUpdateFeatureDependency, s.deleteDependency)
	r.admin("DELETE "+F+"/dependencies", domain.PermUpdateFeatureDependency, s.deleteDependencies)

	// Segments.
	r.admin("GET /api/admin/segments", "", s.listSegments)
	r.admin("POST /api/admin/segments", domain.PermCreateSegment, s.createSegment, withJSON)
	r.admin("GET /api/admin/segments/{segmentId}", "", s.getSegment)
	r.admin("PUT /api/admin/segments/{segmentId}", domain.PermUpdateSegment, s.updateSegment, withJSON)
	r.admin("DELETE /api/admin/segments/{segmentId}", domain.PermDeleteSegment, s.deleteSegment)

	// API tokens (the permission depends on the token type; checked inside).
	r.admin("GET /api/admin/api-tokens", "", s.listAPITokens)
	r.admin("POST /api/admin/api-tokens", "", s.createAPIToken, withJSON)
	r.admin("PUT /api/admin/api-tokens/{token}", "", s.updateAPIToken, withJSON)
	r.admin("DELETE /api/admin/api-tokens/{token}", "", s.deleteAPIToken)

	// Usage reported by SDKs, read back.
	r.admin("GET /api/admin/client-metrics/features/{featureName}", "", s.featureUsage)
	r.admin("GET /api/admin/client-metrics/features/{featureName}/raw", "", s.featureUsage)
	r.admin("GET /api/admin/metrics/applications", "", s.listApplications)

	// Strategy types.
	r.admin("GET /api/admin/strategies", "", s.listStrategyTypes)
	r.admin("POST /api/admin/strategies", domain.PermCreateStrategy, s.createStrategyType, withJSON)
	r.admin("GET /api/admin/strategies/{name}", "", s.getStrategyType)
	r.admin("PUT /api/admin/strategies/{name}", domain.PermUpdateStrategy, s.updateStrategyType, withJSON)
	r.admin("DELETE /api/admin/strategies/{name}", domain.PermDeleteStrategy, s.deleteStrategyType)
	r.admin("POST /api/admin/strategies/{name}/deprecate", domain.PermUpdateStrategy, s.deprecateStrategyType)
	r.admin("POST /api/admin/strategies/{name}/reactivate", domain.PermUpdateStrategy, s.reactivateStrategyType)

	// Feature types.
	r.admin("PUT /api/admin/feature-types/{id}/lifetime", domain.PermAdmin, s.updateFeatureTypeLifetime, withJSON)

	// State export and import.
	r.admin("GET /api/admin/state/export", domain.PermAdmin, s.exportState)
	r.admin("POST /api/admin/state/import", domain.PermAdmin, s.importState)

	// User profile, personal access tokens, service accounts.
	r.admin("GET /api/admin/user/profile", "", s.userProfile)
	r.admin("GET /api/admin/user/tokens", "", s.listPersonalTokens)
	r.admin("POST /api/admin/user/tokens", "", s.createPersonalToken, withJSON)
	r.admin("DELETE /api/admin/user/tokens/{tokenId}", "", s.deletePersonalToken)
	r.admin("GET /api/admin/service-account", domain.PermAdmin, s.listServiceAccounts)
	r.admin("POST /api/admin/service-account", domain.PermAdmin, s.createServiceAccount, withJSON)
	r.admin("PUT /api/admin/service-account/{id}", domain.PermAdmin, s.updateServiceAccount, withJSON)
	r.admin("DELETE /api/admin/service-account/{id}", domain.PermAdmin, s.deleteServiceAccount)
	r.admin("GET /api/admin/service-account/{id}/token", domain.PermAdmin, s.listServiceAccountTokens)
	r.admin("POST /api/admin/service-account/{id}/token", domain.PermAdmin, s.createServiceAccountToken, withJSON)
	r.admin("DELETE /api/admin/service-account/{id}/token/{tokenId}", domain.PermAdmin, s.deleteServiceAccountToken)

	// Staleness.
	r.admin("POST /api/admin/projects/{projectId}/stale", domain.PermUpdateFeature, s.markProjectFeaturesStale, withJSON)
	r.admin("POST /api/admin/features/{featureName}/stale/on", domain.PermUpdateFeature, s.staleOn)
	r.admin("POST /api/admin/features/{featureName}/stale/off", domain.PermUpdateFeature, s.staleOff)

	// Tag types, tags and flag tags.
	r.admin("GET /api/admin/tag-types", "", s.listTagTypes)
	r.admin("POST /api/admin/tag-types", domain.PermCreateTagType, s.createTagType, withJSON)
	r.admin("GET /api/admin/tag-types/{name}", "", s.getTagType)
	r.admin("PUT /api/admin/tag-types/{name}", domain.PermUpdateTagType, s.updateTagType, withJSON)
	r.admin("DELETE /api/admin/tag-types/{name}", domain.PermDeleteTagType, s.deleteTagType)
	r.admin("GET /api/admin/tags", "", s.listTags)
	r.admin("GET /api/admin/tags/{type}", "", s.listTags)
	r.admin("POST /api/admin/tags", domain.PermUpdateFeature, s.createTag, withJSON)
	r.admin("DELETE /api/admin/tags/{type}/{value}", domain.PermUpdateFeature, s.deleteTag)
	r.admin("GET /api/admin/features/{featureName}/tags", "", s.listFeatureTags)
	r.admin("POST /api/admin/features/{featureName}/tags", domain.PermUpdateFeature, s.addFeatureTag, withJSON)
	r.admin("PUT /api/admin/features/{featureName}/tags", domain.PermUpdateFeature, s.updateFeatureTags, withJSON)
	r.admin("DELETE /api/admin/features/{featureName}/tags/{type}/{value}", domain.PermUpdateFeature, s.removeFeatureTag)

	// Context fields.
	r.admin("GET /api/admin/context", "", s.listContextFields)
	r.admin("POST /api/admin/context", domain.PermCreateContextField, s.createContextField, withJSON)
	r.admin("POST /api/admin/context/validate", "", s.validateContextFieldName, withJSON)
	r.admin("GET /api/admin/context/{name}", "", s.getContextField)
	r.admin("PUT /api/admin/context/{name}", domain.PermUpdateContextField, s.updateContextField, withJSON)
	r.admin("DELETE /api/admin/context/{name}", domain.PermDeleteContextField, s.deleteContextField)
	r.admin("POST /api/admin/context/{name}/legal-values", domain.PermUpdateContextField, s.addLegalValue, withJSON)
	r.admin("DELETE /api/admin/context/{name}/legal-values/{value}", domain.PermUpdateContextField, s.removeLegalValue)
}
