package engine

import (
	"slices"
	"sync"
)

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
// capacity. A flag's dependencies reuse their parents' outcomes.
//
// Every outcome is the one-flag path's (EvaluateIndex) for the same
// context. A snapshot with a plan is evaluated by it (see allFlagsPlan);
// any other, flag after flag through the one-flag path. Both share one
// constraint memo and field cache across the flags, and both decide the
// flags without dependencies first, so that a dependency reads its
// parent's outcome (parents have no dependencies).
func (s *Snapshot) EvaluateAllIDs(ctx *Context, dst []VariantID) []VariantID {
	dst, _ = s.evaluateAllIDs(ctx, dst, nil, nil)
	return dst
}

// EvaluateAllIDsTargeted is EvaluateAllIDs that also appends to targeted,
// for each flag index in ask, whether the strategy that turned the flag on
// without a variant (NoVariantID) has constraints (its own or its
// segments'); false when the flag is off, resolved a variant or no
// strategy decided it. For a flag that comes out NoVariantID this is what
// EvaluateTargeted reports, found within the same evaluation: the
// constraint tests settled for every flag and the flags' outcomes are read
// again, not recomputed, so asking about many flags costs little more than
// deciding their strategies once more.
func (s *Snapshot) EvaluateAllIDsTargeted(ctx *Context, dst []VariantID, ask []int32, targeted []bool) ([]VariantID, []bool) {
	return s.evaluateAllIDs(ctx, dst, ask, targeted)
}

// evaluateAllIDs is EvaluateAllIDs and EvaluateAllIDsTargeted.
func (s *Snapshot) evaluateAllIDs(ctx *Context, dst []VariantID, ask []int32, targeted []bool) ([]VariantID, []bool) {
	if ctx == nil {
		ctx = &Context{}
	}
	base := len(dst)
	dst = slices.Grow(dst, len(s.flags))[:base+len(s.flags)]
	out := dst[base:]
	// The memo has a slot past the tests for the plan (see settlePlan.base).
	sc := getScratch(len(s.constraints)+1, s.fieldCount)
	st := newEvalState(ctx, s.now)
	st.memo, st.fields = sc.memo, sc.fields
	st.constraints = s.constraints
	if s.plan != nil {
		s.plan.evaluate(s, &st, out)
	} else {
		for i := range s.flags {
			if f := &s.flags[i]; !f.enabled || f.d1 > f.d0 {
				out[i] = OffVariantID // the dependent ones are decided below
				continue
			}
			out[i] = s.evaluateID(i, &st)
		}
	}
	st.decided = out
	for _, i := range s.dependent {
		out[i] = s.evaluateID(int(i), &st)
	}
	for _, i := range ask {
		t := false
		if out[i] == NoVariantID {
			// Decided again with the settled memo; dependencies read
			// their parents' outcomes (st.decided).
			on, winner := s.isEnabled(&s.flags[i], &st)
			t = on && winner != nil && len(winner.refs) > 0
		}
		targeted = append(targeted, t)
	}
	putScratch(sc)
	return dst, targeted
}

// allFlagsPlan is how EvaluateAllIDs evaluates every flag of a snapshot of
// planMinFlags flags or more. newAllFlagsPlan builds it from the compiled
// snapshot, which it only reads; the one-flag path never reads it. Each
// evaluation goes through four steps (see evaluate):
//
//  1. settle: the outcome of every constraint test the enabled flags use
//     is settled into the memo (settlePlan, settle.go);
//  2. rounds: the enabled flags with strategies, no dependencies and no
//     custom strategy are decided in rounds, the first strategy of every
//     flag, then the second of those still undecided, and so on, and the
//     winners' variants chosen (rounds.go);
//  3. bare: the enabled flags without strategies are on, with their
//     variants chosen;
//  4. one by one: the enabled flags with a custom strategy, then (in
//     EvaluateAllIDs) those with dependencies, go through the one-flag
//     path, reading the memo settled in step 1.
//
// Disabled flags, and enabled ones whose strategies compile dropped as
// never matching, are off without a step.
type allFlagsPlan struct {
	settle settlePlan
	// first are the flags decided in rounds, each with its first
	// strategy: the first round.
	first []decision
	// checks and variants are what a round reads of each strategy, by
	// strategy index: its constraint check and batch, kept apart from the
	// strategies so that a round walks them densely, and the variants
	// chosen when it wins (its own, else its flag's; nil when neither has
	// any).
	checks   []strategyCheck
	variants []*variantList
	// stickyFields are the fields that field-stickiness rollouts hash,
	// looked up before the rounds so that a round reads the field cache
	// directly.
	stickyFields []field
	// bare are the enabled flags without strategies.
	bare []int32
	// custom are the enabled flags with a custom strategy and no
	// dependencies.
	custom []int32
}

// planMinFlags is the snapshot size from which a plan pays: in smaller
// ones, what an evaluation skips lazily costs less than the branches that
// settling every test and deciding in rounds save.
const planMinFlags = 64

// maxPlanTests bounds the number of tests of a snapshot with a plan, so
// that a strategy's check holds their ids in 16 bits (see strategyCheck).
const maxPlanTests = 1<<16 - 1

// newAllFlagsPlan plans the evaluation of every flag of s, or returns nil
// below planMinFlags flags or from maxPlanTests tests.
func newAllFlagsPlan(s *Snapshot) *allFlagsPlan {
	if len(s.flags) < planMinFlags || len(s.constraints) >= maxPlanTests {
		return nil
	}
	// The live tests: those of the enabled flags' strategies.
	live := make([]bool, len(s.constraints))
	for i := range s.flags {
		if f := &s.flags[i]; f.enabled {
			for _, cs := range s.strategies[f.s0:f.s1] {
				for _, ref := range cs.refs {
					live[ref>>1] = true
				}
			}
		}
	}
	p := &allFlagsPlan{
		settle:   newSettlePlan(s.constraints, live),
		checks:   make([]strategyCheck, len(s.strategies)),
		variants: make([]*variantList, len(s.strategies)),
	}
	sticky := map[int32]bool{}
	for i := range s.flags {
		f := &s.flags[i]
		if !f.enabled {
			continue
		}
		custom := false
		for j := f.s0; j < f.s1; j++ {
			cs := &s.strategies[j]
			custom = custom || cs.algo == algoCustom
			p.variants[j] = cs.variants
			if p.variants[j] == nil {
				p.variants[j] = f.variants
			}
			p.checks[j] = newStrategyCheck(cs, live, len(s.constraints), j < f.s1-1, p.variants[j] != nil)
			if p.checks[j].batch == batchFieldRollout && !sticky[cs.stickiness.field.slot] {
				sticky[cs.stickiness.field.slot] = true
				p.stickyFields = append(p.stickyFields, cs.stickiness.field)
			}
		}
		switch {
		case f.d1 > f.d0:
			// Snapshot.dependent: one by one, last.
		case custom:
			p.custom = append(p.custom, int32(i))
		case !f.hasStrategies:
			p.bare = append(p.bare, int32(i))
		case f.s1 > f.s0:
			p.first = append(p.first, decision{int32(i), f.s0})
		}
		// Otherwise every strategy was dropped as never matching: off.
	}
	return p
}

// evaluate fills out (flag i's outcome at out[i]) for st's context, but
// for the flags with dependencies, which EvaluateAllIDs evaluates after.
func (p *allFlagsPlan) evaluate(s *Snapshot, st *evalState, out []VariantID) {
	p.settle.settle(st)
	clear(out) // OffVariantID
	p.decideInRounds(s, st, out)
	for _, i := range p.bare {
		out[i] = variantFor(&s.flags[i], nil, st)
	}
	for _, i := range p.custom {
		out[i] = s.evaluateID(int(i), st)
	}
}
