package engine_test

import (
	"maps"
	"testing"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/engine/enginetest"
)

// TestMemoMatchesDirectEvaluation: sharing identical constraints and
// memoising their outcomes, field values and the numbers, versions,
// addresses and dates parsed from them within an evaluation changes no
// result, for well-formed and malformed context values alike.
func TestMemoMatchesDirectEvaluation(t *testing.T) {
	payload := enginetest.Generate(600, 5)
	snap := engine.Compile(payload, engine.Options{})
	for _, base := range enginetest.Contexts(30) {
		if base.UserID == "" {
			continue // userId stickiness without a userId is random
		}
		for _, ctx := range contextVariations(base) {
			for i, r := range snap.EvaluateAll(ctx, nil) {
				d := snap.EvaluateIndex(i, ctx) // no memo for one flag
				if d.Enabled != r.Enabled || d.Variant != r.Variant {
					t.Fatalf("%s with %+v: memo %v/%s, direct %v/%s", r.Name, ctx, r.Enabled, r.Variant.Name, d.Enabled, d.Variant.Name)
				}
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

// contextVariations is ctx as it is, then with currentTime set and with
// the typed fields (age, appVersion, the remote address) malformed,
// padded or empty.
func contextVariations(ctx *engine.Context) []*engine.Context {
	out := []*engine.Context{ctx}
	edits := []func(c *engine.Context){
		func(c *engine.Context) { c.CurrentTime = "2023-06-01T12:00:00Z" },
		func(c *engine.Context) { c.CurrentTime = "2027-01-01" },
		func(c *engine.Context) { c.CurrentTime = "not a date" },
		func(c *engine.Context) { c.Properties["age"] = " 42 " },
		func(c *engine.Context) { c.Properties["age"] = "forty" },
		func(c *engine.Context) { c.Properties["age"] = "" },
		func(c *engine.Context) { c.Properties["appVersion"] = "v2.0.0" },
		func(c *engine.Context) { c.Properties["appVersion"] = " 2.1.3 " },
		func(c *engine.Context) { delete(c.Properties, "appVersion") },
		func(c *engine.Context) { c.RemoteAddress = "::ffff:10.1.2.3" },
		func(c *engine.Context) { c.RemoteAddress = "not-an-ip" },
		func(c *engine.Context) { c.RemoteAddress = "" },
	}
	for _, edit := range edits {
		c := *ctx
		c.Properties = maps.Clone(ctx.Properties)
		edit(&c)
		out = append(out, &c)
	}
	return out
}
