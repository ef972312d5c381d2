package engine_test

import (
	"testing"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/engine/enginetest"
)

// TestExplainClientSpecification: every case of the client specification
// comes out of Explain as it does out of Evaluate (enabled and variant).
func TestExplainClientSpecification(t *testing.T) {
	cases := 0
	for _, file := range loadSpecFiles(t) {
		cf, err := decodeState(file.State)
		if err != nil {
			t.Fatalf("%s: state: %v", file.Name, err)
		}
		snap := engine.Compile(cf, engine.Options{})
		// Tests check the outcome; variantTests the variant too (a test
		// may leave the variant to chance).
		check := func(desc, name string, ctx *engine.Context, variant bool) {
			i, ok := snap.Index(name)
			if !ok {
				return
			}
			cases++
			want := snap.EvaluateIndex(i, ctx)
			got := snap.Explain(i, ctx)
			if got.Enabled != want.Enabled || variant && (got.Variant.Name != want.Variant.Name || got.Variant.Enabled != want.Variant.Enabled) {
				t.Errorf("%s/%s: Explain %v/%s, Evaluate %v/%s", file.Name, desc, got.Enabled, got.Variant.Name, want.Enabled, want.Variant.Name)
			}
		}
		for _, tc := range file.Tests {
			check(tc.Description, tc.ToggleName, tc.Context.engineContext(), false)
		}
		for _, tc := range file.VariantTests {
			check(tc.Description, tc.ToggleName, tc.Context.engineContext(), true)
		}
	}
	if cases < 250 {
		t.Fatalf("only %d specification cases checked", cases)
	}
}

// TestExplainMatchesEvaluate: on generated payloads (every operator,
// segments, dependencies, strategy and flag variants), Explain's outcome
// and winning strategy agree with the one-flag path.
func TestExplainMatchesEvaluate(t *testing.T) {
	snap := engine.Compile(enginetest.Generate(300, 5), engine.Options{})
	on := 0
	for _, ctx := range enginetest.Contexts(20) {
		if ctx.UserID == "" {
			continue // default stickiness without a userId is random
		}
		for i := range snap.Len() {
			want := snap.EvaluateIndex(i, ctx)
			got := snap.Explain(i, ctx)
			if got.Enabled != want.Enabled || got.Variant.Name != want.Variant.Name || got.Variant.Payload != nil && *got.Variant.Payload != *want.Variant.Payload {
				t.Fatalf("flag %s: Explain %v/%s, Evaluate %v/%s", want.Name, got.Enabled, got.Variant.Name, want.Enabled, want.Variant.Name)
			}
			if got.Enabled {
				on++
				if len(got.Strategies) > 0 && (got.Winner < 0 || !got.Strategies[got.Winner].Enabled) {
					t.Fatalf("flag %s is on without an enabled winning strategy: %+v", want.Name, got)
				}
			}
			for k, se := range got.Strategies {
				if se.Enabled && !se.ConstraintsHold || k < got.Winner && se.Enabled && !se.Strategy.Disabled || k == got.Winner && se.Strategy.Disabled {
					t.Fatalf("flag %s strategy %d: %+v", want.Name, k, se)
				}
			}
		}
	}
	if on == 0 {
		t.Fatal("no flag was on: the comparison proves nothing")
	}
}

// TestExplainNamesFailingConstraint: the explanation says which
// constraint and which segment failed, with the context's value, skips
// disabled strategies, reports the dependency and the chosen variant.
func TestExplainNamesFailingConstraint(t *testing.T) {
	yes := true
	cf := &engine.ClientFeatures{
		Segments: []engine.Segment{{ID: 7, Name: "beta", Constraints: []engine.Constraint{
			{ContextName: "plan", Operator: "IN", Values: []string{"pro"}},
		}}},
		Features: []engine.Feature{
			{Name: "parent", Enabled: true, Strategies: []engine.Strategy{{Name: "default"}}},
			{Name: "child", Enabled: true, Dependencies: []engine.Dependency{{Feature: "parent", Enabled: &yes}},
				Strategies: []engine.Strategy{
					{ID: "s-off", Name: "default", Disabled: true},
					{ID: "s-country", Name: "flexibleRollout", Parameters: engine.Parameters{"rollout": "100", "stickiness": "default"},
						Constraints: []engine.Constraint{
							{ContextName: "appName", Operator: "IN", Values: []string{"web"}},
							{ContextName: "country", Operator: "IN", Values: []string{"NO", "SE"}},
						},
						Segments: []int{7},
						Variants: []engine.Variant{{Name: "blue", Weight: 1000, Payload: &engine.VariantPayload{Type: "string", Value: "b"}}},
					},
					{ID: "s-custom", Name: "no-such-strategy"},
				}},
		},
	}
	snap := engine.Compile(cf, engine.Options{})
	i, _ := snap.Index("child")

	ex := snap.Explain(i, &engine.Context{UserID: "u1", AppName: "web", Properties: map[string]string{"country": "DK", "plan": "free"}})
	if ex.Enabled || ex.Winner != -1 || ex.Variant.Name != "disabled" || len(ex.Strategies) != 3 {
		t.Fatalf("failing context: %+v", ex)
	}
	off, st, custom := ex.Strategies[0], ex.Strategies[1], ex.Strategies[2]
	if !off.Evaluated || !off.Enabled || !off.Strategy.Disabled {
		t.Errorf("disabled strategy: %+v", off)
	}
	if !st.Constraints[0].Holds || st.Constraints[1].Holds || st.Constraints[1].Value != "DK" || !st.Constraints[1].Present ||
		st.Constraints[1].Constraint.ContextName != "country" || st.ConstraintsHold || st.Evaluated {
		t.Errorf("the country constraint should fail with DK: %+v", st)
	}
	if len(st.Segments) != 1 || st.Segments[0].Name != "beta" || st.Segments[0].Holds || st.Segments[0].Constraints[0].Value != "free" {
		t.Errorf("segment: %+v", st.Segments)
	}
	if custom.Known || custom.Evaluated || custom.Enabled || !custom.ConstraintsHold {
		t.Errorf("unknown strategy: %+v", custom)
	}
	if len(ex.Dependencies) != 1 || !ex.Dependencies[0].Satisfied || !ex.Dependencies[0].ParentEnabled || !ex.DependenciesSatisfied {
		t.Errorf("dependency: %+v", ex.Dependencies)
	}

	ex = snap.Explain(i, &engine.Context{UserID: "u1", AppName: "web", Properties: map[string]string{"country": "SE", "plan": "pro"}})
	if !ex.Enabled || ex.Winner != 1 || ex.Variant.Name != "blue" || !ex.Variant.FromStrategy || ex.Variant.Payload.Value != "b" {
		t.Fatalf("passing context: %+v", ex)
	}
	if got := snap.EvaluateIndex(i, &engine.Context{UserID: "u1", AppName: "web", Properties: map[string]string{"country": "SE", "plan": "pro"}}); got.Variant.Name != "blue" {
		t.Fatalf("Evaluate disagrees: %+v", got)
	}
	if st := ex.Strategies[1]; !st.ConstraintsHold || !st.Evaluated || st.Variant == nil || st.Variant.Name != "blue" {
		t.Errorf("winning strategy: %+v", st)
	}
}
