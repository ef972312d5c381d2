package engine_test

import (
	"testing"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/engine/enginetest"
)

// TestMemoMatchesDirectEvaluation: sharing identical constraints and
// memoising their outcomes within an evaluation changes no result.
func TestMemoMatchesDirectEvaluation(t *testing.T) {
	payload := enginetest.Generate(600, 5)
	snap := engine.Compile(payload, engine.Options{})
	for _, ctx := range enginetest.Contexts(30) {
		if ctx.UserID == "" {
			continue // userId stickiness without a userId is random
		}
		for i, r := range snap.EvaluateAll(ctx, nil) {
			d := snap.EvaluateIndex(i, ctx) // no memo for one flag
			if d.Enabled != r.Enabled || d.Variant != r.Variant {
				t.Fatalf("%s: memo %v/%s, direct %v/%s", r.Name, r.Enabled, r.Variant.Name, d.Enabled, d.Variant.Name)
			}
		}
	}
	total := 0
	for _, f := range payload.Features {
		for _, s := range f.Strategies {
			total += len(s.Constraints)
		}
	}
	for _, s := range payload.Segments {
		total += len(s.Constraints)
	}
	t.Logf("%d constraints compiled to %d distinct ones", total, snap.DistinctConstraints())
	if d := snap.DistinctConstraints(); d == 0 || d >= total {
		t.Errorf("identical constraints not shared: %d total, %d distinct", total, d)
	}
}
