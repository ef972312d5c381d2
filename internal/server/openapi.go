package server

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
)

type jsonObj = map[string]any

// openAPIDocument returns the OpenAPI 3.0 document of the documented
// routes (every admin route and more): each route's registration line
// carries its documentation (api in routes.go), and its permission is the
// one the route checks, in x-permission and the description.
func openAPIDocument(routes []Route) []byte {
	sr := newSchemaReflector()
	errRef := sr.named(reflect.TypeFor[apierr.Body](), "Error")
	// Responses first, so that the structs they share with request bodies
	// list their required properties.
	for _, rt := range routes {
		if rt.Doc.Response != nil {
			sr.schema(rt.Doc.Response)
		}
	}
	sr.requests = true
	paths := jsonObj{}
	for _, rt := range routes {
		if rt.Doc.Summary == "" {
			continue
		}
		method, path, _ := strings.Cut(rt.Pattern, " ")
		item, _ := paths[path].(jsonObj)
		if item == nil {
			item = jsonObj{}
			paths[path] = item
		}
		item[strings.ToLower(method)] = openAPIOperation(sr, rt, method, path, errRef)
	}
	doc := jsonObj{
		"openapi": "3.0.3",
		"info": jsonObj{"title": "Bunting admin API", "version": "1",
			"description": "Manage feature flags, strategy types, tags, context fields, users and state; the client API that server-side SDKs read. Paths follow Unleash's."},
		"servers":    []any{jsonObj{"url": "/"}},
		"security":   []any{jsonObj{"apiKey": []any{}}},
		"paths":      paths,
		"components": jsonObj{"schemas": sr.schemas, "securitySchemes": jsonObj{"apiKey": jsonObj{"type": "apiKey", "in": "header", "name": "Authorization"}}},
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	return b
}

// openAPIOperation documents one route.
func openAPIOperation(sr *schemaReflector, rt Route, method, path string, errSchema jsonObj) jsonObj {
	jsonContent := func(s jsonObj) jsonObj { return jsonObj{"application/json": jsonObj{"schema": s}} }
	errResp := func(desc string) jsonObj { return jsonObj{"description": desc, "content": jsonContent(errSchema)} }
	d := rt.Doc
	ok := jsonObj{"description": "Success"}
	if d.Response != nil {
		ok["content"] = jsonContent(sr.schema(d.Response))
	}
	status := d.Status
	if status == 0 {
		status = 200
	}
	responses := jsonObj{strconv.Itoa(status): ok}
	var desc string
	switch {
	case rt.Surface == "public":
		desc = "Needs no credentials."
	case rt.Permission != "":
		desc = "Needs the " + rt.Permission + " permission."
	default:
		desc = "Any authenticated " + rt.Surface + " principal may call it."
	}
	if rt.Surface != "public" {
		responses["401"] = errResp("AuthenticationRequired")
		responses["403"] = errResp("NoAccessError")
	}
	out := jsonObj{"summary": d.Summary, "description": desc, "tags": []string{d.Tag},
		"operationId": operationID(method, path), "responses": responses, "x-permission": rt.Permission}
	if rt.Surface == "public" {
		out["security"] = []any{}
	}
	var params []any
	for _, seg := range strings.Split(path, "/") {
		if strings.HasPrefix(seg, "{") {
			params = append(params, jsonObj{"name": strings.Trim(seg, "{}"), "in": "path", "required": true, "schema": jsonObj{"type": "string"}})
		}
	}
	if len(params) > 0 {
		responses["404"] = errResp("NotFoundError")
	}
	if strings.Contains(path, "{featureName}") || strings.Contains(path, "{segmentId}") {
		conditional(method, path, ok, responses, &params, errResp)
	}
	if len(params) > 0 {
		out["parameters"] = params
	}
	if d.Body != nil {
		out["requestBody"] = jsonObj{"required": true, "content": jsonContent(sr.schema(d.Body))}
		responses["400"] = errResp("ValidationError")
		responses["415"] = errResp("ContentTypeError")
	}
	return out
}

// conditional documents versions (adminapi/preconditions.go): the ETag of a flag
// or segment read, and If-Match with its 412 on a change to one.
func conditional(method, path string, ok, responses jsonObj, params *[]any, errResp func(string) jsonObj) {
	if method == "GET" {
		if strings.HasSuffix(path, "{featureName}") || strings.HasSuffix(path, "{segmentId}") {
			ok["headers"] = jsonObj{"ETag": jsonObj{"description": "The object's version, for If-Match", "schema": jsonObj{"type": "string"}}}
		}
		return
	}
	*params = append(*params, jsonObj{"name": "If-Match", "in": "header", "required": false, "schema": jsonObj{"type": "string"},
		"description": "The version (ETag) of the flag or segment the change is based on: without it nothing is checked; when someone changed the object since, the answer is 412 and nothing changes. The answer's ETag is the new version."})
	responses["412"] = errResp("PreconditionFailedError")
}

// operationID derives a stable id from the method and path.
func operationID(method, path string) string {
	var b strings.Builder
	b.WriteString(strings.ToLower(method))
	for _, seg := range strings.Split(strings.TrimPrefix(path, "/api/admin"), "/") {
		seg = strings.Trim(seg, "{}")
		for _, part := range strings.FieldsFunc(seg, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String()
}
