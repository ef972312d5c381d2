package frontend_test

import (
	"slices"
	"testing"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/frontend"
)

// TestForget: a forgotten snapshot's encoding is no longer kept; the
// others are.
func TestForget(t *testing.T) {
	h := frontend.New(frontend.Options{})
	a := engine.Compile(&engine.ClientFeatures{Features: []engine.Feature{{Name: "a", Enabled: true}}}, engine.Options{})
	b := engine.Compile(&engine.ClientFeatures{Features: []engine.Feature{{Name: "b", Enabled: true}}}, engine.Options{})
	h.Prepare(a)
	h.Prepare(b)
	h.Forget(a)
	if got := h.Snapshots(); len(got) != 1 || got[0] != b {
		t.Fatalf("after forgetting a: %d snapshots kept, b kept: %v", len(got), slices.Contains(got, b))
	}
	h.Forget(a) // forgetting twice is harmless
	h.Forget(b)
	if got := h.Snapshots(); len(got) != 0 {
		t.Fatalf("after forgetting both: %d snapshots kept", len(got))
	}
}
