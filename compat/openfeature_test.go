package compat_test

import (
	"context"
	"testing"

	"github.com/open-feature/go-sdk-contrib/providers/ofrep"
	"github.com/open-feature/go-sdk/openfeature"

	"github.com/bunting-flags/bunting/compat/harness"
)

// TestOpenFeatureGoProvider evaluates Bunting server's flags through
// OpenFeature's Go SDK with its generic OFREP provider
// (github.com/open-feature/go-sdk-contrib/providers/ofrep v0.1.7), with a
// frontend token as a bearer token and as X-API-Key: each flag type, a
// targeted flag, an unknown flag, an off flag returning the caller's
// default and a type mismatch reported by the SDK.
func TestOpenFeatureGoProvider(t *testing.T) {
	harness.Require(t)
	t.Parallel()
	up := harness.StartBuntingServer(t, harness.SQLite)
	admin := up.Admin()
	const env = "development"
	withVariant := func(name, variant string, payload *harness.Payload) {
		admin.CreateFeature(t, "default", name)
		admin.AddStrategy(t, "default", name, env, harness.Strategy{
			Name: "flexibleRollout", Parameters: map[string]string{"rollout": "100", "stickiness": "default", "groupId": name},
			Variants: []harness.Variant{{Name: variant, Weight: 1000, WeightType: "variable", Stickiness: "default", Payload: payload}},
		})
	}
	admin.CreateFeature(t, "default", "of-bool")
	admin.AddStrategy(t, "default", "of-bool", env, harness.Strategy{Name: "default"})
	admin.SetEnabled(t, "default", "of-bool", env, true)
	admin.CreateFeature(t, "default", "of-targeted")
	admin.AddStrategy(t, "default", "of-targeted", env, harness.Strategy{Name: "default",
		Constraints: []harness.Constraint{{ContextName: "plan", Operator: "IN", Values: []string{"pro"}}}})
	admin.SetEnabled(t, "default", "of-targeted", env, true)
	withVariant("of-string", "blue", &harness.Payload{Type: "string", Value: "b"})
	admin.SetEnabled(t, "default", "of-string", env, true)
	withVariant("of-number", "answer", &harness.Payload{Type: "number", Value: "42"})
	admin.SetEnabled(t, "default", "of-number", env, true)
	withVariant("of-object", "obj", &harness.Payload{Type: "json", Value: `{"limit":3,"tags":["a"]}`})
	admin.SetEnabled(t, "default", "of-object", env, true)
	withVariant("of-off", "red", &harness.Payload{Type: "string", Value: "r"})

	for _, auth := range []struct {
		name string
		opt  ofrep.Option
	}{
		{"bearer", ofrep.WithBearerToken(up.FrontendToken)},
		{"X-API-Key", ofrep.WithApiKeyAuth(up.FrontendToken)},
	} {
		t.Run(auth.name, func(t *testing.T) {
			domain := "bunting-" + auth.name
			if err := openfeature.SetNamedProviderAndWait(domain, ofrep.NewProvider(up.BaseURL, auth.opt)); err != nil {
				t.Fatal(err)
			}
			client := openfeature.NewClient(domain)
			ctx := context.Background()
			user := openfeature.NewEvaluationContext("user-1", map[string]any{"plan": "pro", "age": 42})

			b, err := client.BooleanValueDetails(ctx, "of-bool", false, user)
			if err != nil || !b.Value || b.Reason != openfeature.StaticReason || b.Variant != "enabled" {
				t.Errorf("of-bool: %+v %v", b, err)
			}
			b, err = client.BooleanValueDetails(ctx, "of-targeted", false, user)
			if err != nil || !b.Value || b.Reason != openfeature.TargetingMatchReason {
				t.Errorf("of-targeted, pro: %+v %v", b, err)
			}
			free := openfeature.NewEvaluationContext("user-2", map[string]any{"plan": "free"})
			b, err = client.BooleanValueDetails(ctx, "of-targeted", true, free)
			if err != nil || b.Value || b.Reason != openfeature.TargetingMatchReason {
				t.Errorf("of-targeted, free: %+v %v", b, err)
			}
			s, err := client.StringValueDetails(ctx, "of-string", "none", user)
			if err != nil || s.Value != "b" || s.Variant != "blue" || s.Reason != openfeature.SplitReason || s.FlagMetadata["payloadType"] != "string" {
				t.Errorf("of-string: %+v %v", s, err)
			}
			f, err := client.FloatValueDetails(ctx, "of-number", 0, user)
			if err != nil || f.Value != 42 {
				t.Errorf("of-number as float: %+v %v", f, err)
			}
			i, err := client.IntValueDetails(ctx, "of-number", 0, user)
			if err != nil || i.Value != 42 {
				t.Errorf("of-number as int: %+v %v", i, err)
			}
			o, err := client.ObjectValueDetails(ctx, "of-object", nil, user)
			obj, _ := o.Value.(map[string]any)
			if err != nil || obj["limit"] != float64(3) || len(obj["tags"].([]any)) != 1 {
				t.Errorf("of-object: %+v %v", o, err)
			}
			// Off: the caller's default, whatever its type.
			s, err = client.StringValueDetails(ctx, "of-off", "fallback", user)
			if err != nil || s.Value != "fallback" || s.Reason != openfeature.DisabledReason {
				t.Errorf("of-off: %+v %v", s, err)
			}
			// Unknown: the default and FLAG_NOT_FOUND.
			s, err = client.StringValueDetails(ctx, "of-unknown", "fallback", user)
			if err == nil || s.Value != "fallback" || s.ErrorCode != openfeature.FlagNotFoundCode {
				t.Errorf("of-unknown: %+v %v", s, err)
			}
			// A string flag asked as a boolean: TYPE_MISMATCH from the SDK.
			b, err = client.BooleanValueDetails(ctx, "of-string", true, user)
			if err == nil || !b.Value || b.ErrorCode != openfeature.TypeMismatchCode {
				t.Errorf("of-string as boolean: %+v %v", b, err)
			}
		})
	}
}
