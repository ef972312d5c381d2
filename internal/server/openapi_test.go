package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// loadOpenAPI fetches /docs/openapi.json and checks it is a valid
// OpenAPI 3 document (kin-openapi's validation, $refs resolved).
func loadOpenAPI(t *testing.T, h *servertest.Harness) *openapi3.T {
	t.Helper()
	res := h.Do(t, "GET", "/docs/openapi.json", "", nil).Want(t, 200)
	doc, err := openapi3.NewLoader().LoadFromData(res.Body)
	if err != nil {
		t.Fatalf("the OpenAPI document does not load: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the OpenAPI document is not valid OpenAPI 3: %v", err)
	}
	return doc
}

// mustBeDocumented reports whether a route must appear in the OpenAPI
// document: every admin route and every signal route.
func mustBeDocumented(rt server.Route) bool {
	_, path, _ := strings.Cut(rt.Pattern, " ")
	return rt.Surface == "admin" || strings.HasPrefix(path, "/api/admin/") || strings.HasPrefix(path, "/api/signal-endpoint/")
}

// nonEmptySchema reports whether s says something about a JSON value's
// shape (an object with properties, an array, a map, a scalar type).
func nonEmptySchema(s *openapi3.SchemaRef) bool {
	if s == nil || s.Value == nil {
		return false
	}
	v := s.Value
	for _, sub := range v.AllOf {
		if nonEmptySchema(sub) {
			return true
		}
	}
	switch {
	case v.Type.Is("object"):
		return len(v.Properties) > 0 || v.AdditionalProperties.Schema != nil
	case v.Type.Is("array"):
		return nonEmptySchema(v.Items)
	default:
		return v.Type != nil && len(v.Type.Slice()) > 0
	}
}

func jsonSchemaOf(content openapi3.Content) *openapi3.SchemaRef {
	if mt := content.Get("application/json"); mt != nil {
		return mt.Schema
	}
	return nil
}

// TestOpenAPIDocumentsEveryRoute checks the route table against the
// document it generates, both ways: every admin and signal route is
// documented with its method, path and permission, with request and
// response schemas that are not empty; every documented operation is a
// registered route that the server serves.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	t.Parallel()
	h := servertest.Start(t, servertest.NewSQLite(t))
	doc := loadOpenAPI(t, h)
	registered := map[string]server.Route{}
	checked := 0
	for _, rt := range h.Server.Routes() {
		registered[rt.Pattern] = rt
		if !mustBeDocumented(rt) {
			continue
		}
		checked++
		method, path, _ := strings.Cut(rt.Pattern, " ")
		item := doc.Paths.Value(path)
		var op *openapi3.Operation
		if item != nil {
			op = item.GetOperation(method)
		}
		if op == nil {
			t.Errorf("%s is registered but not in the OpenAPI document (give its registration line an api(…) option)", rt.Pattern)
			continue
		}
		if got, _ := op.Extensions["x-permission"].(string); got != rt.Permission {
			t.Errorf("%s: the document says permission %q, the route checks %q", rt.Pattern, got, rt.Permission)
		}
		if rt.Permission != "" && !strings.Contains(op.Description, rt.Permission) {
			t.Errorf("%s: the description %q does not name the permission %s", rt.Pattern, op.Description, rt.Permission)
		}
		if op.Summary == "" || len(op.Tags) != 1 || op.Tags[0] == "" {
			t.Errorf("%s: summary %q, tags %v", rt.Pattern, op.Summary, op.Tags)
		}
		if rt.JSON {
			if op.RequestBody == nil || !nonEmptySchema(jsonSchemaOf(op.RequestBody.Value.Content)) {
				t.Errorf("%s takes a JSON body, but its documented request schema is missing or empty", rt.Pattern)
			}
		}
		if rt.Doc.Response != nil {
			resp := op.Responses.Status(rt.Doc.Status)
			if resp == nil || !nonEmptySchema(jsonSchemaOf(resp.Value.Content)) {
				t.Errorf("%s returns JSON, but its documented %d response schema is missing or empty", rt.Pattern, rt.Doc.Status)
			}
		}
	}
	if checked < 130 {
		t.Errorf("only %d admin and signal routes in the route table", checked)
	}

	operations := 0
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			operations++
			pattern := method + " " + path
			if _, ok := registered[pattern]; !ok {
				t.Errorf("%s is documented but no route is registered with that pattern", pattern)
				continue
			}
			concrete := strings.NewReplacer("{", "", "}", "").Replace(path)
			res := h.Do(t, method, concrete, h.AdminToken, nil)
			if res.Status == http.StatusMethodNotAllowed || res.Status == http.StatusNotFound && strings.Contains(string(res.Body), "is not available") {
				t.Errorf("%s is documented but the server does not serve it: %s", pattern, res)
			}
		}
	}
	if operations < checked {
		t.Errorf("%d operations documented for %d routes", operations, checked)
	}
}

// TestOpenAPIResponsesMatchSchemas reads every documented GET operation
// after creating one of most things, and checks each successful answer
// against the operation's documented response schema, so that a response
// type given at a registration line cannot drift from what the handler
// writes.
func TestOpenAPIResponsesMatchSchemas(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		doc := loadOpenAPI(t, h)
		admin := h.AdminToken
		seedFeature(t, h, "default", "doc-flag", "release")
		var strategy struct{ ID string }
		h.Do(t, "POST", "/api/admin/projects/default/features/doc-flag/environments/development/strategies", admin,
			map[string]any{"name": "flexibleRollout", "parameters": map[string]any{"rollout": "50", "stickiness": "default", "groupId": "doc-flag"},
				"variants": []any{map[string]any{"name": "a", "weight": 1000, "stickiness": "default", "weightType": "variable"}}}).Want(t, 200).JSON(t, &strategy)
		h.Do(t, "POST", "/api/admin/segments", admin, map[string]any{"name": "doc-segment", "constraints": []any{
			map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"1"}}}}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/tag-types", admin, map[string]any{"name": "doc-tags"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/features/doc-flag/tags", admin, map[string]any{"type": "doc-tags", "value": "v1"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/context", admin, map[string]any{"name": "doc-field", "legalValues": []any{map[string]any{"value": "x"}}}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/signal-endpoints", admin, map[string]any{"name": "doc-endpoint"}).Want(t, 201)
		var robot struct{ ID int64 }
		h.Do(t, "POST", "/api/admin/service-account", admin, map[string]any{"username": "doc-robot", "rootRole": 1}).Want(t, 201).JSON(t, &robot)
		var user struct{ Secret string }
		h.Do(t, "POST", "/api/admin/service-account/"+itoa(robot.ID)+"/token", admin, map[string]any{"description": "doc"}).Want(t, 201).JSON(t, &user)
		var endpoint struct{ ID int64 }
		h.Do(t, "POST", "/api/admin/signal-endpoints", admin, map[string]any{"name": "doc-endpoint-2"}).Want(t, 201).JSON(t, &endpoint)
		h.Do(t, "POST", "/api/admin/projects/default/actions", admin, map[string]any{"name": "doc-actions", "actorId": robot.ID,
			"match": map[string]any{"source": "signal-endpoint", "sourceId": endpoint.ID},
			"actions": []any{map[string]any{"action": "TOGGLE_FEATURE_OFF", "sortOrder": 1,
				"executionParams": map[string]string{"project": "default", "environment": "development", "featureName": "doc-flag"}}}}).Want(t, 201)
		h.Do(t, "POST", "/api/client/metrics", h.ClientToken, map[string]any{"appName": "doc-app", "instanceId": "i1",
			"bucket": map[string]any{"start": "2026-01-01T00:00:00Z", "stop": "2026-01-01T00:01:00Z",
				"toggles": map[string]any{"doc-flag": map[string]any{"yes": 1, "no": 0}}}})
		now := time.Now().UTC().Format(time.RFC3339)
		h.Do(t, "POST", "/api/client/register", h.ClientToken, map[string]any{"appName": "doc-app", "instanceId": "i1", "sdkVersion": "unleash-client-node:6.1.0",
			"interval": 1000, "started": now, "strategies": []string{"default", "not-on-this-server"}}).Want(t, 202)
		h.Do(t, "POST", "/api/client/metrics", h.ClientToken, map[string]any{"appName": "doc-app", "instanceId": "i1",
			"bucket": map[string]any{"start": now, "stop": now, "toggles": map[string]any{"doc-flag": map[string]any{"yes": 1, "no": 0}, "gone-flag": map[string]any{"yes": 1}}}})
		h.FlushUsage(t)

		// Path parameters: the first value that answers 200 wins.
		candidates := map[string][]string{
			"projectId": {"default"}, "featureName": {"doc-flag"}, "environment": {"development"},
			"name": {"development", "flexibleRollout", "doc-tags", "doc-field"}, "type": {"doc-tags"},
			"id": {"1", itoa(robot.ID), "release"}, "segmentId": {"1"}, "strategyId": {strategy.ID}, "appName": {"doc-app"},
		}
		validated := 0
		for path, item := range doc.Paths.Map() {
			op := item.Get
			if op == nil {
				continue
			}
			token := admin
			switch {
			case strings.HasPrefix(path, "/api/admin/user/"):
				token = user.Secret // a person's own things
			case strings.HasPrefix(path, "/api/client/"):
				token = h.ClientToken
			}
			for _, concrete := range expand(path, candidates) {
				res := h.Do(t, "GET", concrete, token, nil)
				if res.Status != 200 {
					continue
				}
				resp := op.Responses.Status(200)
				if resp == nil {
					t.Errorf("GET %s answered 200, which is not documented", path)
					break
				}
				schema := jsonSchemaOf(resp.Value.Content)
				if schema == nil {
					break // not a JSON answer (the state export is checked as JSON below)
				}
				var v any
				if err := json.Unmarshal(res.Body, &v); err != nil {
					t.Errorf("GET %s: not JSON: %v", concrete, err)
					break
				}
				if err := schema.Value.VisitJSON(v); err != nil {
					t.Errorf("GET %s does not match its documented schema: %v\nbody: %.600s", concrete, err, res.Body)
				}
				validated++
				break
			}
		}
		if validated < 45 {
			t.Errorf("only %d GET answers validated", validated)
		}
		t.Logf("%d GET answers match their schemas", validated)
	})
}

// expand substitutes path parameters with every combination of their
// candidate values (parameters without candidates get "x").
func expand(path string, candidates map[string][]string) []string {
	i := strings.IndexByte(path, '{')
	if i < 0 {
		return []string{path}
	}
	j := strings.IndexByte(path[i:], '}') + i
	values := candidates[path[i+1:j]]
	if len(values) == 0 {
		values = []string{"x"}
	}
	var out []string
	for _, v := range values {
		for _, rest := range expand(path[j+1:], candidates) {
			out = append(out, path[:i]+v+rest)
		}
	}
	return out
}
