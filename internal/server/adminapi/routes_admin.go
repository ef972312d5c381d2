package adminapi

import (
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/flagsio"
	"github.com/bunting-flags/bunting/internal/server/route"
	"github.com/bunting-flags/bunting/internal/store"
	"github.com/bunting-flags/bunting/internal/usage"
)

// Register registers the admin API: admin tokens and users with a root
// role. The permission argument ("" = any authenticated admin principal) is
// checked before the handler runs.
func (s *API) Register(r route.Registrar) {
	r.Admin("GET /api/admin/ui-config", "", s.uiConfig,
		api("Instance", "This server's version, build and address, as Unleash's ui-config answers them", 200, nil, UIConfig{}))
	r.Admin("GET /api/admin/feature-types", "", s.listFeatureTypes,
		api("Feature types", "List feature types", 200, nil, featureTypeList{}))
	r.Admin("POST /api/admin/playground", "", s.playground, withJSON,
		api("Playground", "Evaluate every flag of an environment for a context and say why: each strategy's, constraint's and segment's result, dependencies, the variant; with changeRequest (body or ?changeRequest={id}), as if that open change request were applied", 200, PlaygroundInput{}, PlaygroundResponse{}))
	r.Admin("GET /api/admin/events", domain.PermAdmin, s.listEvents,
		api("Events", "Last 100 events, or all of one project", 200, nil, eventList{}))
	r.Admin("POST /api/admin/events/search", "", s.searchEvents, withJSON,
		api("Events", "Search events", 200, eventSearch{}, eventList{}))
	r.Admin("GET /api/admin/events/{featureName}", "", s.listFeatureEvents,
		api("Events", "A flag's last 100 events", 200, nil, featureEventList{}))

	// Projects and their environments.
	r.Admin("GET /api/admin/projects", "", s.listProjects,
		api("Projects", "List projects", 200, nil, projectList{}))
	r.Admin("POST /api/admin/projects", domain.PermCreateProject, s.createProject, withJSON,
		api("Projects", "Create a project", 201, domain.ProjectInput{}, store.Project{}))
	r.Admin("GET /api/admin/projects/{projectId}", "", s.getProject,
		api("Projects", "Get a project with its environments", 200, nil, projectDetails{}))
	r.Admin("PUT /api/admin/projects/{projectId}", domain.PermUpdateProject, s.updateProject, withJSON,
		api("Projects", "Update a project", 200, domain.ProjectInput{}, store.Project{}))
	r.Admin("PUT /api/admin/projects/{projectId}/settings", domain.PermUpdateProject, s.updateProjectSettings, withJSON,
		api("Projects", "Change a project's mode (Unleash Enterprise's project settings)", 200, domain.ProjectSettingsInput{}, nil))
	r.Admin("DELETE /api/admin/projects/{projectId}", domain.PermDeleteProject, s.deleteProject,
		api("Projects", "Delete an empty project", 200, nil, nil))
	r.Admin("POST /api/admin/projects/{projectId}/environments", domain.PermUpdateProject, s.addProjectEnvironment, withJSON,
		api("Projects", "Enable an environment in a project", 200, projectEnvironmentBody{}, nil))
	r.Admin("DELETE /api/admin/projects/{projectId}/environments/{environment}", domain.PermUpdateProject, s.removeProjectEnvironment,
		api("Projects", "Remove an environment from a project", 200, nil, nil))

	// Environments.
	r.Admin("GET /api/admin/environments", "", s.listEnvironments,
		api("Environments", "List environments", 200, nil, environmentList{}))
	r.Admin("POST /api/admin/environments", domain.PermAdmin, s.createEnvironment, withJSON,
		api("Environments", "Create an environment", 201, domain.EnvironmentInput{}, store.Environment{}))
	r.Admin("GET /api/admin/environments/project/{projectId}", "", s.listProjectEnvironments,
		api("Environments", "List the environments enabled in a project", 200, nil, projectEnvironmentList{}))
	r.Admin("GET /api/admin/environments/{name}", "", s.getEnvironment,
		api("Environments", "Get an environment", 200, nil, store.Environment{}))
	r.Admin("PUT /api/admin/environments/update/{name}", domain.PermAdmin, s.updateEnvironment, withJSON,
		api("Environments", "Update an environment (Unleash's path)", 200, domain.EnvironmentInput{}, store.Environment{}))
	r.Admin("PUT /api/admin/environments/{name}", domain.PermAdmin, s.updateEnvironment, withJSON,
		api("Environments", "Update an environment", 200, domain.EnvironmentInput{}, store.Environment{}))
	r.Admin("DELETE /api/admin/environments/{name}", domain.PermAdmin, s.deleteEnvironment,
		api("Environments", "Delete an environment", 200, nil, nil))
	r.Admin("POST /api/admin/environments/{name}/on", domain.PermAdmin, s.environmentOn,
		api("Environments", "Enable an environment", 204, nil, nil))
	r.Admin("POST /api/admin/environments/{name}/off", domain.PermAdmin, s.environmentOff,
		api("Environments", "Disable an environment", 204, nil, nil))

	// Features.
	const F = "/api/admin/projects/{projectId}/features/{featureName}"
	const E = F + "/environments/{environment}"
	r.Admin("GET /api/admin/projects/{projectId}/features", "", s.listProjectFeatures,
		api("Features", "List a project's flags", 200, nil, featureList{}))
	r.Admin("POST /api/admin/projects/{projectId}/features", domain.PermCreateFeature, s.createFeature, withJSON,
		api("Features", "Create a flag", 201, domain.CreateFeatureInput{}, domain.FeatureView{}))
	r.Admin("GET /api/admin/projects/{projectId}/archive", "", s.listArchivedFeatures,
		api("Features", "List a project's archived flags", 200, nil, archivedFeatureList{}))
	r.Admin("GET "+F, "", s.getFeature,
		api("Features", "Get a flag", 200, nil, domain.FeatureView{}))
	r.Admin("PUT "+F, domain.PermUpdateFeature, s.updateFeature, withJSON,
		api("Features", "Update a flag", 200, domain.UpdateFeatureInput{}, domain.FeatureView{}))
	r.Admin("PATCH "+F, domain.PermUpdateFeature, s.patchFeature, withJSON,
		api("Features", "Patch a flag (JSON Patch)", 200, []domain.PatchOp{}, domain.FeatureView{}))
	r.Admin("DELETE "+F, domain.PermDeleteFeature, s.archiveFeature,
		api("Features", "Archive a flag", 202, nil, nil))
	r.Admin("POST "+F+"/clone", domain.PermCreateFeature, s.cloneFeature, withJSON,
		api("Features", "Clone a flag", 201, domain.CloneFeatureInput{}, domain.FeatureView{}))
	r.Admin("GET /api/admin/archive/features", "", s.listAllArchivedFeatures,
		api("Features", "List archived flags", 200, nil, archivedFeatureList{}))
	r.Admin("POST /api/admin/archive/revive/{featureName}", domain.PermUpdateFeature, s.reviveFeature,
		api("Features", "Revive an archived flag", 200, nil, nil))
	r.Admin("DELETE /api/admin/archive/{featureName}", domain.PermDeleteFeature, s.deleteFeature,
		api("Features", "Delete an archived flag for good", 200, nil, nil))

	// Feature environments, strategies and variants.
	r.Admin("GET "+E, "", s.getFeatureEnvironment,
		api("Features", "A flag in one environment, with its strategies", 200, nil, featureEnvironmentDetails{}))
	r.Admin("POST "+E+"/on", domain.PermUpdateFeatureEnvironment, s.featureEnvironmentOn, envScoped,
		api("Features", "Turn a flag on in an environment", 200, nil, domain.FeatureView{}))
	r.Admin("POST "+E+"/off", domain.PermUpdateFeatureEnvironment, s.featureEnvironmentOff, envScoped,
		api("Features", "Turn a flag off in an environment", 200, nil, domain.FeatureView{}))
	r.Admin("POST /api/admin/projects/{projectId}/bulk_features/environments/{environment}/on", domain.PermUpdateFeatureEnvironment, s.bulkEnvironmentOn, withJSON, envScoped,
		api("Features", "Turn flags on in an environment", 200, bulkToggleBody{}, nil))
	r.Admin("POST /api/admin/projects/{projectId}/bulk_features/environments/{environment}/off", domain.PermUpdateFeatureEnvironment, s.bulkEnvironmentOff, withJSON, envScoped,
		api("Features", "Turn flags off in an environment", 200, bulkToggleBody{}, nil))
	r.Admin("GET "+E+"/strategies", "", s.listStrategies,
		api("Strategies", "List a flag's strategies in an environment", 200, nil, []store.Strategy{}))
	r.Admin("POST "+E+"/strategies", domain.PermCreateFeatureStrategy, s.addStrategy, withJSON, envScoped,
		api("Strategies", "Add a strategy", 200, domain.StrategyInput{}, store.Strategy{}))
	r.Admin("POST "+E+"/strategies/set-sort-order", domain.PermUpdateFeatureStrategy, s.reorderStrategies, withJSON, envScoped,
		api("Strategies", "Set the strategies' order", 200, []domain.StrategyOrder{}, nil))
	r.Admin("GET "+E+"/strategies/{strategyId}", "", s.getStrategy,
		api("Strategies", "Get a strategy", 200, nil, store.Strategy{}))
	r.Admin("PUT "+E+"/strategies/{strategyId}", domain.PermUpdateFeatureStrategy, s.updateStrategy, withJSON, envScoped,
		api("Strategies", "Replace a strategy", 200, domain.StrategyInput{}, store.Strategy{}))
	r.Admin("PATCH "+E+"/strategies/{strategyId}", domain.PermUpdateFeatureStrategy, s.patchStrategy, withJSON, envScoped,
		api("Strategies", "Patch a strategy (JSON Patch)", 200, []domain.PatchOp{}, store.Strategy{}))
	r.Admin("DELETE "+E+"/strategies/{strategyId}", domain.PermDeleteFeatureStrategy, s.deleteStrategy, envScoped,
		api("Strategies", "Delete a strategy", 200, nil, nil))
	r.Admin("GET "+E+"/variants", "", s.getEnvironmentVariants,
		api("Variants", "A flag's variants in an environment", 200, nil, variantList{}))
	r.Admin("PUT "+E+"/variants", domain.PermUpdateEnvVariants, s.putEnvironmentVariants, withJSON, envScoped,
		api("Variants", "Replace a flag's variants in an environment", 200, []domain.VariantInput{}, variantList{}))

	// Dependencies.
	r.Admin("GET "+F+"/parents", "", s.listParents,
		api("Dependencies", "Flags that may become the flag's parent", 200, nil, []string{}))
	r.Admin("POST "+F+"/dependencies", domain.PermUpdateFeatureDependency, s.addDependency, withJSON,
		api("Dependencies", "Add a parent dependency", 200, domain.DependencyInput{}, nil))
	r.Admin("DELETE "+F+"/dependencies/{parent}", domain.PermUpdateFeatureDependency, s.deleteDependency,
		api("Dependencies", "Remove one parent dependency", 200, nil, nil))
	r.Admin("DELETE "+F+"/dependencies", domain.PermUpdateFeatureDependency, s.deleteDependencies,
		api("Dependencies", "Remove every parent dependency", 200, nil, nil))

	// Segments.
	r.Admin("GET /api/admin/segments", "", s.listSegments,
		api("Segments", "List segments", 200, nil, segmentList{}))
	r.Admin("POST /api/admin/segments", domain.PermCreateSegment, s.createSegment, withJSON,
		api("Segments", "Create a segment", 201, domain.SegmentInput{}, store.Segment{}))
	r.Admin("GET /api/admin/segments/{segmentId}", "", s.getSegment,
		api("Segments", "Get a segment", 200, nil, store.Segment{}))
	r.Admin("PUT /api/admin/segments/{segmentId}", domain.PermUpdateSegment, s.updateSegment, withJSON,
		api("Segments", "Update a segment", 204, domain.SegmentInput{}, nil))
	r.Admin("DELETE /api/admin/segments/{segmentId}", domain.PermDeleteSegment, s.deleteSegment,
		api("Segments", "Delete a segment", 204, nil, nil))

	// API tokens (the permission depends on the token type; checked inside).
	r.Admin("GET /api/admin/api-tokens", "", s.listAPITokens,
		api("API tokens", "List the API tokens the caller may see", 200, nil, apiTokenList{}))
	r.Admin("POST /api/admin/api-tokens", "", s.createAPIToken, withJSON,
		api("API tokens", "Create an API token (permission by token type)", 201, domain.APITokenInput{}, domain.TokenView{}))
	r.Admin("PUT /api/admin/api-tokens/{token}", "", s.updateAPIToken, withJSON,
		api("API tokens", "Change an API token's expiry", 200, updateTokenBody{}, nil))
	r.Admin("DELETE /api/admin/api-tokens/{token}", "", s.deleteAPIToken,
		api("API tokens", "Delete an API token (permission by token type)", 200, nil, nil))

	// Usage reported by SDKs, read back.
	r.Admin("GET /api/admin/client-metrics/features/{featureName}", "", s.featureUsage,
		api("Metrics", "A flag's hourly usage reported by SDKs", 200, nil, featureUsageReport{}))
	r.Admin("GET /api/admin/client-metrics/features/{featureName}/raw", "", s.featureUsage,
		api("Metrics", "A flag's hourly usage (raw rows)", 200, nil, featureUsageReport{}))
	r.Admin("GET /api/admin/client-metrics/features/{featureName}/applications", "", s.flagApplications,
		api("Metrics", "The applications, and their SDK versions, that asked for a flag in the last hour and day", 200, nil, usage.FlagApplications{}))
	r.Admin("GET /api/admin/metrics/applications", "", s.listApplications,
		api("Metrics", "Applications seen by the server (query, offset, limit, sortOrder)", 200, nil, usage.ApplicationList{}))
	r.Admin("GET /api/admin/metrics/applications/{appName}", "", s.getApplication,
		api("Metrics", "An application: its instances not yet stale and the flags it reported in the last day", 200, nil, usage.ApplicationDetails{}))

	// Strategy types.
	r.Admin("GET /api/admin/strategies", "", s.listStrategyTypes,
		api("Strategy types", "List strategy types", 200, nil, strategyTypeList{}))
	r.Admin("POST /api/admin/strategies", domain.PermCreateStrategy, s.createStrategyType, withJSON,
		api("Strategy types", "Create a custom strategy type", 201, domain.StrategyTypeInput{}, store.StrategyType{}))
	r.Admin("GET /api/admin/strategies/{name}", "", s.getStrategyType,
		api("Strategy types", "Get a strategy type", 200, nil, store.StrategyType{}))
	r.Admin("PUT /api/admin/strategies/{name}", domain.PermUpdateStrategy, s.updateStrategyType, withJSON,
		api("Strategy types", "Update a custom strategy type (absent properties untouched)", 200, domain.StrategyTypeInput{}, nil))
	r.Admin("DELETE /api/admin/strategies/{name}", domain.PermDeleteStrategy, s.deleteStrategyType,
		api("Strategy types", "Delete a custom strategy type", 200, nil, nil))
	r.Admin("POST /api/admin/strategies/{name}/deprecate", domain.PermUpdateStrategy, s.deprecateStrategyType,
		api("Strategy types", "Deprecate a strategy type", 200, nil, nil))
	r.Admin("POST /api/admin/strategies/{name}/reactivate", domain.PermUpdateStrategy, s.reactivateStrategyType,
		api("Strategy types", "Reactivate a strategy type", 200, nil, nil))

	// Feature types.
	r.Admin("PUT /api/admin/feature-types/{id}/lifetime", domain.PermAdmin, s.updateFeatureTypeLifetime, withJSON,
		api("Feature types", "Set a feature type's lifetime in days (0 or null: never stale)", 200, featureTypeLifetimeBody{}, store.FeatureType{}))

	// State export and import.
	r.Admin("POST /api/admin/features-batch/export", "", s.exportBatch, withJSON,
		api("Import/Export", "Export flags (by tag, names or project; all when none) with their configuration in one environment, in Unleash's export document", 200, flagsio.ExportQuery{}, flagsio.Document{}))
	r.Admin("POST /api/admin/features-batch/validate", "", s.validateBatch, withJSON, route.Import,
		api("Import/Export", "Say whether an export document can be imported into a project and environment: errors, warnings, missing permissions (the import rehearsed and rolled back)", 200, flagsio.ImportRequest{}, flagsio.Validation{}))
	r.Admin("POST /api/admin/features-batch/import", "", s.importBatch, withJSON, route.Import,
		api("Import/Export", "Import an export document into a project and environment in one transaction (each item needs its permission, as on its own route); prune=true archives the project's flags the document does not list", 200, flagsio.ImportRequest{}, nil))
	r.Admin("GET /api/admin/state/export", domain.PermAdmin, s.exportState,
		api("State", "Export the state (format=json|yaml, download, strategies, featureToggles, projects, tags, environments)", 200, nil, domain.StateDocument{}))
	r.Admin("POST /api/admin/state/import", domain.PermAdmin, s.importState, route.Import,
		api("State", "Import a state document (JSON or YAML; drop, keep)", 202, domain.StateDocument{}, nil))

	// User profile, personal access tokens, service accounts.
	r.Admin("GET /api/admin/user/profile", "", s.userProfile,
		api("Users", "The calling principal's profile", 200, nil, userProfile{}))
	r.Admin("GET /api/admin/user/tokens", "", s.listPersonalTokens,
		api("Users", "The caller's personal access tokens", 200, nil, personalTokenList{}))
	r.Admin("POST /api/admin/user/tokens", "", s.createPersonalToken, withJSON,
		api("Users", "Create a personal access token", 201, domain.UserTokenInput{}, domain.CreatedUserToken{}))
	r.Admin("DELETE /api/admin/user/tokens/{tokenId}", "", s.deletePersonalToken,
		api("Users", "Delete a personal access token", 200, nil, nil))
	r.Admin("GET /api/admin/service-account", domain.PermAdmin, s.listServiceAccounts,
		api("Service accounts", "List service accounts", 200, nil, serviceAccountList{}))
	r.Admin("POST /api/admin/service-account", domain.PermAdmin, s.createServiceAccount, withJSON,
		api("Service accounts", "Create a service account", 201, domain.ServiceAccountInput{}, domain.ServiceAccountView{}))
	r.Admin("PUT /api/admin/service-account/{id}", domain.PermAdmin, s.updateServiceAccount, withJSON,
		api("Service accounts", "Update a service account", 200, domain.ServiceAccountInput{}, domain.ServiceAccountView{}))
	r.Admin("DELETE /api/admin/service-account/{id}", domain.PermAdmin, s.deleteServiceAccount,
		api("Service accounts", "Delete a service account", 200, nil, nil))
	r.Admin("GET /api/admin/service-account/{id}/token", domain.PermAdmin, s.listServiceAccountTokens,
		api("Service accounts", "List a service account's tokens", 200, nil, personalTokenList{}))
	r.Admin("POST /api/admin/service-account/{id}/token", domain.PermAdmin, s.createServiceAccountToken, withJSON,
		api("Service accounts", "Create a service account token", 201, domain.UserTokenInput{}, domain.CreatedUserToken{}))
	r.Admin("DELETE /api/admin/service-account/{id}/token/{tokenId}", domain.PermAdmin, s.deleteServiceAccountToken,
		api("Service accounts", "Delete a service account token", 200, nil, nil))

	// Staleness.
	r.Admin("POST /api/admin/projects/{projectId}/stale", domain.PermUpdateFeature, s.markProjectFeaturesStale, withJSON,
		api("Features", "Mark flags stale or not", 202, staleBody{}, nil))
	r.Admin("POST /api/admin/features/{featureName}/stale/on", domain.PermUpdateFeature, s.staleOn,
		api("Features", "Mark a flag stale", 200, nil, store.Feature{}))
	r.Admin("POST /api/admin/features/{featureName}/stale/off", domain.PermUpdateFeature, s.staleOff,
		api("Features", "Mark a flag not stale", 200, nil, store.Feature{}))

	// Tag types, tags and flag tags.
	r.Admin("GET /api/admin/tag-types", "", s.listTagTypes,
		api("Tags", "List tag types", 200, nil, tagTypeList{}))
	r.Admin("POST /api/admin/tag-types", domain.PermCreateTagType, s.createTagType, withJSON,
		api("Tags", "Create a tag type", 201, domain.TagTypeInput{}, store.TagType{}))
	r.Admin("GET /api/admin/tag-types/{name}", "", s.getTagType,
		api("Tags", "Get a tag type", 200, nil, tagTypeDetails{}))
	r.Admin("PUT /api/admin/tag-types/{name}", domain.PermUpdateTagType, s.updateTagType, withJSON,
		api("Tags", "Update a tag type", 200, domain.TagTypeInput{}, nil))
	r.Admin("DELETE /api/admin/tag-types/{name}", domain.PermDeleteTagType, s.deleteTagType,
		api("Tags", "Delete a tag type with its tags", 200, nil, nil))
	r.Admin("GET /api/admin/tags", "", s.listTags,
		api("Tags", "List tags", 200, nil, tagList{}))
	r.Admin("GET /api/admin/tags/{type}", "", s.listTags,
		api("Tags", "List the tags of one type", 200, nil, tagList{}))
	r.Admin("POST /api/admin/tags", domain.PermUpdateFeature, s.createTag, withJSON,
		api("Tags", "Create a tag", 201, store.Tag{}, tagDetails{}))
	r.Admin("DELETE /api/admin/tags/{type}/{value}", domain.PermUpdateFeature, s.deleteTag,
		api("Tags", "Delete a tag", 200, nil, nil))
	r.Admin("GET /api/admin/features/{featureName}/tags", "", s.listFeatureTags,
		api("Tags", "List a flag's tags", 200, nil, tagList{}))
	r.Admin("POST /api/admin/features/{featureName}/tags", domain.PermUpdateFeature, s.addFeatureTag, withJSON,
		api("Tags", "Tag a flag", 201, store.Tag{}, store.Tag{}))
	r.Admin("PUT /api/admin/features/{featureName}/tags", domain.PermUpdateFeature, s.updateFeatureTags, withJSON,
		api("Tags", "Add and remove a flag's tags", 200, featureTagsChange{}, tagList{}))
	r.Admin("DELETE /api/admin/features/{featureName}/tags/{type}/{value}", domain.PermUpdateFeature, s.removeFeatureTag,
		api("Tags", "Untag a flag", 200, nil, nil))

	// Context fields.
	r.Admin("GET /api/admin/context", "", s.listContextFields,
		api("Context fields", "List context fields", 200, nil, []store.ContextField{}))
	r.Admin("POST /api/admin/context", domain.PermCreateContextField, s.createContextField, withJSON,
		api("Context fields", "Create a context field", 201, domain.ContextFieldInput{}, store.ContextField{}))
	r.Admin("POST /api/admin/context/validate", "", s.validateContextFieldName, withJSON,
		api("Context fields", "Check a context field name is free", 200, contextFieldName{}, nil))
	r.Admin("GET /api/admin/context/{name}", "", s.getContextField,
		api("Context fields", "Get a context field", 200, nil, store.ContextField{}))
	r.Admin("PUT /api/admin/context/{name}", domain.PermUpdateContextField, s.updateContextField, withJSON,
		api("Context fields", "Update a context field (absent properties untouched)", 200, domain.ContextFieldInput{}, nil))
	r.Admin("GET /api/admin/context/{name}/strategies", "", s.contextFieldStrategies,
		api("Context fields", "List the strategies that use a context field", 200, nil, contextFieldStrategies{}))
	r.Admin("DELETE /api/admin/context/{name}", domain.PermDeleteContextField, s.deleteContextField,
		api("Context fields", "Delete an unused context field", 200, nil, nil))
	r.Admin("POST /api/admin/context/{name}/legal-values", domain.PermUpdateContextField, s.addLegalValue, withJSON,
		api("Context fields", "Add or update a legal value", 200, store.LegalValue{}, nil))
	r.Admin("DELETE /api/admin/context/{name}/legal-values/{value}", domain.PermUpdateContextField, s.removeLegalValue,
		api("Context fields", "Remove a legal value", 200, nil, nil))
}
