package proxy

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5emb"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
)

// obj is a JSON object literal.
type obj = map[string]any

// OpenAPI returns the OpenAPI 3.0.3 document of the proxy's routes for a
// configuration (base path and client key header).
func OpenAPI(cfg Config) []byte {
	b := cfg.ProxyBasePath + "/proxy"
	ref := func(name string) obj { return obj{"$ref": "#/components/schemas/" + name} }
	jsonBody := func(schema obj) obj {
		return obj{"required": true, "content": obj{"application/json": obj{"schema": schema}}}
	}
	jsonResp := func(desc string, schema obj) obj {
		return obj{"description": desc, "content": obj{"application/json": obj{"schema": schema}}}
	}
	errResp := func(desc string) obj { return jsonResp(desc, ref("Error")) }
	secured := []any{obj{"apiKey": []any{}}}
	contextParams := []any{}
	for _, f := range []string{"appName", "environment", "userId", "sessionId", "remoteAddress", "currentTime"} {
		contextParams = append(contextParams, obj{"name": f, "in": "query", "schema": obj{"type": "string"}})
	}
	contextParams = append(contextParams, obj{"name": "properties", "in": "query", "style": "deepObject", "explode": true,
		"description": "Custom context fields as properties[name]=value.",
		"schema":      obj{"type": "object", "additionalProperties": obj{"type": "string"}}})
	togglesOps := func(summary string) obj {
		return obj{
			"get": obj{"summary": summary + " (context from the query string)", "tags": []any{"Proxy"}, "security": secured,
				"parameters": contextParams,
				"responses": obj{"200": jsonResp("Evaluated toggles", ref("ToggleList")), "304": obj{"description": "Not modified (If-None-Match)"},
					"400": errResp("Invalid context"), "401": errResp("Missing or wrong client key"), "503": errResp("Not ready")}},
			"post": obj{"summary": summary + " (context in the body; a toggles list selects names)", "tags": []any{"Proxy"}, "security": secured,
				"requestBody": jsonBody(ref("LookupToggles")),
				"responses": obj{"200": jsonResp("Evaluated toggles", ref("ToggleList")), "400": errResp("Invalid body"),
					"401": errResp("Missing or wrong client key"), "413": errResp("Body too large"), "415": errResp("Not JSON"), "503": errResp("Not ready")}},
		}
	}
	okText := obj{"description": "OK", "content": obj{"text/plain": obj{"schema": obj{"type": "string"}}}}
	paths := obj{
		b:          togglesOps("Enabled toggles"),
		b + "/all": togglesOps("All toggles, enabled or not (only with enableAllEndpoint; 501 otherwise)"),
		b + "/health": obj{"get": obj{"summary": "Readiness", "tags": []any{"Operational"},
			"responses": obj{"200": obj{"description": "Ready", "content": obj{"text/html": obj{"schema": obj{"type": "string"}}}}, "503": errResp("Not ready")}}},
		b + "/client/metrics": obj{"post": obj{"summary": "Usage metrics from an SDK", "tags": []any{"Proxy"}, "security": secured,
			"requestBody": jsonBody(ref("ClientMetrics")),
			"responses":   obj{"200": okText, "400": errResp("Invalid metrics"), "401": errResp("Missing or wrong key")}}},
		b + "/client/register": obj{"post": obj{"summary": "SDK registration (accepted, not stored)", "tags": []any{"Proxy"}, "security": secured,
			"requestBody": jsonBody(obj{"type": "object", "required": []any{"appName"}, "properties": obj{"appName": obj{"type": "string"}}}),
			"responses":   obj{"200": okText, "400": errResp("Invalid registration"), "401": errResp("Missing or wrong key")}}},
		b + "/client/features": obj{"get": obj{"summary": "Flag configuration for server-side SDKs (expServerSideSdkConfig.tokens only)", "tags": []any{"Server-side SDKs"}, "security": secured,
			"responses": obj{"200": jsonResp("Client features payload with segments", obj{"type": "object", "properties": obj{
				"version": obj{"type": "integer"}, "features": obj{"type": "array", "items": obj{"type": "object"}}, "segments": obj{"type": "array", "items": obj{"type": "object"}}}}),
				"401": errResp("Not a server-side SDK token"), "503": errResp("Not ready")}}},
		b + "/internal-backstage/prometheus": obj{"get": obj{"summary": "Prometheus metrics", "tags": []any{"Operational"},
			"responses": obj{"200": obj{"description": "Prometheus text format", "content": obj{"text/plain": obj{"schema": obj{"type": "string"}}}}, "503": errResp("Not ready")}}},
	}
	// Unleash Edge's paths answer as their /proxy twins (/api/proxy too,
	// left out here).
	edge := cfg.ProxyBasePath + "/api"
	for _, sub := range []string{"", "/all", "/client/metrics", "/client/register"} {
		paths[edge+"/frontend"+sub] = paths[b+sub]
	}
	for _, sub := range []string{"/features", "/metrics", "/register"} {
		paths[edge+"/client"+sub] = paths[b+"/client"+sub]
	}
	str := obj{"type": "string"}
	schemas := obj{
		"Context": obj{"type": "object", "properties": obj{"appName": str, "environment": str, "userId": str, "sessionId": str,
			"remoteAddress": str, "currentTime": obj{"type": "string", "format": "date-time"},
			"properties": obj{"type": "object", "additionalProperties": str}}, "additionalProperties": str},
		"LookupToggles": obj{"type": "object", "properties": obj{"context": ref("Context"), "toggles": obj{"type": "array", "items": str, "maxItems": MaxToggleNames}}},
		"Payload":       obj{"type": "object", "required": []any{"type", "value"}, "properties": obj{"type": obj{"type": "string", "enum": []any{"string", "json", "csv", "number"}}, "value": str}},
		"Variant": obj{"type": "object", "required": []any{"name", "enabled"}, "properties": obj{"name": str, "enabled": obj{"type": "boolean"},
			"payload": ref("Payload"), "feature_enabled": obj{"type": "boolean"}, "featureEnabled": obj{"type": "boolean"}}},
		"Toggle": obj{"type": "object", "required": []any{"name", "enabled", "variant", "impressionData"}, "properties": obj{"name": str,
			"enabled": obj{"type": "boolean"}, "variant": ref("Variant"), "impressionData": obj{"type": "boolean"}}},
		"ToggleList": obj{"type": "object", "required": []any{"toggles"}, "properties": obj{"toggles": obj{"type": "array", "items": ref("Toggle")}}},
		"ClientMetrics": obj{"type": "object", "required": []any{"appName", "bucket"}, "properties": obj{"appName": str, "instanceId": str,
			"environment": str, "bucket": obj{"type": "object", "required": []any{"start", "stop", "toggles"}, "properties": obj{
				"start": obj{"type": "string", "format": "date-time"}, "stop": obj{"type": "string", "format": "date-time"},
				"toggles": obj{"type": "object", "additionalProperties": obj{"type": "object", "properties": obj{
					"yes": obj{"type": "integer", "minimum": 0}, "no": obj{"type": "integer", "minimum": 0},
					"variants": obj{"type": "object", "additionalProperties": obj{"type": "integer", "minimum": 0}}}}}}}}},
		"Error": obj{"type": "object", "required": []any{"id", "name", "message"}, "properties": obj{"id": str, "name": str, "message": str}},
	}
	doc := obj{
		"openapi":    "3.0.3",
		"info":       obj{"title": "Bunting Proxy API", "version": Version, "description": "Client proxy: evaluates feature flags for front-end SDKs."},
		"servers":    []any{obj{"url": "/"}},
		"paths":      paths,
		"components": obj{"schemas": schemas, "securitySchemes": obj{"apiKey": obj{"type": "apiKey", "in": "header", "name": cfg.ClientKeysHeaderName}}},
	}
	out, _ := json.MarshalIndent(doc, "", "  ")
	return out
}

// newDocsHandler serves /docs/openapi.json and the Swagger UI page and
// assets under /docs/openapi, all from the binary.
func newDocsHandler(cfg Config) http.Handler {
	spec := OpenAPI(cfg)
	jsonPath := cfg.ProxyBasePath + "/docs/openapi.json"
	ui := v5emb.NewWithConfig(swgui.Config{
		SettingsUI: map[string]string{"validatorUrl": "null"},
	})("Bunting Proxy API", jsonPath, cfg.ProxyBasePath+"/docs/openapi/")
	serve := func(w http.ResponseWriter, r *http.Request) error {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			return httpjson.MethodNotAllowed(w, r, "GET, HEAD")
		}
		switch {
		case r.URL.Path == jsonPath:
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_, _ = w.Write(spec)
		case strings.HasPrefix(r.URL.Path, cfg.ProxyBasePath+"/docs/openapi"):
			ui.ServeHTTP(w, r)
		default:
			return apierr.NotFound("Cannot %s %s", r.Method, r.URL.Path)
		}
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := serve(w, r); err != nil {
			apierr.Write(w, r, nil, err)
		}
	})
}
