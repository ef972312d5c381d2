package snapcache_test

import (
	"slices"
	"testing"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/snapcache"
)

func snapshot(name string) *engine.Snapshot {
	return engine.Compile(&engine.ClientFeatures{Features: []engine.Feature{{Name: name, Enabled: true}}}, engine.Options{})
}

// TestCache: a value is built once per snapshot; the newest size
// snapshots are kept; a forgotten one is dropped and the others kept.
func TestCache(t *testing.T) {
	c := snapcache.New[string](2)
	a, b, d := snapshot("a"), snapshot("b"), snapshot("d")
	builds := 0
	build := func(s *engine.Snapshot) string { builds++; return s.Name(0) }
	if c.Get(a, build) != "a" || c.Get(a, build) != "a" || builds != 1 {
		t.Fatalf("a built %d times", builds)
	}
	c.Get(b, build)
	c.Get(d, build)
	if got := c.Snapshots(); !slices.Equal(got, []*engine.Snapshot{d, b}) {
		t.Fatalf("kept %d snapshots, want d then b", len(got))
	}
	c.Forget(d)
	c.Forget(a) // not kept: harmless
	if got := c.Snapshots(); !slices.Equal(got, []*engine.Snapshot{b}) {
		t.Fatalf("after forgetting d: %d kept, want b", len(got))
	}
	if c.Get(d, build) != "d" || builds != 4 {
		t.Fatalf("d again: %d builds, want 4", builds)
	}
}
