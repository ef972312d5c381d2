package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

// seedState gives the server one of everything the export covers.
func seedState(t *testing.T, h *servertest.Harness) {
	t.Helper()
	seedFeature(t, h, "default", "checkout", "release")
	seedFeature(t, h, "default", "search", "experiment")
	h.Do(t, "POST", "/api/admin/strategies", h.AdminToken, map[string]any{"name": "byCountry", "parameters": []map[string]any{{"name": "c", "type": "list"}}}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/features/checkout/tags", h.AdminToken, map[string]any{"type": "simple", "value": "web"}).Want(t, 201)
	ctx := context.Background()
	err := h.Store.Tx(ctx, func(tx *store.Tx) error {
		segID, err := tx.InsertSegment(store.Segment{Name: "beta-users", Constraints: []engine.Constraint{{ContextName: "userId", Operator: "IN", Values: []string{"u1"}}}, CreatedAt: tx.Now()})
		if err != nil {
			return err
		}
		st := store.Strategy{ID: "0b6c7f2e-0000-4000-8000-000000000001", Name: "flexibleRollout", FeatureName: "checkout", Environment: "development",
			Parameters: map[string]string{"rollout": "50", "stickiness": "default", "groupId": "checkout"}, Segments: []int{segID}, CreatedAt: tx.Now()}
		if err := tx.InsertStrategy(st); err != nil {
			return err
		}
		if _, err := tx.SetFeatureEnvironmentEnabled("checkout", "development", true); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "feature-strategy-add", Actor: store.Actor{Name: "test"}, FeatureName: "checkout", Project: "default", Environment: "development", Data: st})
	})
	if err != nil {
		t.Fatal(err)
	}
}

type exportDoc struct {
	Version                 int
	Features                []map[string]any
	Strategies              []map[string]any
	Tags                    []map[string]any
	TagTypes                []map[string]any
	FeatureTags             []map[string]any
	Projects                []map[string]any
	FeatureStrategies       []map[string]any
	FeatureEnvironments     []map[string]any
	Environments            []map[string]any
	Segments                []map[string]any
	FeatureStrategySegments []map[string]any
}

func TestStateExport(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		seedState(t, h)
		var doc exportDoc
		res := h.Do(t, "GET", "/api/admin/state/export", h.AdminToken, nil).Want(t, 200)
		res.JSON(t, &doc)
		if res.Header.Get("Content-Disposition") != "" || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("headers: %v", res.Header)
		}
		if doc.Version != 4 || len(doc.Features) != 2 || len(doc.Strategies) != 1 || doc.Strategies[0]["name"] != "byCountry" ||
			len(doc.Projects) != 1 || len(doc.Environments) != 2 || len(doc.TagTypes) != 1 || len(doc.Tags) != 1 ||
			len(doc.FeatureTags) != 1 || len(doc.FeatureStrategies) != 1 || len(doc.FeatureEnvironments) != 4 ||
			len(doc.Segments) != 1 || len(doc.FeatureStrategySegments) != 1 {
			t.Fatalf("export: %s", res.Body)
		}
		fs := doc.FeatureStrategies[0]
		if fs["featureName"] != "checkout" || fs["environment"] != "development" || fs["name"] != "flexibleRollout" || fs["projectId"] != "default" {
			t.Fatalf("feature strategy: %v", fs)
		}
		if ft := doc.FeatureTags[0]; ft["tagType"] != "simple" || ft["tagValue"] != "web" || ft["featureName"] != "checkout" {
			t.Fatalf("feature tag: %v", ft)
		}
		if env := doc.Environments[0]; env["name"] != "development" || env["enabledToggleCount"] != float64(1) || env["protected"] != false {
			t.Fatalf("environment: %v", env)
		}

		// Include flags.
		h.Do(t, "GET", "/api/admin/state/export?featureToggles=false&tags=0&strategies=FALSE&projects=no&environments=true", h.AdminToken, nil).Want(t, 200).JSON(t, &doc)
		if len(doc.Features) != 0 || len(doc.FeatureStrategies) != 0 || len(doc.FeatureEnvironments) != 0 || len(doc.FeatureTags) != 0 ||
			len(doc.Tags) != 0 || len(doc.TagTypes) != 0 || len(doc.Strategies) != 0 || len(doc.Projects) != 0 || len(doc.Environments) != 2 ||
			len(doc.Segments) != 1 {
			t.Fatalf("filtered export: %+v", doc)
		}
		// YAML and download.
		res = h.Do(t, "GET", "/api/admin/state/export?format=yaml&download=true", h.AdminToken, nil).Want(t, 200)
		cd := res.Header.Get("Content-Disposition")
		if !strings.HasPrefix(res.Header.Get("Content-Type"), "text/yaml") || !strings.HasPrefix(cd, `attachment; filename="export-`) || !strings.HasSuffix(cd, `.yml"`) {
			t.Fatalf("yaml headers: %v", res.Header)
		}
		var y map[string]any
		if err := yaml.Unmarshal(res.Body, &y); err != nil || y["version"] != 4 || len(y["features"].([]any)) != 2 {
			t.Fatalf("yaml body (%v): %s", err, res.Body)
		}
		res = h.Do(t, "GET", "/api/admin/state/export?download=1", h.AdminToken, nil).Want(t, 200)
		if !strings.HasSuffix(res.Header.Get("Content-Disposition"), `.json"`) {
			t.Fatalf("json download: %v", res.Header)
		}
		h.Do(t, "GET", "/api/admin/state/export?format=xml", h.AdminToken, nil).WantError(t, 400, "ValidationError", "format")
		h.Do(t, "GET", "/api/admin/state/export", h.ClientToken, nil).WantError(t, 403, "NoAccessError")
		h.Do(t, "GET", "/api/admin/state/export", accountToken(t, h, "ed", 2), nil).WantError(t, 403, "NoAccessError", "ADMIN")
		h.Do(t, "GET", "/api/admin/state/export", "", nil).WantError(t, 401, "AuthenticationRequired")
	})
}

func TestStateImport(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		seedState(t, h)
		exported := h.Do(t, "GET", "/api/admin/state/export", h.AdminToken, nil).Want(t, 200).Body
		var before exportDoc
		if err := json.Unmarshal(exported, &before); err != nil {
			t.Fatal(err)
		}

		// Drop everything and import it back.
		h.Do(t, "POST", "/api/admin/state/import?drop=true", h.AdminToken, exported).Want(t, 202)
		var after exportDoc
		h.Do(t, "GET", "/api/admin/state/export", h.AdminToken, nil).Want(t, 200).JSON(t, &after)
		if len(after.Features) != 2 || len(after.FeatureStrategies) != 1 || len(after.FeatureTags) != 1 || len(after.Strategies) != 1 ||
			len(after.Segments) != 1 || len(after.FeatureStrategySegments) != 1 {
			t.Fatalf("after import: %+v", after)
		}
		if after.FeatureStrategies[0]["id"] != before.FeatureStrategies[0]["id"] || after.FeatureStrategySegments[0]["segmentId"] != before.Segments[0]["id"] {
			t.Fatalf("strategy or segment link changed: %v / %v", after.FeatureStrategies[0], after.FeatureStrategySegments)
		}
		enabled := 0
		for _, fe := range after.FeatureEnvironments {
			if fe["enabled"] == true {
				enabled++
			}
		}
		if enabled != 1 {
			t.Fatalf("feature environments: %v", after.FeatureEnvironments)
		}
		for typ, want := range map[string]int{"drop-features": 1, "drop-strategies": 1, "drop-tags": 1, "drop-tag-types": 1, "drop-feature-tags": 1,
			"feature-import": 2, "strategy-import": 1, "tag-type-import": 1, "tag-import": 1, "feature-tag-import": 1} {
			if evs := eventsOfType(t, h, typ); len(evs) != want {
				t.Errorf("%s: %d events, want %d", typ, len(evs), want)
			}
		}

		// keep=true (default) leaves existing flags alone; keep=false overwrites.
		changed := strings.Replace(string(exported), `"type":"experiment"`, `"type":"operational"`, 1)
		h.Do(t, "POST", "/api/admin/state/import", h.AdminToken, changed).Want(t, 202)
		if f := featureType(t, h, "search"); f != "experiment" {
			t.Fatalf("keep=true changed the flag: %s", f)
		}
		h.Do(t, "POST", "/api/admin/state/import?keep=false", h.AdminToken, changed).Want(t, 202)
		if f := featureType(t, h, "search"); f != "operational" {
			t.Fatalf("keep=false did not update the flag: %s", f)
		}

		// YAML import of a new flag.
		y := "version: 4\nfeatures:\n  - name: from-yaml\n    project: default\n    type: kill-switch\nfeatureEnvironments:\n  - featureName: from-yaml\n    environment: production\n    enabled: true\n"
		h.Do(t, "POST", "/api/admin/state/import", h.AdminToken, y, "Content-Type", "text/yaml").Want(t, 202)
		if f := featureType(t, h, "from-yaml"); f != "kill-switch" {
			t.Fatalf("yaml import: %s", f)
		}

		// Errors leave nothing behind.
		bad := `{"version":4,"features":[{"name":"orphan","project":"nope"}]}`
		h.Do(t, "POST", "/api/admin/state/import", h.AdminToken, bad).WantError(t, 400, "ValidationError", "nope")
		h.Do(t, "POST", "/api/admin/state/import?drop=true", h.AdminToken, bad).WantError(t, 400, "ValidationError", "nope")
		if f := featureType(t, h, "checkout"); f != "release" {
			t.Fatalf("failed drop import changed data: %s", f)
		}
		h.Do(t, "POST", "/api/admin/state/import", h.AdminToken, `{"features":[{"name":"a b"}]}`).WantError(t, 400, "ValidationError", "features[0].name")
		h.Do(t, "POST", "/api/admin/state/import", h.AdminToken, `{"featureStrategies":[],"features":[{"name":"x1"}],"featureEnvironments":[{"featureName":"x1","environment":"mars"}]}`).
			WantError(t, 400, "ValidationError", "mars")
		h.Do(t, "POST", "/api/admin/state/import", h.AdminToken, `{"features":`).WantError(t, 400, "ValidationError")
		h.Do(t, "POST", "/api/admin/state/import", h.AdminToken, "a: [", "Content-Type", "text/yaml").WantError(t, 400, "ValidationError", "YAML")
		h.Do(t, "POST", "/api/admin/state/import", h.AdminToken, "x", "Content-Type", "text/plain").WantError(t, 415, "ContentTypeError")
		h.Do(t, "POST", "/api/admin/state/import", accountToken(t, h, "ed", 2), "{}").WantError(t, 403, "NoAccessError", "ADMIN")
		if _, err := h.Store.Q(context.Background()).Feature("x1"); err == nil {
			t.Fatal("a failed import left a flag behind")
		}
	})
}

func featureType(t *testing.T, h *servertest.Harness, name string) string {
	t.Helper()
	f, err := h.Store.Q(context.Background()).Feature(name)
	if err != nil {
		t.Fatalf("feature %s: %v", name, err)
	}
	return f.Type
}
