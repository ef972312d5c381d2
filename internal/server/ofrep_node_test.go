package server_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// seedOFREPFlags creates one flag of each OpenFeature type in development.
func seedOFREPFlags(t *testing.T, h *servertest.Harness) {
	t.Helper()
	dev := "development"
	createFlag(t, h, "of-bool")
	h.Do(t, "POST", envPath("of-bool", dev)+"/on", h.AdminToken, nil).Want(t, 200)
	createFlag(t, h, "of-targeted")
	h.Do(t, "POST", envPath("of-targeted", dev)+"/strategies", h.AdminToken, map[string]any{"name": "default",
		"constraints": []any{map[string]any{"contextName": "plan", "operator": "IN", "values": []string{"pro"}}}}).Want(t, 200)
	h.Do(t, "POST", envPath("of-targeted", dev)+"/on", h.AdminToken, nil).Want(t, 200)
	for _, f := range []struct{ name, variant, typ, value string }{
		{"of-string", "blue", "string", "b"}, {"of-number", "answer", "number", "42"},
		{"of-object", "obj", "json", `{"limit":3,"tags":["a"]}`}, {"of-off", "red", "string", "r"},
	} {
		createFlag(t, h, f.name)
		h.Do(t, "POST", envPath(f.name, dev)+"/strategies", h.AdminToken, map[string]any{"name": "flexibleRollout",
			"parameters": map[string]any{"rollout": "100", "stickiness": "default", "groupId": f.name},
			"variants": []any{map[string]any{"name": f.variant, "weight": 1000, "weightType": "variable", "stickiness": "default",
				"payload": map[string]any{"type": f.typ, "value": f.value}}}}).Want(t, 200)
		if f.name != "of-off" {
			h.Do(t, "POST", envPath(f.name, dev)+"/on", h.AdminToken, nil).Want(t, 200)
		}
	}
}

// TestOpenFeatureNodeProvider runs OpenFeature's Node server SDK with
// @openfeature/ofrep-provider 0.1.3 against the server: every flag type,
// a targeted flag, an off flag returning the caller's default (the
// provider finds no value of the default's type), an unknown flag and a
// type mismatch.
func TestOpenFeatureNodeProvider(t *testing.T) {
	t.Parallel()
	testutil.Node(t)
	modules := testutil.NodeModules(t, "@openfeature/ofrep-provider", "@openfeature/server-sdk")
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		seedOFREPFlags(t, h)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := nodeCommand(ctx, modules, "ofrep.js", h.URL, h.FrontendToken).CombinedOutput()
		if err != nil {
			t.Fatalf("node ofrep.js: %v\n%s", err, out)
		}
		var got map[string]map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("output: %s", out)
		}
		want := map[string]map[string]any{
			"bool":         {"value": true, "variant": "enabled", "reason": "STATIC", "flagMetadata": map[string]any{}},
			"targetedPro":  {"value": true, "variant": "enabled", "reason": "TARGETING_MATCH", "flagMetadata": map[string]any{}},
			"targetedFree": {"value": false, "variant": "disabled", "reason": "TARGETING_MATCH", "flagMetadata": map[string]any{}},
			"string":       {"value": "b", "variant": "blue", "reason": "SPLIT", "flagMetadata": map[string]any{"enabled": true, "payloadType": "string"}},
			"number":       {"value": 42.0, "variant": "answer", "reason": "SPLIT", "flagMetadata": map[string]any{"enabled": true, "payloadType": "number"}},
			"object": {"value": map[string]any{"limit": 3.0, "tags": []any{"a"}}, "variant": "obj", "reason": "SPLIT",
				"flagMetadata": map[string]any{"enabled": true, "payloadType": "json"}},
			// No value of the default's type: the SDK hands back the
			// default (the provider's error code varies: not compared).
			"off":      {"value": "fallback", "reason": "ERROR", "flagMetadata": map[string]any{}},
			"unknown":  {"value": "fallback", "reason": "ERROR", "errorCode": "FLAG_NOT_FOUND", "flagMetadata": map[string]any{}},
			"mismatch": {"value": true, "reason": "ERROR", "errorCode": "TYPE_MISMATCH", "flagMetadata": map[string]any{}},
		}
		if got["off"]["errorCode"] == nil {
			t.Errorf("the off flag came back without an error code: %v", got["off"])
		}
		delete(got["off"], "errorCode")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("OpenFeature details (-want +got):\n%s\n%s", diff, out)
		}
	})
}
