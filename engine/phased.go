package engine

import (
	"math/rand/v2"
	"sync"
)

// phasePlan is how EvaluateAllIDs walks a snapshot with an eager plan
// (eagerMinFlags flags or more, see eagerPlan): not flag after flag, each with its own loop over strategies, but
// in rounds, the first strategy of every flag, then the second of the flags
// still undecided, and so on. Within a round, the strategies whose
// constraints hold are sorted into batches of one algorithm, each decided
// in its own loop. A flag is decided exactly as one at a time (strategies
// in order, the first that says yes wins, the rest are not reached), but
// the branches that depend on which flag comes next (how many strategies
// and constraints it has, which algorithm) are gone from the inner loops,
// and with them most of the mispredicted branches that walking every flag
// costs.
type phasePlan struct {
	// rounds are the enabled flags decided in rounds, with their first
	// strategies: those with strategies, no dependencies and no custom
	// strategy.
	rounds []decision
	// bare are the enabled flags without strategies: on for everyone.
	bare []int32
	// oneByOne are the enabled flags with dependencies or a custom
	// strategy, evaluated one at a time after the others, in order.
	oneByOne []int32
	// rollouts holds, by strategy index, what deciding a rollout in
	// batchRollout or batchFieldRollout reads (24 bytes, not the whole
	// strategy).
	rollouts []rolloutCheck
	// stickyFields are the fields field rollouts hash, looked up before
	// the rounds so that a rollout reads the field cache directly.
	stickyFields []field
}

// rolloutCheck is a rollout strategy as phased evaluation decides it.
type rolloutCheck struct {
	prefix hashPrefix
	// limit is the largest normalized hash (1 to 100) that is on: the
	// percentage rounded down.
	limit uint32
	// slot is the stickiness field's slot, for field rollouts.
	slot int32
}

// Batches of strategies decided together (strategyCheck.batch).
const (
	batchAlways       uint8 = iota // always yes
	batchRollout                   // flexibleRollout with default stickiness
	batchFieldRollout              // flexibleRollout sticky to a field
	batchOther                     // any other algorithm, through decide
	batchCount
)

// newPhasePlan sorts the flags of s for phased evaluation and marks the
// strategies' batches.
func newPhasePlan(s *Snapshot) phasePlan {
	p := phasePlan{rollouts: make([]rolloutCheck, len(s.strategies))}
	sticky := map[int32]bool{}
	for i := range s.flags {
		f := &s.flags[i]
		if !f.enabled {
			continue
		}
		custom := false
		for j := f.s0; j < f.s1; j++ {
			cs, c := &s.strategies[j], &s.checks[j]
			custom = custom || cs.algo == algoCustom
			c.more = uint8(b2i(j < f.s1-1))
			cs.resolved = cs.variants
			if cs.resolved == nil {
				cs.resolved = f.variants
			}
			c.hasVariants = uint8(b2i(cs.resolved != nil))
			switch {
			case cs.algo == algoAlways:
				c.batch = batchAlways
			case cs.algo == algoFlexibleRollout && cs.stickiness.kind == stickDefault:
				c.batch = batchRollout
			case cs.algo == algoFlexibleRollout && cs.stickiness.kind == stickField:
				c.batch = batchFieldRollout
			default:
				c.batch = batchOther
			}
			if c.batch == batchRollout || c.batch == batchFieldRollout {
				p.rollouts[j] = rolloutCheck{prefix: cs.prefix, limit: uint32(min(cs.percentage, 100)), slot: cs.stickiness.field.slot}
			}
			if c.batch == batchFieldRollout && !sticky[cs.stickiness.field.slot] {
				sticky[cs.stickiness.field.slot] = true
				p.stickyFields = append(p.stickyFields, cs.stickiness.field)
			}
		}
		switch {
		case f.d1 > f.d0 || custom:
			f.oneByOne = true
			p.oneByOne = append(p.oneByOne, int32(i))
		case !f.hasStrategies:
			p.bare = append(p.bare, int32(i))
		case f.s1 > f.s0:
			p.rounds = append(p.rounds, decision{int32(i), f.s0})
		}
		// Otherwise every strategy was dropped as never matching: off.
	}
	return p
}

// decision is a strategy to decide for a flag (indexes of Snapshot.flags
// and Snapshot.strategies).
type decision struct {
	flag, strategy int32
}

// phaseScratch is the per-evaluation space of phased evaluation.
type phaseScratch struct {
	active, next []decision
	batches      [batchCount][]decision
	choose       []decision
}

var phasePool = sync.Pool{New: func() any { return new(phaseScratch) }}

// getPhaseScratch returns scratch space for n flags decided in rounds.
func getPhaseScratch(n int) *phaseScratch {
	ps := phasePool.Get().(*phaseScratch)
	if cap(ps.active) < n {
		ps.active, ps.next, ps.choose = make([]decision, n), make([]decision, n), make([]decision, n)
		for b := range ps.batches {
			ps.batches[b] = make([]decision, n)
		}
	}
	return ps
}

// b2i is 1 for true and 0 for false, without a branch (the compiler
// turns it into a flag-setting instruction).
func b2i(b bool) int {
	var i int
	if b {
		i = 1
	}
	return i
}

// evaluatePhased fills out (flag i's outcome at out[i]) following the
// plan; st's memo has been settled by the eager plan.
func (s *Snapshot) evaluatePhased(st *evalState, out []VariantID) {
	clear(out) // OffVariantID
	p := &s.phases
	ps := getPhaseScratch(len(p.rounds))
	nChoose := 0
	choose := ps.choose
	active := ps.active[:copy(ps.active, p.rounds)]
	// The id a default-stickiness rollout hashes, the same for every one.
	stickyID, hasStickyID := st.ctx.UserID, true
	if stickyID == "" {
		stickyID = st.ctx.SessionID
		hasStickyID = stickyID != ""
	}
	for _, f := range p.stickyFields {
		st.value(f)
	}
	for len(active) > 0 {
		var n [batchCount]int
		next, nNext := ps.next, 0
		for _, d := range active {
			c := &s.checks[d.strategy]
			var ok int
			if c.fast {
				ok = c.holdsBit(st.memo)
			} else {
				ok = b2i(st.allHold(s.strategies[d.strategy].refs))
			}
			b := c.batch
			ps.batches[b][n[b]] = d
			n[b] += ok
			next[nNext] = decision{d.flag, d.strategy + 1}
			nNext += (ok ^ 1) & int(c.more)
		}
		// Each batch records its outcomes through r (see record).
		r := recorder{out: out, choose: choose, next: next, checks: s.checks, nChoose: nChoose, nNext: nNext}
		for _, d := range ps.batches[batchAlways][:n[batchAlways]] {
			r.record(d, true)
		}
		for _, d := range ps.batches[batchRollout][:n[batchRollout]] {
			ro := &p.rollouts[d.strategy]
			var draw uint32
			if hasStickyID {
				draw = ro.prefix.normalized(stickyID, 100)
			} else {
				draw = uint32(rand.IntN(100) + 1)
			}
			r.record(d, draw <= ro.limit)
		}
		for _, d := range ps.batches[batchFieldRollout][:n[batchFieldRollout]] {
			ro := &p.rollouts[d.strategy]
			f := &st.fields[ro.slot] // looked up before the rounds
			r.record(d, f.present && f.value != "" && ro.prefix.normalized(f.value, 100) <= ro.limit)
		}
		others := ps.batches[batchOther][:n[batchOther]]
		st.touched += touchStrategies(s.strategies, others)
		for _, d := range others {
			r.record(d, s.strategies[d.strategy].decide(st))
		}
		nChoose, nNext = r.nChoose, r.nNext
		active = next[:nNext]
		ps.active, ps.next = ps.next, ps.active
	}
	st.touched += touchVariants(s.strategies, choose[:nChoose])
	for _, d := range choose[:nChoose] {
		out[d.flag] = s.strategies[d.strategy].resolved.choose(st)
	}
	phasePool.Put(ps)
	st.touched += touchFlagVariants(s.flags, p.bare)
	for _, fi := range p.bare {
		out[fi] = variantFor(&s.flags[fi], nil, st)
	}
	st.phased = true
	for _, fi := range p.oneByOne {
		st.evaluated = int(fi)
		out[fi] = s.evaluateID(int(fi), st)
	}
}

// recorder records the outcomes of a round's decisions: the flag's outcome,
// OffVariantID (0) or NoVariantID (1) until a variant is chosen; the
// decision among those whose variant is to be chosen when the strategy said
// yes and resolves variants; the flag among those for the next round when
// it said no and is not its flag's last.
type recorder struct {
	out            []VariantID
	choose, next   []decision
	checks         []strategyCheck
	nChoose, nNext int
}

func (r *recorder) record(d decision, on bool) {
	c := &r.checks[d.strategy]
	yes := b2i(on)
	r.out[d.flag] = VariantID(yes)
	r.choose[r.nChoose] = d
	r.nChoose += yes & int(c.hasVariants)
	r.next[r.nNext] = decision{d.flag, d.strategy + 1}
	r.nNext += (yes ^ 1) & int(c.more)
}
