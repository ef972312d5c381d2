package server_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// seedBatch gives the default project, in development, flags using what
// an export carries: a strategy with a constraint on a context field with
// legal values, a segment, strategy variants, environment variants, a tag,
// a dependency, a disabled flag.
func seedBatch(t *testing.T, h *servertest.Harness) {
	t.Helper()
	a := h.AdminToken
	h.Do(t, "POST", "/api/admin/context", a, map[string]any{"name": "region", "legalValues": []any{map[string]any{"value": "eu"}, map[string]any{"value": "us"}}}).Want(t, 201)
	seg := h.Do(t, "POST", "/api/admin/segments", a, map[string]any{"name": "beta",
		"constraints": []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"u1", "u2"}}}}).Want(t, 201).Map(t)
	for _, name := range []string{"checkout", "search", "checkout-child"} {
		h.Do(t, "POST", "/api/admin/projects/default/features", a, map[string]any{"name": name, "description": "about " + name}).Want(t, 201)
	}
	base := "/api/admin/projects/default/features/checkout/environments/development"
	h.Do(t, "POST", base+"/strategies", a, map[string]any{"name": "flexibleRollout", "title": "half",
		"parameters":  map[string]any{"rollout": "50", "stickiness": "default", "groupId": "checkout"},
		"constraints": []any{map[string]any{"contextName": "region", "operator": "IN", "values": []string{"eu"}}},
		"segments":    []any{seg["id"]},
		"variants":    []any{map[string]any{"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "default"}}}).Want(t, 200)
	h.Do(t, "POST", base+"/strategies", a, map[string]any{"name": "default", "constraints": []any{map[string]any{"contextName": "userId", "operator": "STR_STARTS_WITH", "values": []string{"admin-"}}}}).Want(t, 200)
	h.Do(t, "POST", base+"/on", a, nil).Want(t, 200)
	h.Do(t, "PUT", "/api/admin/projects/default/features/search/environments/development/variants", a, []any{
		map[string]any{"name": "a", "weight": 500, "weightType": "variable", "stickiness": "default"},
		map[string]any{"name": "b", "weight": 500, "weightType": "variable", "stickiness": "default", "payload": map[string]any{"type": "string", "value": "x"}}}).Want(t, 200)
	h.Do(t, "POST", "/api/admin/features/checkout/tags", a, map[string]any{"type": "simple", "value": "web"}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/projects/default/features/checkout-child/dependencies", a, map[string]any{"feature": "checkout", "variants": []string{"blue"}}).Want(t, 200)
	h.Do(t, "POST", "/api/admin/projects/default/features/checkout-child/environments/development/on", a, nil).Want(t, 200)
}

// sdkView is what an SDK reads for the token's environment, without what
// differs by design between two copies of a flag: strategy ids and the
// project.
func sdkView(t *testing.T, h *servertest.Harness, token string) string {
	t.Helper()
	res, p := clientFeatures(t, h, token, "")
	res.Want(t, 200)
	for _, f := range p.Features {
		delete(f, "project")
		if sts, ok := f["strategies"].([]any); ok {
			for _, st := range sts {
				delete(st.(map[string]any), "id")
			}
		}
	}
	slices.SortFunc(p.Features, func(a, b map[string]any) int { return strings.Compare(a["name"].(string), b["name"].(string)) })
	b, err := json.Marshal(map[string]any{"features": p.Features, "segments": p.Segments})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func clientToken(t *testing.T, h *servertest.Harness, env string, project string) string {
	t.Helper()
	created := h.Do(t, "POST", "/api/admin/api-tokens", h.AdminToken, map[string]any{"tokenName": "sdk-" + env + "-" + project, "type": "client",
		"environment": env, "projects": []string{project}}).Want(t, 201).Map(t)
	return created["secret"].(string)
}

type batchValidation struct {
	Errors, Warnings, Permissions []struct {
		Message       string
		AffectedItems []string
	}
}

// TestFeaturesBatchRoundTrip exports a project's flags from development
// and imports them into another project's production: SDKs read the same
// configuration from both, and importing again changes nothing.
func TestFeaturesBatchRoundTrip(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		a := h.AdminToken
		seedBatch(t, h)
		h.Do(t, "POST", "/api/admin/projects", a, map[string]any{"id": "copy", "name": "Copy"}).Want(t, 201)
		var doc map[string]any
		h.Do(t, "POST", "/api/admin/features-batch/export", a, map[string]any{"project": "default", "environment": "development"}).Want(t, 200).JSON(t, &doc)
		for _, key := range []string{"features", "featureStrategies", "featureEnvironments", "contextFields", "featureTags", "segments", "tagTypes", "dependencies"} {
			if _, ok := doc[key].([]any); !ok {
				t.Fatalf("export has no %s list: %v", key, doc)
			}
		}
		if n := len(doc["features"].([]any)); n != 3 {
			t.Fatalf("exported %d flags, want 3: %v", n, doc["features"])
		}
		if n := len(doc["featureStrategies"].([]any)); n != 3 {
			t.Fatalf("exported %d strategies, want 3 (checkout-child got a default one when switched on)", n)
		}
		if cf := doc["contextFields"].([]any); !slices.ContainsFunc(cf, func(c any) bool { return c.(map[string]any)["name"] == "region" }) {
			t.Fatalf("context fields: %v", cf)
		}
		if seg := doc["segments"].([]any); len(seg) != 1 || seg[0].(map[string]any)["name"] != "beta" {
			t.Fatalf("segments: %v", seg)
		}
		fe := doc["featureEnvironments"].([]any)[0].(map[string]any)
		if fe["name"] != fe["featureName"] {
			t.Fatalf("a feature environment's name is its flag's, as Unleash writes it: %v", fe)
		}

		want := sdkView(t, h, clientToken(t, h, "development", "default"))
		// Flag names are global: the flags cannot go to another project
		// while they exist here.
		req := map[string]any{"project": "copy", "environment": "production", "data": doc}
		var v batchValidation
		h.Do(t, "POST", "/api/admin/features-batch/validate", a, req).Want(t, 200).JSON(t, &v)
		if len(v.Errors) != 1 || !strings.Contains(v.Errors[0].Message, "outside of project copy") || !slices.Contains(v.Errors[0].AffectedItems, "checkout (in project default)") {
			t.Fatalf("validate into another project: %+v", v)
		}
		h.Do(t, "POST", "/api/admin/features-batch/import", a, req).WantError(t, 400, "ValidationError", "checkout (in project default)")

		// Into another environment of the same project.
		same := map[string]any{"project": "default", "environment": "production", "data": doc}
		h.Do(t, "POST", "/api/admin/features-batch/validate", a, same).Want(t, 200).JSON(t, &v)
		if len(v.Errors) != 0 || len(v.Permissions) != 0 || len(v.Warnings) != 1 || len(v.Warnings[0].AffectedItems) != 3 {
			t.Fatalf("validate into production: %+v", v)
		}
		h.Do(t, "POST", "/api/admin/features-batch/import", a, same).Want(t, 200)
		if got := sdkView(t, h, clientToken(t, h, "production", "default")); got != want {
			t.Fatalf("production after import:\n%s\nwant development's:\n%s", got, want)
		}

		// Importing the same document again changes nothing.
		var events struct{ Events []map[string]any }
		h.Do(t, "GET", "/api/admin/events", a, nil).Want(t, 200).JSON(t, &events)
		before := len(events.Events)
		h.Do(t, "POST", "/api/admin/features-batch/import", a, same).Want(t, 200)
		h.Do(t, "GET", "/api/admin/events", a, nil).Want(t, 200).JSON(t, &events)
		if n := len(events.Events) - before; n != 1 || events.Events[0]["type"] != "features-imported" {
			t.Fatalf("importing the same document again wrote %d events (newest %v), want only features-imported", n, events.Events[0])
		}

		// Into another project, once the flags are gone from this one.
		for _, name := range []string{"checkout-child", "checkout", "search"} {
			h.Do(t, "DELETE", "/api/admin/projects/default/features/"+name, a, nil).Want(t, 202)
			h.Do(t, "DELETE", "/api/admin/archive/"+name, a, nil).Want(t, 200)
		}
		h.Do(t, "POST", "/api/admin/features-batch/import", a, req).Want(t, 200)
		if got := sdkView(t, h, clientToken(t, h, "production", "copy")); got != want {
			t.Fatalf("copy's production after import:\n%s\nwant default's development:\n%s", got, want)
		}
	})
}

// TestFeaturesBatchBadInput: bad bodies are 400 naming the problem, and a
// failing item leaves nothing of the import behind.
func TestFeaturesBatchBadInput(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		a := h.AdminToken
		for _, route := range []string{"export", "validate", "import"} {
			path := "/api/admin/features-batch/" + route
			h.Do(t, "POST", path, a, `{`).WantError(t, 400, "ValidationError")
			h.Do(t, "POST", path, a, `[]`).WantError(t, 400, "ValidationError")
			h.Do(t, "POST", path, a, `{"environment": 7}`).WantError(t, 400, "ValidationError", "environment")
			h.Do(t, "POST", path, "", `{}`).WantError(t, 401, "AuthenticationRequired")
		}
		h.Do(t, "POST", "/api/admin/features-batch/export", a, `{}`).WantError(t, 400, "ValidationError", "environment")
		h.Do(t, "POST", "/api/admin/features-batch/validate", a, `{}`).WantError(t, 400, "ValidationError", "project")
		h.Do(t, "POST", "/api/admin/features-batch/export", a, map[string]any{"environment": "nowhere"}).WantError(t, 400, "ValidationError", "nowhere")
		for _, body := range []map[string]any{
			{"environment": "development", "data": map[string]any{"features": []any{}}},
			{"project": "default", "data": map[string]any{"features": []any{}}},
			{"project": "default", "environment": "development"},
			{"project": "nope", "environment": "development", "data": map[string]any{"features": []any{}}},
			{"project": "default", "environment": "nowhere", "data": map[string]any{"features": []any{}}},
			{"project": "default", "environment": "development", "data": map[string]any{"features": []any{map[string]any{"name": ""}}}},
			{"project": "default", "environment": "development", "data": map[string]any{"features": "x"}},
		} {
			h.Do(t, "POST", "/api/admin/features-batch/validate", a, body).WantError(t, 400, "ValidationError")
			h.Do(t, "POST", "/api/admin/features-batch/import", a, body).WantError(t, 400, "ValidationError")
		}

		// Validate reports what stops an import; import refuses it whole.
		doc := map[string]any{
			"features": []any{map[string]any{"name": "fine"}, map[string]any{"name": "broken"}, map[string]any{"name": "fine"}},
			"featureStrategies": []any{
				map[string]any{"name": "noSuchStrategy", "featureName": "broken"},
			},
		}
		req := map[string]any{"project": "default", "environment": "development", "data": doc}
		var v batchValidation
		h.Do(t, "POST", "/api/admin/features-batch/validate", a, req).Want(t, 200).JSON(t, &v)
		if len(v.Errors) != 2 || v.Errors[0].AffectedItems[0] != "noSuchStrategy" || v.Errors[1].AffectedItems[0] != "fine" {
			t.Fatalf("validate: %+v", v)
		}
		h.Do(t, "POST", "/api/admin/features-batch/import", a, req).WantError(t, 400, "ValidationError", "noSuchStrategy")

		// A rule only the domain operation knows: validate rehearses the
		// import, and the import leaves nothing when an item fails.
		doc = map[string]any{
			"features": []any{map[string]any{"name": "fine"}, map[string]any{"name": "broken"}},
			"featureStrategies": []any{
				map[string]any{"name": "default", "featureName": "fine"},
				map[string]any{"name": "default", "featureName": "broken", "constraints": []any{map[string]any{"contextName": "userId", "operator": "LIKE", "values": []string{"x"}}}},
			},
			"featureEnvironments": []any{map[string]any{"name": "fine", "featureName": "fine", "enabled": true}},
		}
		req["data"] = doc
		h.Do(t, "POST", "/api/admin/features-batch/validate", a, req).Want(t, 200).JSON(t, &v)
		if len(v.Errors) != 1 || !strings.Contains(v.Errors[0].Message, "broken") || !strings.Contains(v.Errors[0].Message, "operator") {
			t.Fatalf("validate: %+v", v)
		}
		h.Do(t, "POST", "/api/admin/features-batch/import", a, req).WantError(t, 400, "ValidationError", "broken", "operator")
		h.Do(t, "GET", "/api/admin/projects/default/features/fine", a, nil).WantError(t, 404, "NotFoundError")
	})
}

// TestFeaturesBatchPermissions: export needs only a reader, import needs
// each item's permission (Unleash's list), and validate names what is
// missing.
func TestFeaturesBatchPermissions(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		seedBatch(t, h)
		viewer := accountToken(t, h, "viewer", 3)
		var doc map[string]any
		h.Do(t, "POST", "/api/admin/features-batch/export", viewer, map[string]any{"tag": "web", "environment": "development"}).Want(t, 200).JSON(t, &doc)
		if n := len(doc["features"].([]any)); n != 1 {
			t.Fatalf("export by tag: %d flags", n)
		}
		doc["features"].([]any)[0].(map[string]any)["name"] = "copied"
		for _, key := range []string{"featureStrategies", "featureEnvironments", "featureTags"} {
			for _, it := range doc[key].([]any) {
				it.(map[string]any)["featureName"] = "copied"
				it.(map[string]any)["name"] = map[bool]any{true: "copied", false: it.(map[string]any)["name"]}[key == "featureEnvironments"]
			}
		}
		doc["dependencies"] = []any{}
		req := map[string]any{"project": "default", "environment": "development", "data": doc}
		var v batchValidation
		h.Do(t, "POST", "/api/admin/features-batch/validate", viewer, req).Want(t, 200).JSON(t, &v)
		if len(v.Permissions) != 1 || !slices.Contains(v.Permissions[0].AffectedItems, "Create flags") {
			t.Fatalf("validate as a viewer: %+v", v)
		}
		h.Do(t, "POST", "/api/admin/features-batch/import", viewer, req).WantError(t, 403, "NoAccessError", "Create flags")
		h.Do(t, "POST", "/api/admin/features-batch/import", h.ClientToken, req).WantError(t, 403, "NoAccessError")
		editor := accountToken(t, h, "editor", 2)
		h.Do(t, "POST", "/api/admin/features-batch/validate", editor, req).Want(t, 200).JSON(t, &v)
		if len(v.Permissions) != 0 || len(v.Errors) != 0 {
			t.Fatalf("validate as an editor: %+v", v)
		}
		h.Do(t, "POST", "/api/admin/features-batch/import", editor, req).Want(t, 200)
		h.Do(t, "GET", "/api/admin/projects/default/features/copied", viewer, nil).Want(t, 200)
	})
}

// TestFeaturesBatchReplacesStrategies: a switched-on flag whose strategies
// the document changes ends with exactly the document's strategies and
// stays on, and one the document switches off is off.
func TestFeaturesBatchReplacesStrategies(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		a := h.AdminToken
		for _, name := range []string{"kept-on", "turned-off"} {
			h.Do(t, "POST", "/api/admin/projects/default/features", a, map[string]any{"name": name}).Want(t, 201)
			h.Do(t, "POST", "/api/admin/projects/default/features/"+name+"/environments/development/strategies", a,
				map[string]any{"name": "flexibleRollout", "parameters": map[string]any{"rollout": "10", "stickiness": "default", "groupId": name}}).Want(t, 200)
			h.Do(t, "POST", "/api/admin/projects/default/features/"+name+"/environments/development/on", a, nil).Want(t, 200)
		}
		strategy := func(flag, rollout string) map[string]any {
			return map[string]any{"name": "flexibleRollout", "featureName": flag, "parameters": map[string]any{"rollout": rollout, "stickiness": "default", "groupId": flag}}
		}
		req := map[string]any{"project": "default", "environment": "development", "data": map[string]any{
			"features":          []any{map[string]any{"name": "kept-on"}, map[string]any{"name": "turned-off"}},
			"featureStrategies": []any{strategy("kept-on", "90"), strategy("kept-on", "20"), strategy("turned-off", "10")},
			"featureEnvironments": []any{map[string]any{"name": "kept-on", "featureName": "kept-on", "enabled": true},
				map[string]any{"name": "turned-off", "featureName": "turned-off", "enabled": false}},
		}}
		h.Do(t, "POST", "/api/admin/features-batch/import", a, req).Want(t, 200)
		_, p := clientFeatures(t, h, h.ClientToken, "")
		got := map[string]string{}
		for _, f := range p.Features {
			var rollouts []string
			for _, st := range f["strategies"].([]any) {
				rollouts = append(rollouts, st.(map[string]any)["parameters"].(map[string]any)["rollout"].(string))
			}
			got[f["name"].(string)] = fmt.Sprintf("%v %v", f["enabled"], rollouts)
		}
		if got["kept-on"] != "true [90 20]" || got["turned-off"] != "false [10]" {
			t.Fatalf("after import: %v", got)
		}
	})
}

// TestImportBodyLimit: the routes that take whole documents of flags
// accept bodies up to IMPORT_BODY_LIMIT, larger than BODY_LIMIT (a
// thousand flags are about 300 kB; BODY_LIMIT's 100 kB held some 350);
// past it they answer 413 naming the option, and every other route keeps
// BODY_LIMIT.
func TestImportBodyLimit(t *testing.T) {
	t.Parallel()
	document := func(n int) map[string]any {
		features := make([]map[string]any, n)
		for i := range features {
			features[i] = map[string]any{"name": fmt.Sprintf("bulk-%04d", i), "type": "release", "project": "default",
				"description": strings.Repeat("a flag kept in git with a description of some length. ", 4)}
		}
		return map[string]any{"features": features, "featureStrategies": []any{}, "featureEnvironments": []any{},
			"contextFields": []any{}, "featureTags": []any{}, "segments": []any{}, "tagTypes": []any{}, "dependencies": []any{}}
	}
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		a := h.AdminToken
		req := map[string]any{"project": "default", "environment": "development", "data": document(600)}
		body, _ := json.Marshal(req)
		if len(body) <= 102400 || len(body) > 400_000 {
			t.Fatalf("the document is %d bytes, want between BODY_LIMIT and IMPORT_BODY_LIMIT", len(body))
		}
		h.Do(t, "POST", "/api/admin/features-batch/validate", a, body).Want(t, 200)
		h.Do(t, "POST", "/api/admin/features-batch/import", a, body).Want(t, 200)
		if got := h.Do(t, "GET", "/api/admin/projects/default/features", a, nil).Want(t, 200).Map(t)["features"].([]any); len(got) < 600 {
			t.Fatalf("%d flags after importing 600", len(got))
		}
		big, _ := json.Marshal(map[string]any{"project": "default", "environment": "development", "data": document(1500)})
		h.Do(t, "POST", "/api/admin/features-batch/import", a, big).WantError(t, 413, "ContentTooLargeError", "IMPORT_BODY_LIMIT")
		h.Do(t, "POST", "/api/admin/projects", a, body).WantError(t, 413, "ContentTooLargeError", "BODY_LIMIT")
	}, func(c *server.Config) { c.ImportBodyLimit = 400_000 })
}
