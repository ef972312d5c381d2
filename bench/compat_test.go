package bench

import (
	"testing"

	unleash "github.com/Unleash/unleash-client-go/v4"
	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/engine/enginetest"
)

// TestAgreesWithSDK checks that Bunting and unleash-client-go v4.5.0 agree
// on IsEnabled and GetVariant (name, enabled, feature_enabled, payload), over generated flags and contexts, for every flag whose
// evaluation only involves what v4.5.0 supports (no REGEX, IN_CIDR,
// SEMVER_GTE/LTE, directly, through a segment or through a parent flag;
// no dependency on a parent's variant, which v4.5.0 checks against
// strategy variants only).
func TestAgreesWithSDK(t *testing.T) {
	payload := enginetest.Generate(400, 11)
	errs := &errorCounter{}
	client := startSDK(t, payload, errs)
	snap := engine.Compile(payload, engine.Options{Hostname: sdkHostname()})
	comparable := comparableFlags(payload)
	if len(comparable) < len(payload.Features)/3 {
		t.Fatalf("only %d of %d flags are comparable", len(comparable), len(payload.Features))
	}
	compared, enabled := 0, 0
	for _, ctx := range enginetest.Contexts(50) {
		sctx := sdkContext(ctx)
		for _, name := range comparable {
			ours := snap.Evaluate(name, ctx)
			theirs := client.IsEnabled(name, unleash.WithContext(sctx))
			if ours.Enabled != theirs {
				t.Errorf("%s for %+v: Bunting %v, Go SDK %v", name, *ctx, ours.Enabled, theirs)
			}
			// userId stickiness without a userId picks a random variant
			// in both engines; only IsEnabled is comparable then.
			if ctx.UserID != "" {
				compareVariant(t, client, name, ctx, ours.Variant)
			}
			compared++
			if theirs {
				enabled++
			}
		}
	}
	if n := errs.errors.Load(); n != 0 {
		t.Errorf("the Go SDK reported %d errors on comparable flags", n)
	}
	t.Logf("Bunting and unleash-client-go v4.5.0 agree on %d evaluations (%d flags × 50 contexts, %d enabled)",
		compared, len(comparable), enabled)
	if enabled == 0 || enabled == compared {
		t.Errorf("degenerate comparison: %d of %d enabled", enabled, compared)
	}
}

// compareVariant checks the SDK's GetVariant against Bunting's variant.
func compareVariant(t *testing.T, client *unleash.Client, name string, ctx *engine.Context, ours *engine.ResultVariant) {
	t.Helper()
	v := client.GetVariant(name, unleash.WithVariantContext(sdkContext(ctx)))
	if v.Name != ours.Name || v.Enabled != ours.Enabled || v.FeatureEnabled != ours.FeatureEnabled {
		t.Errorf("%s for %+v: Bunting variant %+v, Go SDK %+v", name, *ctx, *ours, *v)
		return
	}
	if v.Payload.Value != "" && (ours.Payload == nil || *ours.Payload != engine.VariantPayload{Type: v.Payload.Type, Value: v.Payload.Value}) {
		t.Errorf("%s: payload %+v, Go SDK %+v", name, ours.Payload, v.Payload)
	}
}

// comparableFlags lists the flags of cf that v4.5.0 evaluates like Bunting.
func comparableFlags(cf *engine.ClientFeatures) []string {
	segOK := map[int]bool{}
	for _, s := range cf.Segments {
		segOK[s.ID] = supported(s.Constraints)
	}
	own := map[string]bool{}
	for _, f := range cf.Features {
		ok := true
		for _, s := range f.Strategies {
			ok = ok && supported(s.Constraints)
			for _, id := range s.Segments {
				ok = ok && segOK[id]
			}
		}
		for _, d := range f.Dependencies {
			ok = ok && len(d.Variants) == 0
		}
		own[f.Name] = ok
	}
	var out []string
	for _, f := range cf.Features {
		ok := own[f.Name]
		for _, d := range f.Dependencies {
			ok = ok && own[d.Feature]
		}
		if ok {
			out = append(out, f.Name)
		}
	}
	return out
}

func supported(cs []engine.Constraint) bool {
	for _, c := range cs {
		if sdkUnsupported[c.Operator] {
			return false
		}
	}
	return true
}
