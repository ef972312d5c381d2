package engine_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/engine/enginetest"
)

// fuzzStrategies are custom strategies that misbehave on demand.
var fuzzStrategies = map[string]engine.CustomStrategy{
	"fuzzCustom": customFunc(func(p map[string]string, ctx *engine.Context) (bool, error) {
		switch p["mode"] {
		case "panic":
			panic("fuzz panic")
		case "error":
			return true, errors.New("fuzz error")
		}
		return ctx.UserID != "", nil
	}),
}

// FuzzEvaluate compiles random payloads and evaluates random contexts:
// nothing may panic, and results must stay consistent.
func FuzzEvaluate(f *testing.F) {
	if dir := specDir(); dir != "" {
		var names []string
		if data, err := os.ReadFile(filepath.Join(dir, "index.json")); err == nil && json.Unmarshal(data, &names) == nil {
			for _, name := range names {
				var file specFile
				data, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || json.Unmarshal(data, &file) != nil {
					continue
				}
				if cf, err := decodeState(file.State); err == nil {
					state, _ := json.Marshal(cf) // delta states folded into full ones
					f.Add(state, "user-1", "s-1", "10.1.2.3", "1.2.3", "2024-01-01T00:00:00Z")
				}
			}
		}
	}
	for seed := range int64(8) {
		data, err := json.Marshal(enginetest.Generate(4, seed))
		if err != nil {
			f.Fatal(err)
		}
		c := enginetest.Contexts(int(seed) + 1)[seed]
		f.Add(data, c.UserID, c.SessionID, c.RemoteAddress, c.Properties["appVersion"], "")
	}
	f.Add([]byte(`{"features":[{"name":"c","enabled":true,"strategies":[{"name":"fuzzCustom","parameters":{"mode":"panic"}},{"name":"default","variants":[{"name":"a","weight":-5},{"name":"b","weight":2147483647},{"name":"c","weight":2147483647}]}]}]}`),
		"ü", "", "::ffff:1.2.3.4", "v1", "garbage")
	f.Fuzz(func(t *testing.T, payload []byte, userID, sessionID, remote, prop, now string) {
		var cf engine.ClientFeatures
		if json.Unmarshal(payload, &cf) != nil {
			return
		}
		snap := engine.Compile(&cf, engine.Options{CustomStrategies: fuzzStrategies, Hostname: "fuzz"})
		ctx := &engine.Context{UserID: userID, SessionID: sessionID, RemoteAddress: remote, CurrentTime: now,
			Environment: prop, AppName: prop, Properties: map[string]string{}}
		var all []engine.Constraint
		for _, feat := range cf.Features {
			for _, s := range feat.Strategies {
				for _, c := range s.Constraints {
					ctx.Properties[c.ContextName] = prop
					all = append(all, c)
				}
				ctx.Properties[s.Parameters["stickiness"]] = prop
			}
		}
		results := snap.EvaluateAll(ctx, nil)
		if len(results) != snap.Len() {
			t.Fatalf("EvaluateAll: %d results for %d flags", len(results), snap.Len())
		}
		for i, r := range results {
			checkResult(t, snap, r)
			checkResult(t, snap, snap.EvaluateIndex(i, ctx))
			checkResult(t, snap, snap.Evaluate(r.Name, ctx))
		}
		// Padded to the size at which EvaluateAll settles tests eagerly.
		padded := cf
		padded.Features = slices.Clone(cf.Features)
		for len(padded.Features) < engine.EagerMinFlags {
			padded.Features = append(padded.Features, engine.Feature{Name: "zz-filler", Enabled: true})
		}
		big := engine.Compile(&padded, engine.Options{CustomStrategies: fuzzStrategies, Hostname: "fuzz"})
		for _, r := range big.EvaluateAll(ctx, nil) {
			checkResult(t, big, r)
		}
		snap.Evaluate("no such flag", nil)
		engine.CompileConstraints(all, engine.Options{}).Match(ctx)
		for _, seg := range cf.Segments {
			engine.CompileConstraints(seg.Constraints, engine.Options{}).Match(ctx)
		}
	})
}

func checkResult(t *testing.T, snap *engine.Snapshot, r engine.Result) {
	t.Helper()
	v := r.Variant
	if v == nil || snap.Variant(v.ID) != v {
		t.Fatalf("%s: variant %+v not in the snapshot", r.Name, v)
	}
	if v.FeatureEnabled != r.Enabled {
		t.Fatalf("%s: feature_enabled %v but enabled %v", r.Name, v.FeatureEnabled, r.Enabled)
	}
	if !r.Enabled && v.Enabled {
		t.Fatalf("%s: disabled flag with enabled variant %s", r.Name, v.Name)
	}
}
