package server

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/internal/domain"
)

// apiOperation describes one admin API operation for the OpenAPI document.
// The list below is maintained by hand next to the routes; a test checks it
// against the spec's nine operations and the running server.
type apiOperation struct {
	Method, Path, Summary, Tag string
	// Permission is the RBAC permission the route requires ("" = any caller).
	Permission string
	// Body and Response name schemas in openAPISchemas ("" = none).
	Body, Response string
	Status         int
}

// adminOperations are the documented admin API operations. The first nine
// are the specification's.
var adminOperations = []apiOperation{
	{"POST", "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/off", "Turn a flag off in an environment", "Features", domain.PermUpdateFeatureEnvironment, "", "Feature", 200},
	{"POST", "/api/admin/events/search", "Search events", "Events", "", "EventSearch", "EventList", 200},
	{"GET", "/api/admin/events", "Last 100 events, or all of one project", "Events", domain.PermAdmin, "", "EventList", 200},
	{"GET", "/api/admin/projects", "List projects", "Projects", "", "", "ProjectList", 200},
	{"PUT", "/api/admin/strategies/{name}", "Update a custom strategy type (absent properties untouched)", "Strategies", domain.PermUpdateStrategy, "StrategyTypeUpdate", "", 200},
	{"GET", "/api/admin/user/profile", "The calling principal's profile", "Users", "", "", "UserProfile", 200},
	{"GET", "/api/admin/state/export", "Export the state (format=json|yaml, download, strategies, featureToggles, projects, tags, environments)", "State", domain.PermAdmin, "", "StateExport", 200},
	{"GET", "/api/admin/projects/{projectId}/features/{featureName}/parents", "Flags that may become the flag's parent", "Dependencies", "", "", "StringList", 200},
	{"GET", "/api/admin/feature-types", "List feature types", "Feature types", "", "", "FeatureTypeList", 200},

	{"POST", "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/on", "Turn a flag on in an environment", "Features", domain.PermUpdateFeatureEnvironment, "", "Feature", 200},
	{"PUT", "/api/admin/feature-types/{id}/lifetime", "Set a feature type's lifetime in days (0 or null: never stale)", "Feature types", domain.PermAdmin, "FeatureTypeLifetime", "FeatureType", 200},
	{"GET", "/api/admin/strategies", "List strategy types", "Strategies", "", "", "StrategyTypeList", 200},
	{"POST", "/api/admin/strategies", "Create a custom strategy type", "Strategies", domain.PermCreateStrategy, "StrategyTypeCreate", "StrategyType", 201},
	{"GET", "/api/admin/strategies/{name}", "Get a strategy type", "Strategies", "", "", "StrategyType", 200},
	{"DELETE", "/api/admin/strategies/{name}", "Delete a custom strategy type", "Strategies", domain.PermDeleteStrategy, "", "", 200},
	{"POST", "/api/admin/strategies/{name}/deprecate", "Deprecate a strategy type", "Strategies", domain.PermUpdateStrategy, "", "", 200},
	{"POST", "/api/admin/strategies/{name}/reactivate", "Reactivate a strategy type", "Strategies", domain.PermUpdateStrategy, "", "", 200},
	{"POST", "/api/admin/state/import", "Import a state document (JSON or YAML; drop, keep)", "State", domain.PermAdmin, "StateExport", "", 202},
	{"GET", "/api/admin/user/tokens", "The caller's personal access tokens", "Users", "", "", "Object", 200},
	{"POST", "/api/admin/user/tokens", "Create a personal access token", "Users", "", "UserTokenCreate", "UserToken", 201},
	{"DELETE", "/api/admin/user/tokens/{tokenId}", "Delete a personal access token", "Users", "", "", "", 200},
	{"GET", "/api/admin/service-account", "List service accounts", "Service accounts", domain.PermAdmin, "", "Object", 200},
	{"POST", "/api/admin/service-account", "Create a service account", "Service accounts", domain.PermAdmin, "ServiceAccountCreate", "ServiceAccount", 201},
	{"PUT", "/api/admin/service-account/{id}", "Update a service account", "Service accounts", domain.PermAdmin, "ServiceAccountCreate", "ServiceAccount", 200},
	{"DELETE", "/api/admin/service-account/{id}", "Delete a service account", "Service accounts", domain.PermAdmin, "", "", 200},
	{"GET", "/api/admin/service-account/{id}/token", "List a service account's tokens", "Service accounts", domain.PermAdmin, "", "Object", 200},
	{"POST", "/api/admin/service-account/{id}/token", "Create a service account token", "Service accounts", domain.PermAdmin, "UserTokenCreate", "UserToken", 201},
	{"DELETE", "/api/admin/service-account/{id}/token/{tokenId}", "Delete a service account token", "Service accounts", domain.PermAdmin, "", "", 200},
	{"POST", "/api/admin/projects/{projectId}/stale", "Mark flags stale or not", "Features", domain.PermUpdateFeature, "StaleChange", "", 202},
	{"POST", "/api/admin/features/{featureName}/stale/on", "Mark a flag stale", "Features", domain.PermUpdateFeature, "", "Feature", 200},
	{"POST", "/api/admin/features/{featureName}/stale/off", "Mark a flag not stale", "Features", domain.PermUpdateFeature, "", "Feature", 200},
	{"GET", "/api/admin/tag-types", "List tag types", "Tags", "", "", "Object", 200},
	{"POST", "/api/admin/tag-types", "Create a tag type", "Tags", domain.PermCreateTagType, "TagType", "TagType", 201},
	{"GET", "/api/admin/tag-types/{name}", "Get a tag type", "Tags", "", "", "Object", 200},
	{"PUT", "/api/admin/tag-types/{name}", "Update a tag type", "Tags", domain.PermUpdateTagType, "TagType", "", 200},
	{"DELETE", "/api/admin/tag-types/{name}", "Delete a tag type with its tags", "Tags", domain.PermDeleteTagType, "", "", 200},
	{"GET", "/api/admin/tags", "List tags", "Tags", "", "", "Object", 200},
	{"GET", "/api/admin/tags/{type}", "List the tags of one type", "Tags", "", "", "Object", 200},
	{"POST", "/api/admin/tags", "Create a tag", "Tags", domain.PermUpdateFeature, "Tag", "Object", 201},
	{"DELETE", "/api/admin/tags/{type}/{value}", "Delete a tag", "Tags", domain.PermUpdateFeature, "", "", 200},
	{"GET", "/api/admin/features/{featureName}/tags", "A flag's tags", "Tags", "", "", "Object", 200},
	{"POST", "/api/admin/features/{featureName}/tags", "Tag a flag", "Tags", domain.PermUpdateFeature, "Tag", "Tag", 201},
	{"PUT", "/api/admin/features/{featureName}/tags", "Add and remove a flag's tags", "Tags", domain.PermUpdateFeature, "FeatureTagsChange", "Object", 200},
	{"DELETE", "/api/admin/features/{featureName}/tags/{type}/{value}", "Untag a flag", "Tags", domain.PermUpdateFeature, "", "", 200},
	{"GET", "/api/admin/context", "List context fields", "Context fields", "", "", "Object", 200},
	{"POST", "/api/admin/context", "Create a context field", "Context fields", domain.PermCreateContextField, "ContextField", "ContextField", 201},
	{"POST", "/api/admin/context/validate", "Check a context field name is free", "Context fields", "", "Object", "", 200},
	{"GET", "/api/admin/context/{name}", "Get a context field", "Context fields", "", "", "ContextField", 200},
	{"PUT", "/api/admin/context/{name}", "Update a context field (absent properties untouched)", "Context fields", domain.PermUpdateContextField, "ContextField", "", 200},
	{"DELETE", "/api/admin/context/{name}", "Delete an unused context field", "Context fields", domain.PermDeleteContextField, "", "", 200},
	{"POST", "/api/admin/context/{name}/legal-values", "Add or update a legal value", "Context fields", domain.PermUpdateContextField, "LegalValue", "", 200},
	{"DELETE", "/api/admin/context/{name}/legal-values/{value}", "Remove a legal value", "Context fields", domain.PermUpdateContextField, "", "", 200},
}

type jsonObj = map[string]any

// openAPISchemas are the components referenced by adminOperations.
func openAPISchemas() jsonObj {
	str, num, boolean, obj := jsonObj{"type": "string"}, jsonObj{"type": "number"}, jsonObj{"type": "boolean"}, jsonObj{"type": "object"}
	nstr := jsonObj{"type": "string", "nullable": true}
	date := jsonObj{"type": "string", "format": "date-time"}
	arr := func(items any) jsonObj { return jsonObj{"type": "array", "items": items} }
	ref := func(n string) jsonObj { return jsonObj{"$ref": "#/components/schemas/" + n} }
	object := func(required []string, props jsonObj) jsonObj {
		o := jsonObj{"type": "object", "properties": props}
		if len(required) > 0 {
			o["required"] = required
		}
		return o
	}
	param := object([]string{"name", "type"}, jsonObj{"name": str, "description": str, "required": boolean,
		"type": jsonObj{"type": "string", "enum": []string{"string", "percentage", "list", "number", "boolean"}}})
	return jsonObj{
		"Object":     obj,
		"StringList": arr(str),
		"Error":      object([]string{"id", "name", "message"}, jsonObj{"id": str, "name": str, "message": str}),
		"Event": object([]string{"id", "type", "createdBy", "createdAt"}, jsonObj{"id": jsonObj{"type": "integer", "minimum": 1}, "type": str,
			"createdBy": str, "createdAt": date, "createdByUserId": jsonObj{"type": "number", "nullable": true}, "environment": nstr, "project": nstr,
			"featureName": nstr, "data": jsonObj{"type": "object", "nullable": true}, "preData": jsonObj{"type": "object", "nullable": true},
			"tags": jsonObj{"type": "array", "nullable": true, "items": ref("Tag")}}),
		"EventList": object([]string{"version", "events"}, jsonObj{"version": jsonObj{"type": "integer", "enum": []int{1}}, "events": arr(ref("Event")), "totalEvents": jsonObj{"type": "integer"}}),
		"EventSearch": object(nil, jsonObj{"type": str, "project": str, "feature": str, "query": str,
			"limit": jsonObj{"type": "integer", "minimum": 1, "maximum": 100, "default": 100}, "offset": jsonObj{"type": "integer", "minimum": 0}}),
		"Project": object([]string{"id", "name"}, jsonObj{"id": str, "name": str, "description": nstr, "health": jsonObj{"type": "number", "minimum": 0, "maximum": 100},
			"featureCount": num, "staleFeatureCount": num, "potentiallyStaleFeatureCount": num, "memberCount": num, "createdAt": date,
			"updatedAt": jsonObj{"type": "string", "format": "date-time", "nullable": true}, "favorite": boolean,
			"mode": jsonObj{"type": "string", "enum": []string{"open", "protected", "private"}}, "defaultStickiness": str, "avgTimeToProduction": num}),
		"ProjectList": object([]string{"version", "projects"}, jsonObj{"version": jsonObj{"type": "integer"}, "projects": arr(ref("Project"))}),
		"Feature": object([]string{"name"}, jsonObj{"name": str, "type": str, "description": nstr, "archived": boolean, "project": str,
			"enabled": boolean, "stale": boolean, "favorite": boolean, "impressionData": boolean, "createdAt": date, "environments": arr(obj)}),
		"FeatureType": object([]string{"id", "name", "description", "lifetimeDays"}, jsonObj{"id": str, "name": str, "description": str,
			"lifetimeDays": jsonObj{"type": "integer", "nullable": true}}),
		"FeatureTypeList":     object([]string{"version", "types"}, jsonObj{"version": jsonObj{"type": "integer", "enum": []int{1}}, "types": arr(ref("FeatureType"))}),
		"FeatureTypeLifetime": object([]string{"lifetimeDays"}, jsonObj{"lifetimeDays": jsonObj{"type": "integer", "minimum": 0, "nullable": true}}),
		"StrategyTypeUpdate":  object([]string{"parameters"}, jsonObj{"description": str, "parameters": arr(param)}),
		"StrategyTypeCreate":  object([]string{"name", "parameters"}, jsonObj{"name": str, "title": nstr, "description": str, "parameters": arr(param)}),
		"StrategyType": object([]string{"name", "displayName", "description", "editable", "deprecated", "parameters"}, jsonObj{"title": nstr, "name": str,
			"displayName": nstr, "description": nstr, "editable": boolean, "deprecated": boolean, "parameters": arr(param)}),
		"StrategyTypeList": object([]string{"version", "strategies"}, jsonObj{"version": jsonObj{"type": "integer"}, "strategies": arr(ref("StrategyType"))}),
		"UserProfile": object([]string{"rootRole", "projects", "features"}, jsonObj{
			"rootRole": object([]string{"id", "type", "name"}, jsonObj{"id": jsonObj{"type": "integer"}, "type": str, "name": str, "description": str, "project": nstr}),
			"projects": arr(str), "features": jsonObj{"type": "array", "items": obj, "deprecated": true}}),
		"Tag":               object([]string{"type", "value"}, jsonObj{"type": str, "value": str}),
		"TagType":           object([]string{"name"}, jsonObj{"name": str, "description": str, "icon": nstr, "color": nstr}),
		"FeatureTagsChange": object(nil, jsonObj{"addedTags": arr(ref("Tag")), "removedTags": arr(ref("Tag"))}),
		"LegalValue":        object([]string{"value"}, jsonObj{"value": str, "description": str}),
		"ContextField": object([]string{"name"}, jsonObj{"name": str, "description": nstr, "stickiness": boolean, "sortOrder": jsonObj{"type": "integer"},
			"legalValues": arr(ref("LegalValue"))}),
		"ServiceAccountCreate": object([]string{"username", "rootRole"}, jsonObj{"username": str, "name": str, "rootRole": jsonObj{"type": "integer", "enum": []int{1, 2, 3}}}),
		"ServiceAccount":       object([]string{"id", "rootRole"}, jsonObj{"id": jsonObj{"type": "integer"}, "username": str, "name": nstr, "rootRole": jsonObj{"type": "integer"}, "createdAt": date}),
		"UserTokenCreate":      object([]string{"description"}, jsonObj{"description": str, "expiresAt": date}),
		"UserToken": object([]string{"id", "secret"}, jsonObj{"id": jsonObj{"type": "integer"}, "description": str, "userId": jsonObj{"type": "integer"},
			"expiresAt": jsonObj{"type": "string", "format": "date-time", "nullable": true}, "createdAt": date, "secret": str}),
		"StaleChange": object([]string{"features", "value"}, jsonObj{"features": arr(str), "value": boolean}),
		"StateExport": object([]string{"version"}, jsonObj{"version": jsonObj{"type": "integer"}, "features": arr(ref("Feature")),
			"strategies": arr(ref("StrategyType")), "tags": arr(ref("Tag")), "tagTypes": arr(ref("TagType")),
			"featureTags": arr(object([]string{"featureName", "tagValue"}, jsonObj{"featureName": str, "tagType": str, "tagValue": str,
				"type": jsonObj{"type": "string", "deprecated": true}, "value": jsonObj{"type": "string", "deprecated": true}, "createdByUserId": jsonObj{"type": "number", "nullable": true}})),
			"projects": arr(ref("Project")), "featureStrategies": arr(obj), "featureEnvironments": arr(obj),
			"environments": arr(object([]string{"name", "type", "enabled", "protected", "sortOrder"}, jsonObj{"name": str, "type": str, "enabled": boolean,
				"protected": boolean, "sortOrder": jsonObj{"type": "integer"}, "projectCount": jsonObj{"type": "integer", "nullable": true},
				"apiTokenCount": jsonObj{"type": "integer", "nullable": true}, "enabledToggleCount": jsonObj{"type": "integer", "nullable": true}})),
			"segments":                arr(object([]string{"id", "constraints"}, jsonObj{"id": num, "name": str, "constraints": arr(obj), "description": nstr, "createdAt": date, "createdBy": str, "project": nstr})),
			"featureStrategySegments": arr(object([]string{"segmentId", "featureStrategyId"}, jsonObj{"segmentId": jsonObj{"type": "integer"}, "featureStrategyId": str}))}),
	}
}

// OpenAPIDocument returns the OpenAPI 3.0 document of the admin API.
func OpenAPIDocument() []byte {
	paths := jsonObj{}
	for _, op := range slices.Concat(adminOperations, signalsOperations) {
		item, _ := paths[op.Path].(jsonObj)
		if item == nil {
			item = jsonObj{}
			paths[op.Path] = item
		}
		item[strings.ToLower(op.Method)] = openAPIOperation(op)
	}
	doc := jsonObj{
		"openapi": "3.0.3",
		"info": jsonObj{"title": "Bunting admin API", "version": "1",
			"description": "Manage feature flags, strategy types, tags, context fields, users and state. Paths follow Unleash's."},
		"servers":    []any{jsonObj{"url": "/"}},
		"security":   []any{jsonObj{"apiKey": []any{}}},
		"paths":      paths,
		"components": jsonObj{"schemas": openAPISchemas(), "securitySchemes": jsonObj{"apiKey": jsonObj{"type": "apiKey", "in": "header", "name": "Authorization"}}},
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	return b
}

func openAPIOperation(op apiOperation) jsonObj {
	errRef := func(desc string) jsonObj {
		return jsonObj{"description": desc, "content": jsonObj{"application/json": jsonObj{"schema": jsonObj{"$ref": "#/components/schemas/Error"}}}}
	}
	ok := jsonObj{"description": "Success"}
	if op.Response != "" {
		ok["content"] = jsonObj{"application/json": jsonObj{"schema": jsonObj{"$ref": "#/components/schemas/" + op.Response}}}
	}
	responses := jsonObj{strconv.Itoa(op.Status): ok, "401": errRef("AuthenticationRequired"), "403": errRef("NoAccessError")}
	desc := "Any authenticated admin principal may call it."
	if op.Permission != "" {
		desc = "Needs the " + op.Permission + " permission."
	}
	out := jsonObj{"summary": op.Summary, "description": desc, "tags": []string{op.Tag}, "operationId": operationID(op), "responses": responses}
	var params []any
	for _, seg := range strings.Split(op.Path, "/") {
		if strings.HasPrefix(seg, "{") {
			params = append(params, jsonObj{"name": strings.Trim(seg, "{}"), "in": "path", "required": true, "schema": jsonObj{"type": "string"}})
		}
	}
	if len(params) > 0 {
		out["parameters"] = params
		responses["404"] = errRef("NotFoundError")
	}
	if strings.Contains(op.Path, "{featureName}") || strings.Contains(op.Path, "{segmentId}") {
		conditional(op, ok, responses, &params, errRef)
	}
	if len(params) > 0 {
		out["parameters"] = params
	}
	if op.Body != "" {
		out["requestBody"] = jsonObj{"required": true, "content": jsonObj{"application/json": jsonObj{"schema": jsonObj{"$ref": "#/components/schemas/" + op.Body}}}}
		responses["400"] = errRef("ValidationError")
		responses["415"] = errRef("ContentTypeError")
	}
	return out
}

// conditional documents versions (preconditions.go): the ETag of a flag
// or segment read, and If-Match with its 412 on a change to one.
func conditional(op apiOperation, ok, responses jsonObj, params *[]any, errRef func(string) jsonObj) {
	if op.Method == "GET" {
		if strings.HasSuffix(op.Path, "{featureName}") || strings.HasSuffix(op.Path, "{segmentId}") {
			ok["headers"] = jsonObj{"ETag": jsonObj{"description": "The object's version, for If-Match", "schema": jsonObj{"type": "string"}}}
		}
		return
	}
	*params = append(*params, jsonObj{"name": "If-Match", "in": "header", "required": false, "schema": jsonObj{"type": "string"},
		"description": "The version (ETag) of the flag or segment the change is based on: without it nothing is checked; when someone changed the object since, the answer is 412 and nothing changes. The answer's ETag is the new version."})
	responses["412"] = errRef("PreconditionFailedError")
}

// operationID derives a stable id from the method and path.
func operationID(op apiOperation) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(op.Method))
	for _, seg := range strings.Split(strings.TrimPrefix(op.Path, "/api/admin/"), "/") {
		seg = strings.Trim(seg, "{}")
		for _, part := range strings.FieldsFunc(seg, func(r rune) bool { return r == '-' || r == '_' }) {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}
