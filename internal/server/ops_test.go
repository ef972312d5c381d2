package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

func TestOperationsSurface(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		for _, p := range []string{"/health", "/internal-backstage/health"} {
			if got := h.Do(t, "GET", p, "", nil).Want(t, 200).Map(t); got["health"] != "GOOD" {
				t.Fatalf("%s: %v", p, got)
			}
		}
		seedFeature(t, h, "default", "f1", "release")
		res := h.Do(t, "GET", "/internal-backstage/prometheus", "", nil).Want(t, 200)
		body := string(res.Body)
		for _, want := range []string{"feature_toggles_total 1", "bunting_revision_id ", "go_goroutines ", "process_cpu_seconds_total"} {
			if !strings.Contains(body, want) {
				t.Errorf("prometheus output lacks %q", want)
			}
		}
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
			t.Errorf("prometheus content type %q", res.Header.Get("Content-Type"))
		}
		h.Do(t, "POST", "/internal-backstage/prometheus", "", nil).WantError(t, 404, "NotFoundError")
	})
}

func TestOpenAPIDocument(t *testing.T) {
	t.Parallel()
	h := servertest.Start(t, servertest.NewSQLite(t))
	res := h.Do(t, "GET", "/docs/openapi.json", "", nil).Want(t, 200)
	var doc struct {
		OpenAPI string                               `json:"openapi"`
		Paths   map[string]map[string]map[string]any `json:"paths"`
		Comps   struct {
			Schemas map[string]any
		} `json:"components"`
	}
	if err := json.Unmarshal(res.Body, &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi version %q", doc.OpenAPI)
	}
	nine := [][2]string{
		{"post", "/api/admin/projects/{projectId}/features/{featureName}/environments/{environment}/off"},
		{"post", "/api/admin/events/search"},
		{"get", "/api/admin/events"},
		{"get", "/api/admin/projects"},
		{"put", "/api/admin/strategies/{name}"},
		{"get", "/api/admin/user/profile"},
		{"get", "/api/admin/state/export"},
		{"get", "/api/admin/projects/{projectId}/features/{featureName}/parents"},
		{"get", "/api/admin/feature-types"},
	}
	for _, op := range nine {
		if doc.Paths[op[1]][op[0]] == nil {
			t.Errorf("operation %s %s is not documented", op[0], op[1])
		}
	}
	// Every $ref resolves, and every documented operation of this part is routed.
	refs := map[string]bool{}
	collectRefs(doc.Paths, refs)
	collectRefs(doc.Comps.Schemas, refs)
	for ref := range refs {
		name := strings.TrimPrefix(ref, "#/components/schemas/")
		if doc.Comps.Schemas[name] == nil {
			t.Errorf("unresolved $ref %s", ref)
		}
	}
	ids := map[string]string{}
	for path, item := range doc.Paths {
		for method, op := range item {
			id, _ := op["operationId"].(string)
			if id == "" || ids[id] != "" {
				t.Errorf("%s %s: operationId %q missing or shared with %s", method, path, id, ids[id])
			}
			ids[id] = method + " " + path
		}
	}
	for path, item := range doc.Paths {
		if strings.Contains(path, "/environments/{environment}/") || strings.HasSuffix(path, "/parents") {
			continue // the core part's routes
		}
		for method := range item {
			concrete := strings.NewReplacer("{", "", "}", "").Replace(path)
			r := h.Do(t, strings.ToUpper(method), concrete, h.AdminToken, nil)
			if r.Status == 404 && strings.Contains(string(r.Body), "is not available") {
				t.Errorf("%s %s is documented but not routed", method, path)
			}
		}
	}

	// The interactive page and its assets come from the binary.
	page := h.Do(t, "GET", "/docs/openapi", "", nil).Want(t, 200)
	if !strings.Contains(string(page.Body), "/docs/openapi.json") || !strings.Contains(page.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("docs page: %s", page.Body)
	}
	asset := h.Do(t, "GET", "/docs/openapi/swagger-ui-bundle.js", "", nil)
	if asset.Status != 200 || len(asset.Body) < 10000 {
		t.Fatalf("asset: %d, %d bytes", asset.Status, len(asset.Body))
	}
	resp, err := http.Get(h.URL + "/docs/openapi/")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("docs index: %d", resp.StatusCode)
	}
}

func collectRefs(v any, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok && k == "$ref" {
				out[s] = true
			}
			collectRefs(val, out)
		}
	case map[string]map[string]map[string]any:
		for _, item := range x {
			for _, op := range item {
				collectRefs(op, out)
			}
		}
	case []any:
		for _, e := range x {
			collectRefs(e, out)
		}
	}
}
