package ofrep

import (
	"testing"

	"github.com/bunting-flags/bunting/engine"
)

// TestForget: a forgotten snapshot's encoding is no longer kept; the
// others are.
func TestForget(t *testing.T) {
	h := New(Options{})
	a := engine.Compile(&engine.ClientFeatures{Features: []engine.Feature{{Name: "a", Enabled: true}}}, engine.Options{})
	b := engine.Compile(&engine.ClientFeatures{Features: []engine.Feature{{Name: "b", Enabled: true}}}, engine.Options{})
	h.Version(a)
	h.Version(b)
	kept := func() []*engine.Snapshot {
		var out []*engine.Snapshot
		if cur := h.cache.Load(); cur != nil {
			for _, e := range *cur {
				out = append(out, e.snap)
			}
		}
		return out
	}
	h.Forget(a)
	if got := kept(); len(got) != 1 || got[0] != b {
		t.Fatalf("after forgetting a: %v kept", got)
	}
	h.Forget(b)
	if got := kept(); len(got) != 0 {
		t.Fatalf("after forgetting both: %v kept", got)
	}
}
