package engine

import (
	"maps"
	"slices"
)

// Patch returns a snapshot that evaluates as Compile would with flag i of
// s's payload replaced by changed[i], for each i in changed, compiling
// only those flags: a change to one flag of a large configuration then
// costs that flag, not the configuration.
//
// It reports false, and the caller compiles the whole payload instead,
// when a replacement has another name than the flag it replaces, gains or
// loses dependencies (which changes whether its dependents are
// satisfiable), or when the patches since the last Compile have left
// about as much unused behind as s holds: a patch appends the strategies,
// constraint tests and variants it compiles and leaves the replaced
// flags' in place, which a full compile drops.
// Segments are s's: a change to a segment needs a full compile.
//
// The payload Features returns has the replacements when s's payload
// holds every flag, and is s's otherwise.
func (s *Snapshot) Patch(changed map[int]Feature) (*Snapshot, bool) {
	for i, f := range changed {
		if i < 0 || i >= len(s.flags) || f.Name != s.names[i] || (len(f.Dependencies) > 0) != (s.flags[i].d1 > s.flags[i].d0) {
			return nil, false
		}
	}
	if 2*s.replaced > len(s.strategies)+len(s.constraints)+len(s.variants) {
		return nil, false
	}
	fields := &fieldTable{slots: maps.Clone(s.fields.slots)}
	cfg := &compileConfig{
		hostname:     s.hostname,
		custom:       s.custom,
		fields:       fields,
		constraints:  &constraintTable{byKey: map[string]int32{}, fields: fields, list: slices.Clip(s.constraints)},
		variants:     slices.Clip(s.variants),
		variantFlags: slices.Clip(s.variantFlags),
		strategies:   slices.Clip(s.strategies),
		refRanges:    make([][2]int32, len(s.strategies)),
	}
	n := &Snapshot{
		features: s.features, flags: slices.Clone(s.flags), names: s.names, dependencies: slices.Clip(s.dependencies),
		index: s.index, now: s.now, hostname: s.hostname, custom: s.custom, segmentRefs: s.segmentRefs, replaced: s.replaced,
	}
	if len(s.features.Features) == len(s.flags) {
		payload := *s.features
		payload.Features = slices.Clone(s.features.Features)
		n.features = &payload
	}
	hasDependencies := func(i int) bool { return s.flags[i].d1 > s.flags[i].d0 }
	for _, i := range slices.Sorted(maps.Keys(changed)) {
		f := changed[i]
		old := s.flags[i]
		n.replaced += int(old.s1 - old.s0)
		cfg.flag = int32(i)
		n.flags[i] = compileFlag(f, s.segmentRefs, cfg)
		n.flags[i].d0, n.flags[i].d1 = old.d0, old.d1
		if len(f.Dependencies) > 0 {
			n.flags[i].d0 = int32(len(n.dependencies))
			n.dependencies = append(n.dependencies, n.compileDependencies(f.Dependencies, hasDependencies)...)
			n.flags[i].d1 = int32(len(n.dependencies))
		}
		if n.features != s.features {
			n.features.Features[i] = f
		}
	}
	n.strategies = slices.Clip(cfg.strategies)
	for j := len(s.strategies); j < len(n.strategies); j++ {
		r := cfg.refRanges[j]
		n.strategies[j].refs = cfg.constraintIDs[r[0]:r[1]:r[1]]
	}
	n.constraints = slices.Clip(cfg.constraints.list)
	n.variants, n.variantFlags = cfg.variants, cfg.variantFlags
	n.replaced += len(n.constraints) - len(s.constraints) + len(n.variants) - len(s.variants)
	n.fields, n.fieldCount = fields, fields.size()
	n.finish()
	return n, true
}
