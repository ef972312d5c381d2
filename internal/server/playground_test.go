package server_test

import (
	"fmt"
	"testing"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

const playgroundPath = "/api/admin/playground"

// playgroundAnswer is the part of the playground's answer the tests read.
type playgroundAnswer struct {
	Input struct {
		Environment string
		Projects    any
		Context     map[string]any
	}
	Features []struct {
		Name                          string
		ProjectID                     string
		IsEnabled                     bool
		IsEnabledInCurrentEnvironment bool
		HasUnsatisfiedDependency      bool
		Dependencies                  []struct {
			Feature       string
			Result        bool
			ParentEnabled bool
		}
		Strategies struct {
			Result any
			Data   []struct {
				ID         string
				Name       string
				Disabled   bool
				Parameters map[string]string
				Result     struct {
					Enabled          any
					EvaluationStatus string
					Variant          *struct{ Name string }
				}
				Constraints []playgroundConstraint
				Segments    []struct {
					ID          int
					Name        string
					Result      bool
					Constraints []playgroundConstraint
				}
			}
		}
		Variant struct {
			Name    string
			Enabled bool
			Payload *engine.VariantPayload
		}
		Variants []engine.Variant
	}
}

type playgroundConstraint struct {
	ContextName  string
	Operator     string
	Values       []string
	Result       bool
	ContextValue *string
}

func (a playgroundAnswer) feature(t *testing.T, name string) int {
	t.Helper()
	for i, f := range a.Features {
		if f.Name == name {
			return i
		}
	}
	t.Fatalf("flag %s not in the playground's answer: %+v", name, a.Features)
	return -1
}

// seedPlayground makes, in development: "pg-rollout" (a 100 % rollout
// constrained to country NO, segment "pro" on plan, with a strategy
// variant "blue"; a disabled default strategy before it), "pg-child"
// depending on it, and "pg-off" (off in development).
func seedPlayground(t *testing.T, h *servertest.Harness) {
	t.Helper()
	for _, n := range []string{"pg-rollout", "pg-child", "pg-off"} {
		createFlag(t, h, n)
	}
	seg := h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "pro",
		"constraints": []any{map[string]any{"contextName": "plan", "operator": "IN", "values": []string{"pro"}}}}).Want(t, 201).Map(t)
	base := envPath("pg-rollout", "development") + "/strategies"
	h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "default", "disabled": true}).Want(t, 200)
	h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "flexibleRollout",
		"parameters":  map[string]any{"rollout": "100", "stickiness": "default", "groupId": "pg-rollout"},
		"constraints": []any{map[string]any{"contextName": "country", "operator": "IN", "values": []string{"NO"}}},
		"segments":    []any{seg["id"]},
		"variants": []any{map[string]any{"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "default",
			"payload": map[string]any{"type": "string", "value": "b"}}}}).Want(t, 200)
	h.Do(t, "POST", envPath("pg-rollout", "development")+"/on", h.AdminToken, nil).Want(t, 200)
	h.Do(t, "POST", envPath("pg-child", "development")+"/on", h.AdminToken, nil).Want(t, 200)
	h.Do(t, "POST", featurePath("pg-child")+"/dependencies", h.AdminToken, map[string]any{"feature": "pg-rollout"}).Want(t, 200)
	h.Do(t, "POST", envPath("pg-off", "development")+"/strategies", h.AdminToken, map[string]any{"name": "default"}).Want(t, 200)
}

func playgroundContext(country, plan string) map[string]any {
	return map[string]any{"userId": "u1", "appName": "shop", "environment": "development", "remoteAddress": "10.0.0.1",
		"properties": map[string]any{"country": country, "plan": plan}}
}

// TestPlaygroundExplains: the answer names the failing constraint (with
// the context's value), the failing segment, the disabled strategy, the
// dependency, and for a passing context the matched strategy and variant.
func TestPlaygroundExplains(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		seedPlayground(t, h)
		events := len(eventsOfType(t, h, ""))
		var a playgroundAnswer
		h.Do(t, "POST", playgroundPath, h.AdminToken, map[string]any{"environment": "development", "projects": "*",
			"context": playgroundContext("SE", "pro")}).Want(t, 200).JSON(t, &a)
		if a.Input.Environment != "development" || a.Input.Projects != "*" || a.Input.Context["userId"] != "u1" {
			t.Fatalf("input: %+v", a.Input)
		}
		f := a.Features[a.feature(t, "pg-rollout")]
		if f.IsEnabled || !f.IsEnabledInCurrentEnvironment || f.Strategies.Result != false || len(f.Strategies.Data) != 2 || f.Variant.Name != "disabled" {
			t.Fatalf("pg-rollout with country SE: %+v", f)
		}
		off, st := f.Strategies.Data[0], f.Strategies.Data[1]
		if !off.Disabled || off.Name != "default" || off.ID == "" {
			t.Errorf("the disabled strategy: %+v", off)
		}
		if st.Name != "flexibleRollout" || st.Result.Enabled != false || st.Result.EvaluationStatus != "complete" || len(st.Constraints) != 1 {
			t.Fatalf("strategy: %+v", st)
		}
		c := st.Constraints[0]
		if c.Result || c.ContextName != "country" || c.Operator != "IN" || c.Values[0] != "NO" || c.ContextValue == nil || *c.ContextValue != "SE" {
			t.Errorf("the failing constraint: %+v", c)
		}
		if len(st.Segments) != 1 || st.Segments[0].Name != "pro" || !st.Segments[0].Result {
			t.Errorf("segment: %+v", st.Segments)
		}
		child := a.Features[a.feature(t, "pg-child")]
		if child.IsEnabled || !child.HasUnsatisfiedDependency || len(child.Dependencies) != 1 || child.Dependencies[0].Result || child.Dependencies[0].Feature != "pg-rollout" {
			t.Errorf("pg-child: %+v", child)
		}
		if pgOff := a.Features[a.feature(t, "pg-off")]; pgOff.IsEnabled || pgOff.IsEnabledInCurrentEnvironment || pgOff.Strategies.Result != true {
			t.Errorf("pg-off: %+v", pgOff)
		}

		// The segment fails on its own.
		h.Do(t, "POST", playgroundPath, h.AdminToken, map[string]any{"environment": "development",
			"context": playgroundContext("NO", "free")}).Want(t, 200).JSON(t, &a)
		st = a.Features[a.feature(t, "pg-rollout")].Strategies.Data[1]
		if !st.Constraints[0].Result || st.Segments[0].Result || st.Segments[0].Constraints[0].Result || *st.Segments[0].Constraints[0].ContextValue != "free" || st.Result.Enabled != false {
			t.Errorf("failing segment: %+v", st)
		}

		// A passing context: the rollout matches and picks the variant.
		h.Do(t, "POST", playgroundPath, h.AdminToken, map[string]any{"environment": "development", "projects": []string{"default"},
			"context": playgroundContext("NO", "pro")}).Want(t, 200).JSON(t, &a)
		f = a.Features[a.feature(t, "pg-rollout")]
		st = f.Strategies.Data[1]
		if !f.IsEnabled || f.Strategies.Result != true || st.Result.Enabled != true || st.Result.Variant == nil || st.Result.Variant.Name != "blue" ||
			f.Variant.Name != "blue" || !f.Variant.Enabled || f.Variant.Payload == nil || f.Variant.Payload.Value != "b" {
			t.Fatalf("pg-rollout with country NO: %+v", f)
		}
		if child := a.Features[a.feature(t, "pg-child")]; !child.IsEnabled || child.HasUnsatisfiedDependency || !child.Dependencies[0].ParentEnabled {
			t.Errorf("pg-child: %+v", child)
		}

		// Production has the flags, all off; a project filter with no
		// match gives none.
		h.Do(t, "POST", playgroundPath, h.AdminToken, map[string]any{"environment": "production"}).Want(t, 200).JSON(t, &a)
		if f := a.Features[a.feature(t, "pg-rollout")]; f.IsEnabled || f.IsEnabledInCurrentEnvironment || len(f.Strategies.Data) != 0 {
			t.Errorf("production: %+v", f)
		}
		h.Do(t, "POST", playgroundPath, h.AdminToken, map[string]any{"environment": "development", "projects": []string{"nope"}}).Want(t, 200).JSON(t, &a)
		if len(a.Features) != 0 {
			t.Errorf("projects [nope]: %+v", a.Features)
		}

		// Any signed-in principal may ask; asking records nothing.
		viewer := h.UserToken(t, "pg-viewer", "Viewer")
		events = len(eventsOfType(t, h, ""))
		h.Do(t, "POST", playgroundPath, viewer, map[string]any{"environment": "development"}).Want(t, 200)
		if n := len(eventsOfType(t, h, "")); n != events {
			t.Errorf("the playground recorded %d events", n-events)
		}
		h.Do(t, "POST", playgroundPath, "", map[string]any{"environment": "development"}).Want(t, 401)
	})
}

// TestPlaygroundAgreesWithSDKs: for each context, every flag's outcome
// and variant in the playground equal what the frontend API answers and
// what the engine computes from /api/client/features.
func TestPlaygroundAgreesWithSDKs(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		seedPlayground(t, h)
		createFlag(t, h, "pg-half")
		h.Do(t, "POST", envPath("pg-half", "development")+"/strategies", h.AdminToken, map[string]any{"name": "flexibleRollout",
			"parameters": map[string]any{"rollout": "50", "stickiness": "userId", "groupId": "pg-half"}}).Want(t, 200)
		h.Do(t, "PUT", envPath("pg-half", "development")+"/variants", h.AdminToken, []any{
			map[string]any{"name": "x", "weight": 500, "weightType": "variable", "stickiness": "default"},
			map[string]any{"name": "y", "weight": 500, "weightType": "variable", "stickiness": "default"}}).Want(t, 200)
		h.Do(t, "POST", envPath("pg-half", "development")+"/on", h.AdminToken, nil).Want(t, 200)

		var payload engine.ClientFeatures
		h.Do(t, "GET", "/api/client/features", h.ClientToken, nil, "Unleash-Client-Spec", "5.0.0").Want(t, 200).JSON(t, &payload)
		snap := engine.Compile(&payload, engine.Options{})
		on := 0
		for i := range 24 {
			country, plan := []string{"NO", "SE"}[i%2], []string{"pro", "free", "pro"}[i%3]
			ctx := playgroundContext(country, plan)
			ctx["userId"] = fmt.Sprintf("user-%d", i)
			var a playgroundAnswer
			h.Do(t, "POST", playgroundPath, h.AdminToken, map[string]any{"environment": "development", "context": ctx}).Want(t, 200).JSON(t, &a)
			var ft struct {
				Toggles []struct {
					Name    string
					Enabled bool
					Variant struct{ Name string }
				}
			}
			h.Do(t, "POST", "/api/frontend", h.FrontendToken, map[string]any{"context": ctx}).Want(t, 200).JSON(t, &ft)
			frontend := map[string]string{}
			for _, tg := range ft.Toggles {
				frontend[tg.Name] = tg.Variant.Name
			}
			ectx := &engine.Context{UserID: ctx["userId"].(string), AppName: "shop", Environment: "development", RemoteAddress: "10.0.0.1",
				Properties: map[string]string{"country": country, "plan": plan}}
			if len(a.Features) != snap.Len() {
				t.Fatalf("playground has %d flags, the client API %d", len(a.Features), snap.Len())
			}
			for _, f := range a.Features {
				sdk := snap.Evaluate(f.Name, ectx)
				if !sdk.Found || sdk.Enabled != f.IsEnabled || sdk.Variant.Name != f.Variant.Name {
					t.Errorf("%s for %v: playground %v/%s, engine on /api/client/features %v/%s", f.Name, ctx, f.IsEnabled, f.Variant.Name, sdk.Enabled, sdk.Variant.Name)
				}
				if v, ok := frontend[f.Name]; ok != f.IsEnabled || ok && v != f.Variant.Name {
					t.Errorf("%s for %v: playground %v/%s, frontend API %v/%s", f.Name, ctx, f.IsEnabled, f.Variant.Name, ok, v)
				}
				if f.IsEnabled {
					on++
				}
			}
		}
		if on < 20 {
			t.Fatalf("only %d flags were on: the comparison proves little", on)
		}
	})
}

// TestPlaygroundBadInput: validation errors are 400s that say what is
// wrong, on both databases.
func TestPlaygroundBadInput(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		for _, tc := range []struct {
			body     any
			fragment string
		}{
			{map[string]any{"environment": "nope"}, `"nope" does not exist`},
			{map[string]any{}, "environment"},
			{map[string]any{"environment": 3}, "environment"},
			{map[string]any{"environment": "development", "context": "u1"}, "context must be an object"},
			{map[string]any{"environment": "development", "context": []string{"a"}}, "context must be an object"},
			{map[string]any{"environment": "development", "context": map[string]any{"properties": "x"}}, "context.properties must be an object"},
			{map[string]any{"environment": "development", "context": map[string]any{"properties": map[string]any{"a": map[string]any{}}}}, "context.properties.a"},
			{map[string]any{"environment": "development", "context": map[string]any{"userId": []int{1}}}, "context.userId"},
			{map[string]any{"environment": "development", "projects": "default"}, "projects"},
			{map[string]any{"environment": "development", "projects": []int{1}}, "projects"},
			{[]string{"development"}, "JSON object"},
		} {
			h.Do(t, "POST", playgroundPath, h.AdminToken, tc.body).WantError(t, 400, "ValidationError", tc.fragment)
		}
		h.Do(t, "POST", playgroundPath, h.AdminToken, "{").Want(t, 400)
		h.Do(t, "POST", playgroundPath, h.AdminToken, "").WantError(t, 400, "ValidationError", "empty")
	})
}
