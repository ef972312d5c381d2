package proxy

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/bunting-flags/bunting/engine"
)

// TestUsageCountsVariantsUnderTheirFlags: two flags whose variants share a
// name are counted apart, whether the variant came from a toggle list
// (Record) or from an evaluation of every flag (RecordIDs), and the
// disabled fallback is not counted as a variant.
func TestUsageCountsVariantsUnderTheirFlags(t *testing.T) {
	var cf engine.ClientFeatures
	payload := `{"version":2,"features":[
		{"name":"a","enabled":true,"strategies":[{"name":"default"}],"variants":[{"name":"blue","weight":1000,"weightType":"variable","stickiness":"default"}]},
		{"name":"b","enabled":true,"strategies":[{"name":"default"}],"variants":[{"name":"blue","weight":1000,"weightType":"variable","stickiness":"default"}]},
		{"name":"plain","enabled":true,"strategies":[{"name":"default"}]}]}`
	if err := json.Unmarshal([]byte(payload), &cf); err != nil {
		t.Fatal(err)
	}
	snap := engine.Compile(&cf, engine.Options{})
	su := NewUsage().forSnapshot(snap)
	ctx := &engine.Context{UserID: "u1"}
	su.Record([]engine.Result{snap.Evaluate("a", ctx), snap.Evaluate("plain", ctx)})
	su.RecordIDs(snap.EvaluateAllIDs(ctx, nil))
	su.RecordIDs(snap.EvaluateAllIDs(ctx, nil))

	var b Bucket
	b.Toggles = map[string]*ToggleCount{}
	if !su.drain(&b) {
		t.Fatal("drain found nothing")
	}
	want := map[string]int64{"a": 3, "b": 2}
	for name, n := range want {
		if got := b.Toggles[name].Variants["blue"]; got != n {
			t.Errorf("%s: blue counted %d times, want %d", name, got, n)
		}
	}
	if v := b.Toggles["plain"].Variants; len(v) != 0 {
		t.Errorf("plain: variants %v, want none (the disabled fallback is not a variant)", v)
	}
}

// Counts saturate at the largest int64 instead of wrapping around to a
// negative number, which upstream would refuse with the whole bucket.
func TestUsageCountsSaturate(t *testing.T) {
	u := NewUsage()
	for range 3 {
		u.Add("a", math.MaxInt64-1, 1, map[string]int64{"v": math.MaxInt64})
	}
	b := u.Flush()
	u.Restore(b)
	u.Restore(b)
	got := u.Flush().Toggles["a"]
	if got.Yes != math.MaxInt64 || got.No != 6 || got.Variants["v"] != math.MaxInt64 {
		t.Fatalf("got %+v", *got)
	}
}
