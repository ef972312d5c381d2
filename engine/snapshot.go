package engine

import (
	"os"
	"slices"
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
	index        map[string]int
	variants     []*ResultVariant
	// variantFlags is the flag index of each variant, -1 for the shared
	// disabled ones.
	variantFlags []int32
	now          func() time.Time
	// strategies holds the strategies of every flag side by side, in flag
	// order; a flag refers to its own by index range.
	strategies []strategy
	// checks holds what phased evaluation reads of each strategy (see
	// strategyCheck), indexed like strategies.
	checks []strategyCheck
	// constraintIDs holds the constraint references (see
	// constraintTable.compile) of every strategy side by side; a strategy
	// refers to its own by index range.
	constraintIDs []int32
	// constraints are the distinct constraint tests, indexed by id.
	constraints []constraint
	// constraintCount is the number of distinct constraint tests, the size
	// of an evaluation's memo.
	constraintCount int
	// fieldCount is the number of distinct context field names, the size
	// of an evaluation's field cache.
	fieldCount int
	// eager settles cheap constraint tests before EvaluateAllIDs walks the
	// flags.
	eager eagerPlan
	// phases says how EvaluateAllIDs walks the flags when eager is on.
	phases phasePlan
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
	// oneByOne says that EvaluateAllIDs evaluates the flag on its own,
	// after the others (see phasePlan).
	oneByOne bool
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
	// strategies and constraintIDs collect what becomes
	// Snapshot.strategies and Snapshot.constraintIDs.
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
	fields := newFieldTable()
	cfg := &compileConfig{
		hostname:    resolveHostname(opts.Hostname),
		custom:      opts.CustomStrategies,
		fields:      fields,
		constraints: newConstraintTable(fields),
	}
	cfg.variants = []*ResultVariant{
		disabledOffID: {ID: disabledOffID, Name: "disabled"},
		disabledOnID:  {ID: disabledOnID, Name: "disabled", FeatureEnabled: true},
	}
	cfg.variantFlags = []int32{disabledOffID: -1, disabledOnID: -1}
	segments := make(map[int][]int32, len(cf.Segments))
	for _, seg := range cf.Segments {
		cs := make([]int32, len(seg.Constraints))
		for i, c := range seg.Constraints {
			cs[i] = cfg.constraints.compile(c)
		}
		segments[seg.ID] = cs
	}
	s := &Snapshot{
		features: cf,
		flags:    make([]flag, len(cf.Features)),
		names:    make([]string, len(cf.Features)),
		index:    make(map[string]int, len(cf.Features)),
		now:      opts.Now,
	}
	for i, f := range cf.Features {
		s.index[f.Name] = i
		s.names[i] = f.Name
		cfg.flag = int32(i)
		s.flags[i] = compileFlag(f, segments, cfg)
	}
	for i, f := range cf.Features {
		s.flags[i].d0 = int32(len(s.dependencies))
		s.dependencies = append(s.dependencies, s.compileDependencies(f.Dependencies)...)
		s.flags[i].d1 = int32(len(s.dependencies))
	}
	s.variants = cfg.variants
	s.variantFlags = cfg.variantFlags
	s.strategies = slices.Clip(cfg.strategies)
	s.constraintIDs = slices.Clip(cfg.constraintIDs)
	for j, r := range cfg.refRanges {
		s.strategies[j].refs = s.constraintIDs[r[0]:r[1]:r[1]]
	}
	s.constraints = slices.Clip(cfg.constraints.list)
	s.constraintCount = cfg.constraints.size()
	s.fieldCount = cfg.fields.size()
	s.eager = newEagerPlan(s)
	s.phases = newPhasePlan(s)
	return s
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
	if len(f.Variants) > 0 {
		cf.variants = compileVariants(f.Variants, f.Name, f.Variants[0].Stickiness, cfg)
	}
	return cf
}

func (s *Snapshot) compileDependencies(deps []Dependency) []dependency {
	if len(deps) == 0 {
		return nil
	}
	out := make([]dependency, len(deps))
	for i, d := range deps {
		parent, ok := s.index[d.Feature]
		if !ok || len(s.features.Features[parent].Dependencies) > 0 {
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

// Evaluate evaluates one flag by name. A missing flag gives Found=false,
// Enabled=false and the disabled variant.
func (s *Snapshot) Evaluate(name string, ctx *Context) Result {
	i, ok := s.index[name]
	if !ok {
		return Result{Index: -1, Name: name, Variant: s.variants[disabledOffID]}
	}
	return s.EvaluateIndex(i, ctx)
}

// EvaluateIndex evaluates flag i, 0 ≤ i < Len(). A nil ctx is an empty
// context.
func (s *Snapshot) EvaluateIndex(i int, ctx *Context) Result {
	if ctx == nil {
		ctx = &Context{}
	}
	// One flag rarely repeats a constraint; clearing a memo sized for the
	// whole snapshot would cost more than it saves.
	st := newEvalState(ctx, s.now)
	st.constraints, st.constraintIDs = s.constraints, s.constraintIDs
	return s.evaluate(i, &st)
}

// EvaluateAll appends the result of every flag, in snapshot order, to dst
// and returns it. It allocates nothing per flag when dst has capacity. A
// nil ctx is an empty context.
func (s *Snapshot) EvaluateAll(ctx *Context, dst []Result) []Result {
	ip := idsPool.Get().(*[]VariantID)
	ids := s.EvaluateAllIDs(ctx, (*ip)[:0])
	dst = slices.Grow(dst, len(ids))
	for i, id := range ids {
		dst = append(dst, s.result(i, id))
	}
	*ip = ids[:0]
	idsPool.Put(ip)
	return dst
}

// idsPool recycles the variant ID slices behind EvaluateAll.
var idsPool = sync.Pool{New: func() any { s := make([]VariantID, 0, 128); return &s }}

// VariantID is the compact outcome of evaluating one flag: the ID of the
// variant it resolved to (see Snapshot.Variant). OffVariantID means the
// flag is off; NoVariantID means it is on without a variant; larger IDs
// are the payload's variants (on, ResultVariant.Enabled set).
type VariantID int32

// The IDs of the two "disabled" variants every snapshot has.
const (
	// OffVariantID is the outcome of a flag that is off.
	OffVariantID VariantID = disabledOffID
	// NoVariantID is the outcome of a flag that is on and resolves no
	// variant.
	NoVariantID VariantID = disabledOnID
)

// EvaluateAllIDs is EvaluateAll in compact form: it appends the variant ID
// of every flag, in snapshot order, to dst (flag i's outcome at
// dst[len(dst)+i]) and returns it. It allocates nothing when dst has
// capacity. A flag's dependencies on earlier flags reuse their outcomes.
func (s *Snapshot) EvaluateAllIDs(ctx *Context, dst []VariantID) []VariantID {
	if ctx == nil {
		ctx = &Context{}
	}
	sc := getScratch(len(s.eager.base), s.fieldCount)
	st := newEvalState(ctx, s.now)
	st.memo, st.fields = sc.memo, sc.fields
	st.constraints, st.constraintIDs = s.constraints, s.constraintIDs
	s.eager.settle(&st)
	base := len(dst)
	dst = slices.Grow(dst, len(s.flags))[:base+len(s.flags)]
	out := dst[base:]
	st.outcomes = out
	if s.eager.on {
		s.evaluatePhased(&st, out)
		putScratch(sc)
		return dst
	}
	for i := range s.flags {
		if !s.flags[i].enabled {
			out[i] = OffVariantID
			continue
		}
		st.evaluated = i
		out[i] = s.evaluateID(i, &st)
	}
	putScratch(sc)
	return dst
}

// Features returns the payload the snapshot was compiled from. Callers must
// not modify it.
func (s *Snapshot) Features() *ClientFeatures { return s.features }

func (s *Snapshot) evaluate(i int, st *evalState) Result {
	return s.result(i, s.evaluateID(i, st))
}

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

// evaluateID evaluates flag i to its variant ID.
func (s *Snapshot) evaluateID(i int, st *evalState) VariantID {
	f := &s.flags[i]
	on, winner := s.isEnabled(f, st)
	if !on {
		return OffVariantID
	}
	return variantFor(f, winner, st)
}

// isEnabled evaluates f and returns the strategy that enabled it (nil when
// the flag is off or has no strategies).
func (s *Snapshot) isEnabled(f *flag, st *evalState) (bool, *strategy) {
	if !f.enabled {
		return false, nil
	}
	for i := f.d0; i < f.d1; i++ {
		if !s.satisfied(&s.dependencies[i], st) {
			return false, nil
		}
	}
	if !f.hasStrategies {
		return true, nil
	}
	// Compile dropped the strategies that can never match.
	for j := f.s0; j < f.s1; j++ {
		cs := &s.strategies[j]
		if c := &s.checks[j]; c.fast && st.memo != nil {
			if !c.holds(st.memo) {
				continue
			}
		} else if len(cs.refs) > 0 && !st.allHold(cs.refs) {
			continue
		}
		if cs.algo == algoAlways || cs.decide(st) {
			return true, cs
		}
	}
	return false, nil
}

// variantFor resolves the variant of a flag evaluated to on, won by
// winner (nil when no strategy decided it).
func variantFor(f *flag, winner *strategy, st *evalState) VariantID {
	vl := f.variants
	if winner != nil && winner.variants != nil {
		vl = winner.variants
	}
	if vl == nil {
		return NoVariantID
	}
	return vl.choose(st)
}

// satisfied checks one dependency, evaluating the parent with the child's
// context. Parents have no dependencies (compile guarantees it), so this
// never recurses further.
func (s *Snapshot) satisfied(d *dependency, st *evalState) bool {
	if d.parent < 0 {
		return false
	}
	var on bool
	id := NoVariantID
	if d.parent < st.evaluated || st.phased && !s.flags[d.parent].oneByOne {
		// EvaluateAllIDs has evaluated the parent with this context.
		id = st.outcomes[d.parent]
		on = id != OffVariantID
	} else {
		p := &s.flags[d.parent]
		var winner *strategy
		on, winner = s.isEnabled(p, st)
		if on && d.wantEnabled && len(d.variants) > 0 {
			id = variantFor(p, winner, st)
		}
	}
	if !d.wantEnabled {
		return !on
	}
	if !on {
		return false
	}
	if len(d.variants) == 0 {
		return true
	}
	return slices.Contains(d.variants, s.variants[id].Name)
}
