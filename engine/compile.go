package engine

import (
	"os"
	"slices"
)

// compileConfig carries what compiling needs besides the payload, and
// collects the variants as they get their IDs.
type compileConfig struct {
	hostname    string
	custom      map[string]CustomStrategy
	fields      *fieldTable
	constraints *constraintTable
	variants    []*ResultVariant
	// variantFlags collects Snapshot.variantFlags; flag is the index of
	// the flag being compiled.
	variantFlags []int32
	flag         int32
	// strategies collects what becomes Snapshot.strategies;
	// constraintIDs the constraint references of every strategy side by
	// side, which each strategy's refs then slice.
	strategies    []strategy
	constraintIDs []int32
	// refRanges[j] bounds strategy j's references in constraintIDs.
	refRanges [][2]int32
	// freeVariants, freeLists and freeEntries are where the next
	// ResultVariants, variant lists and variant entries are allocated,
	// side by side, so that walking them for every flag stays compact.
	freeVariants []ResultVariant
	freeLists    []variantList
	freeEntries  []variantEntry
}

// slabSize is how many variants or variant lists are allocated at once.
const slabSize = 256

// newVariantList allocates a variant list next to the previous ones.
func (cfg *compileConfig) newVariantList() *variantList {
	if len(cfg.freeLists) == 0 {
		cfg.freeLists = make([]variantList, slabSize)
	}
	vl := &cfg.freeLists[0]
	cfg.freeLists = cfg.freeLists[1:]
	return vl
}

// newEntries allocates n variant entries (length 0, capacity n) next to
// the previous ones.
func (cfg *compileConfig) newEntries(n int) []variantEntry {
	if n > slabSize/4 {
		return make([]variantEntry, 0, n)
	}
	if len(cfg.freeEntries) < n {
		cfg.freeEntries = make([]variantEntry, slabSize)
	}
	out := cfg.freeEntries[:0:n]
	cfg.freeEntries = cfg.freeEntries[n:]
	return out
}

// newVariant registers the ResultVariant of a payload variant and gives it
// the next dense ID.
func (cfg *compileConfig) newVariant(v Variant) *ResultVariant {
	if len(cfg.freeVariants) == 0 {
		cfg.freeVariants = make([]ResultVariant, slabSize)
	}
	rv := &cfg.freeVariants[0]
	cfg.freeVariants = cfg.freeVariants[1:]
	*rv = ResultVariant{ID: len(cfg.variants), Name: v.Name, Enabled: true, FeatureEnabled: true}
	if v.Payload != nil {
		p := *v.Payload
		rv.Payload = &p
	}
	cfg.variants = append(cfg.variants, rv)
	cfg.variantFlags = append(cfg.variantFlags, cfg.flag)
	return rv
}

// newCompileConfig starts compiling for a machine called hostname with
// the given custom strategies: no fields, constraints or strategies yet,
// and the two shared disabled variants.
func newCompileConfig(hostname string, custom map[string]CustomStrategy) *compileConfig {
	fields := newFieldTable()
	cfg := &compileConfig{
		hostname:    hostname,
		custom:      custom,
		fields:      fields,
		constraints: newConstraintTable(fields),
	}
	cfg.variants = []*ResultVariant{
		disabledOffID: {ID: disabledOffID, Name: "disabled"},
		disabledOnID:  {ID: disabledOnID, Name: "disabled", FeatureEnabled: true},
	}
	cfg.variantFlags = []int32{disabledOffID: -1, disabledOnID: -1}
	return cfg
}

// Compile turns a client features payload into a Snapshot. It never fails:
// invalid constraint values compile to constraints that do not match (with
// the inversion semantics of the reference), unknown strategies to false.
// Evaluation never reads cf after Compile returns (only Features hands it
// back), so later changes to cf do not change results.
// A nil payload gives an empty snapshot. When several flags share a name,
// Index and Evaluate use the last one (as SDKs do); EvaluateAll returns
// them all.
func Compile(cf *ClientFeatures, opts Options) *Snapshot {
	if cf == nil {
		cf = &ClientFeatures{}
	}
	cfg := newCompileConfig(resolveHostname(opts.Hostname), opts.CustomStrategies)
	segments := make(map[int][]int32, len(cf.Segments))
	for _, seg := range cf.Segments {
		cs := make([]int32, len(seg.Constraints))
		for i, c := range seg.Constraints {
			cs[i] = cfg.constraints.compile(c)
		}
		segments[seg.ID] = cs
	}
	s := &Snapshot{
		features:    cf,
		flags:       make([]flag, len(cf.Features)),
		names:       make([]string, len(cf.Features)),
		index:       make(map[string]int, len(cf.Features)),
		now:         opts.Now,
		hostname:    cfg.hostname,
		custom:      opts.CustomStrategies,
		fields:      cfg.fields,
		segmentRefs: segments,
	}
	for i, f := range cf.Features {
		s.index[f.Name] = i
		s.names[i] = f.Name
		cfg.flag = int32(i)
		s.flags[i] = compileFlag(f, segments, cfg)
	}
	hasDependencies := func(i int) bool { return len(cf.Features[i].Dependencies) > 0 }
	for i, f := range cf.Features {
		s.flags[i].d0 = int32(len(s.dependencies))
		s.dependencies = append(s.dependencies, s.compileDependencies(f.Dependencies, hasDependencies)...)
		s.flags[i].d1 = int32(len(s.dependencies))
	}
	s.variants = cfg.variants
	s.variantFlags = cfg.variantFlags
	s.strategies = slices.Clip(cfg.strategies)
	ids := slices.Clip(cfg.constraintIDs)
	for j, r := range cfg.refRanges {
		s.strategies[j].refs = ids[r[0]:r[1]:r[1]]
	}
	s.constraints = slices.Clip(cfg.constraints.list)
	s.fieldCount = cfg.fields.size()
	s.finish()
	return s
}

// finish derives what evaluation reads besides the compiled flags: the
// flags evaluated after the others for their dependencies, and the plan.
func (s *Snapshot) finish() {
	s.dependent = nil
	for i := range s.flags {
		if f := &s.flags[i]; f.enabled && f.d1 > f.d0 {
			s.dependent = append(s.dependent, int32(i))
		}
	}
	// Everything above is the snapshot; the plan only reads it.
	s.plan = newAllFlagsPlan(s)
}

func resolveHostname(h string) string {
	if h != "" {
		return h
	}
	if h = os.Getenv("HOSTNAME"); h != "" {
		return h
	}
	h, _ = os.Hostname()
	return h
}

func compileFlag(f Feature, segments map[int][]int32, cfg *compileConfig) flag {
	cf := flag{
		enabled:        f.Enabled,
		impressionData: f.ImpressionData,
		hasStrategies:  len(f.Strategies) > 0,
		s0:             int32(len(cfg.strategies)),
	}
	for _, s := range f.Strategies {
		if s.Disabled {
			continue
		}
		compileStrategy(f.Name, s, segments, cfg)
		if last := len(cfg.strategies) - 1; cfg.strategies[last].algo == algoNever {
			// It can never enable the flag: evaluation need not see it.
			cfg.constraintIDs = cfg.constraintIDs[:cfg.refRanges[last][0]]
			cfg.strategies = cfg.strategies[:last]
			cfg.refRanges = cfg.refRanges[:last]
		}
	}
	cf.s1 = int32(len(cfg.strategies))
	cf.variants = compileFlagVariants(f, cfg)
	return cf
}

// compileFlagVariants compiles the flag's own variants, hashed under its
// name with the first variant's stickiness; nil when it has none.
func compileFlagVariants(f Feature, cfg *compileConfig) *variantList {
	if len(f.Variants) == 0 {
		return nil
	}
	return compileVariants(f.Variants, f.Name, f.Variants[0].Stickiness, cfg)
}

// compileDependencies compiles a flag's dependencies; hasDependencies
// reports whether flag i has dependencies of its own, which makes it an
// unsatisfiable parent (only one level is allowed).
func (s *Snapshot) compileDependencies(deps []Dependency, hasDependencies func(i int) bool) []dependency {
	if len(deps) == 0 {
		return nil
	}
	out := make([]dependency, len(deps))
	for i, d := range deps {
		parent, ok := s.index[d.Feature]
		if !ok || hasDependencies(parent) {
			parent = -1
		}
		out[i] = dependency{
			parent:      parent,
			wantEnabled: d.Enabled == nil || *d.Enabled,
			variants:    slices.Clone(d.Variants),
		}
	}
	return out
}
