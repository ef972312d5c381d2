package engine_test

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/engine/enginetest"
)

// TestPatchEvaluatesAsCompile: a snapshot patched with replacement flags,
// patch after patch, evaluates every flag as a snapshot compiled from the
// payload with those replacements does, for contexts with a userId (so
// that no result depends on randomness).
func TestPatchEvaluatesAsCompile(t *testing.T) {
	for seed := int64(1); seed <= 12; seed++ {
		cf := enginetest.Generate(300, seed)
		other := enginetest.Generate(300, seed+1000)
		r := rand.New(rand.NewPCG(uint64(seed), 7))
		snap := engine.Compile(cf, engine.Options{})
		for round := range 6 {
			changed := map[int]engine.Feature{}
			for range 1 + r.IntN(20) {
				i := r.IntN(len(cf.Features))
				f := other.Features[r.IntN(len(other.Features))]
				f.Name = cf.Features[i].Name
				if (len(f.Dependencies) > 0) != (len(cf.Features[i].Dependencies) > 0) {
					f.Dependencies = cf.Features[i].Dependencies
				}
				changed[i] = f
			}
			// A context field no flag used before.
			i := r.IntN(len(cf.Features))
			f := cf.Features[i]
			f.Enabled, f.Strategies = true, []engine.Strategy{{Name: "default", Constraints: []engine.Constraint{
				{ContextName: "patchField", Operator: "NOT_IN", Values: []string{"x"}},
				{ContextName: "patchField" + string(rune('a'+round)), Operator: "STR_CONTAINS", Values: []string{"x"}, Inverted: true},
			}}}
			changed[i] = f
			next := &engine.ClientFeatures{Version: cf.Version, Segments: cf.Segments, Features: slices.Clone(cf.Features)}
			for i, f := range changed {
				next.Features[i] = f
			}
			patched, ok := snap.Patch(changed)
			if !ok {
				t.Fatalf("seed %d round %d: Patch refused replacements with the same names and dependency status", seed, round)
			}
			compiled := engine.Compile(next, engine.Options{})
			if !reflect.DeepEqual(patched.Features(), next) {
				t.Fatalf("seed %d round %d: the patched payload differs from the replaced one", seed, round)
			}
			sameResults(t, patched, compiled)
			cf, snap = next, patched
		}
	}
}

// sameResults compares every flag's outcome in got and want for contexts
// with a userId: enabled, variant (by name, payload and flags) and
// impression data, through EvaluateAll and EvaluateIndex.
func sameResults(t *testing.T, got, want *engine.Snapshot) {
	t.Helper()
	if got.Len() != want.Len() {
		t.Fatalf("Len %d, want %d", got.Len(), want.Len())
	}
	for _, ctx := range enginetest.Contexts(30) {
		if ctx.UserID == "" {
			continue
		}
		all, wantAll := got.EvaluateAll(ctx, nil), want.EvaluateAll(ctx, nil)
		for i := range wantAll {
			one := got.EvaluateIndex(i, ctx)
			for _, r := range []engine.Result{all[i], one} {
				w := wantAll[i]
				if r.Name != w.Name || r.Enabled != w.Enabled || r.ImpressionData != w.ImpressionData ||
					r.Variant.Name != w.Variant.Name || r.Variant.Enabled != w.Variant.Enabled ||
					r.Variant.FeatureEnabled != w.Variant.FeatureEnabled || !reflect.DeepEqual(r.Variant.Payload, w.Variant.Payload) {
					t.Fatalf("flag %s for %+v: got %v/%+v, want %v/%+v", w.Name, *ctx, r.Enabled, *r.Variant, w.Enabled, *w.Variant)
				}
			}
		}
	}
}

// TestPatchRefuses: a replacement with another name, or one that gains or
// loses dependencies, is refused, and so is a patch once the patches
// before it have left as much unused as the snapshot uses.
func TestPatchRefuses(t *testing.T) {
	cf := enginetest.Generate(200, 5)
	snap := engine.Compile(cf, engine.Options{})
	renamed := cf.Features[3]
	renamed.Name += "-renamed"
	if _, ok := snap.Patch(map[int]engine.Feature{3: renamed}); ok {
		t.Error("a replacement with another name was patched")
	}
	if _, ok := snap.Patch(map[int]engine.Feature{len(cf.Features): cf.Features[0]}); ok {
		t.Error("a flag index out of range was patched")
	}
	i := slices.IndexFunc(cf.Features, func(f engine.Feature) bool { return len(f.Dependencies) == 0 })
	gains := cf.Features[i]
	gains.Dependencies = []engine.Dependency{{Feature: cf.Features[0].Name}}
	if _, ok := snap.Patch(map[int]engine.Feature{i: gains}); ok {
		t.Error("a replacement that gains dependencies was patched")
	}
	j := slices.IndexFunc(cf.Features, func(f engine.Feature) bool { return len(f.Strategies) > 0 && len(f.Dependencies) == 0 })
	patches := 0
	for {
		next, ok := snap.Patch(map[int]engine.Feature{j: cf.Features[j]})
		if !ok {
			break
		}
		snap = next
		if patches++; patches > 10*len(cf.Features) {
			t.Fatalf("%d patches without a full compile", patches)
		}
	}
	if patches < 10 {
		t.Errorf("only %d patches before a full compile", patches)
	}
}
