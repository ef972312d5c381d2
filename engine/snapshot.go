package engine

import (
	"sync"
	"time"
)

// Snapshot is a compiled, immutable set of flags. All methods are safe for
// concurrent use.
type Snapshot struct {
	features *ClientFeatures
	flags    []flag
	// names holds the flags' names, by flag index (kept apart from flags,
	// which evaluation walks).
	names []string
	// dependencies holds the dependencies of every flag side by side; a
	// flag refers to its own by index range.
	dependencies []dependency
	// dependent are the enabled flags with dependencies, in order.
	dependent []int32
	index     map[string]int
	variants  []*ResultVariant
	// variantFlags is the flag index of each variant, -1 for the shared
	// disabled ones.
	variantFlags []int32
	now          func() time.Time
	// strategies holds the strategies of every flag side by side, in flag
	// order; a flag refers to its own by index range.
	strategies []strategy
	// constraints are the distinct constraint tests, indexed by id.
	constraints []constraint
	// fieldCount is the number of distinct context field names, the size
	// of an evaluation's field cache.
	fieldCount int
	// plan is how EvaluateAllIDs evaluates every flag; nil for snapshots
	// it evaluates flag after flag (see allFlagsPlan).
	plan *allFlagsPlan
	// hostname and custom are the compile options, for Explain, which
	// compiles a flag's strategies again; segmentsOnce builds segments,
	// the payload's segments by id, the first time Explain needs them.
	hostname     string
	custom       map[string]CustomStrategy
	segmentsOnce sync.Once
	segments     map[int]*Segment
	// fields and segmentRefs are what Patch compiles replacement flags
	// against: the field slots and the segments' compiled constraint
	// references.
	fields      *fieldTable
	segmentRefs map[int][]int32
	// replaced counts what patches since the last Compile left unused
	// (replaced strategies, added constraint tests), which Patch bounds.
	replaced int
}

// flag is one compiled feature flag: what evaluating it reads, in 32
// bytes, two to a cache line.
type flag struct {
	enabled        bool
	impressionData bool
	// hasStrategies is false when the payload's strategy list is empty,
	// which makes an enabled flag on for everyone. Disabled strategies are
	// dropped from strategies but still count here.
	hasStrategies bool
	// s0 and s1 bound the flag's strategies in Snapshot.strategies.
	s0, s1 int32
	// d0 and d1 bound the flag's dependencies in Snapshot.dependencies.
	d0, d1   int32
	variants *variantList // feature variants; nil when there are none
}

// dependency is a compiled parent-flag requirement.
type dependency struct {
	// parent is the parent's flag index, or -1 when the parent is missing
	// or has dependencies of its own (only one level is allowed), which
	// makes the dependency unsatisfiable.
	parent      int
	wantEnabled bool
	variants    []string
}

// ImpressionData reports whether flag i, 0 ≤ i < Len(), has impression
// data enabled.
func (s *Snapshot) ImpressionData(i int) bool { return s.flags[i].impressionData }

// Len is the number of flags in the snapshot.
func (s *Snapshot) Len() int { return len(s.flags) }

// Name is the name of flag i, 0 ≤ i < Len(), in payload order.
func (s *Snapshot) Name(i int) string { return s.names[i] }

// Index finds a flag by exact name.
func (s *Snapshot) Index(name string) (int, bool) {
	i, ok := s.index[name]
	return i, ok
}

// VariantCount bounds ResultVariant.ID for this snapshot.
func (s *Snapshot) VariantCount() int { return len(s.variants) }

// VariantFlag returns the index of the flag whose variant has the given
// ID, or -1 for the shared "disabled" variants and IDs out of range. An
// outcome of EvaluateAllIDs for flag i is always one of flag i's variants
// or a shared one.
func (s *Snapshot) VariantFlag(id int) int {
	if id < 0 || id >= len(s.variants) {
		return -1
	}
	return int(s.variantFlags[id])
}

// Variant returns the variant with the given ID, or nil when the ID is out
// of range.
func (s *Snapshot) Variant(id int) *ResultVariant {
	if id < 0 || id >= len(s.variants) {
		return nil
	}
	return s.variants[id]
}

// Features returns the payload the snapshot was compiled from. Callers must
// not modify it.
func (s *Snapshot) Features() *ClientFeatures { return s.features }

// result expands flag i's outcome id into a Result.
func (s *Snapshot) result(i int, id VariantID) Result {
	f := &s.flags[i]
	return Result{
		Index:          i,
		Name:           s.names[i],
		Found:          true,
		Enabled:        id != OffVariantID,
		ImpressionData: f.impressionData,
		Variant:        s.variants[id],
	}
}
