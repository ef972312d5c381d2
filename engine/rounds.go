package engine

import "sync"

// Deciding flags in rounds, the second step of an allFlagsPlan.
//
// Not flag after flag, each with its own loop over strategies, but the
// first strategy of every flag, then the second of the flags still
// undecided, and so on. Within a round, the strategies whose constraints
// hold are sorted into batches of one algorithm, each decided in its own
// loop. A flag is decided exactly as one at a time (strategies in order,
// the first that says yes wins, the rest are not reached), but the
// branches that depend on which flag comes next (how many strategies and
// constraints it has, which algorithm) are gone from the inner loops, and
// with them most of the mispredicted branches that walking every flag
// costs. Outcomes are counted rather than branched on for the same reason
// (see recorder).

// strategyCheck is what a round reads of a strategy, 16 bytes
// (allFlagsPlan.checks[j] is strategy j's).
type strategyCheck struct {
	// check holds the test ids of the strategy's constraints, padded with
	// the memo's always-true slot, and invert what turns each outcome
	// around (see holdsBit), when fast says that step 1 settles all of
	// them and there are at most four; otherwise the round reads them
	// through evalState.allHold.
	check  [4]uint16
	invert [4]uint8
	fast   bool
	// batch is the batch that decides the strategy.
	batch uint8
	// more is 1 when the strategy is not its flag's last, hasVariants is 1
	// when it resolves variants; 0 otherwise: numbers that a round adds
	// instead of branching on.
	more, hasVariants uint8
}

// Batches of strategies decided together (strategyCheck.batch).
const (
	batchAlways       uint8 = iota // always yes
	batchRollout                   // flexibleRollout with default stickiness
	batchFieldRollout              // flexibleRollout sticky to a field
	batchOther                     // any other algorithm, through strategy.decide
	batchCount
)

// newStrategyCheck makes the check of cs, whose tests are settled where
// live says so; sentinel is the memo's always-true slot. more says that cs
// is not its flag's last strategy, hasVariants that it resolves variants.
func newStrategyCheck(cs *strategy, live []bool, sentinel int, more, hasVariants bool) strategyCheck {
	c := strategyCheck{more: uint8(b2i(more)), hasVariants: uint8(b2i(hasVariants))}
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
	c.fast = len(cs.refs) <= len(c.check)
	for _, ref := range cs.refs {
		c.fast = c.fast && live[ref>>1]
	}
	if !c.fast {
		return c
	}
	for k := range c.check {
		c.check[k], c.invert[k] = uint16(sentinel), 0
		if k < len(cs.refs) {
			c.check[k] = uint16(cs.refs[k] >> 1)
			c.invert[k] = uint8(cs.refs[k]&1) * (memoFalse ^ memoTrue)
		}
	}
	return c
}

// holdsBit is 1 when the constraints of a strategy with a fast check hold
// in a memo that step 1 has settled, 0 otherwise: without a branch per
// constraint.
func (c *strategyCheck) holdsBit(memo []uint8) int {
	// Outcomes are memoFalse (1) or memoTrue (2); XOR with 3 swaps them,
	// so each term is memoTrue exactly when its constraint holds, and
	// their AND is memoTrue (bit 1 set) only when all are.
	r, k := &c.check, &c.invert
	all := (memo[r[0]] ^ k[0]) & (memo[r[1]] ^ k[1]) & (memo[r[2]] ^ k[2]) & (memo[r[3]] ^ k[3])
	return int(all>>1) & 1
}

// decision is a strategy to decide for a flag (indexes of Snapshot.flags
// and Snapshot.strategies).
type decision struct {
	flag, strategy int32
}

// roundScratch is the per-evaluation space of the rounds.
type roundScratch struct {
	active, next []decision
	batches      [batchCount][]decision
	choose       []decision
}

var roundPool = sync.Pool{New: func() any { return new(roundScratch) }}

// getRoundScratch returns scratch space for n flags decided in rounds.
func getRoundScratch(n int) *roundScratch {
	rs := roundPool.Get().(*roundScratch)
	if cap(rs.active) < n {
		rs.active, rs.next, rs.choose = make([]decision, n), make([]decision, n), make([]decision, n)
		for b := range rs.batches {
			rs.batches[b] = make([]decision, n)
		}
	}
	return rs
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

// decideInRounds decides the flags of p.first and chooses the variants of
// those that are on, into out (zeroed: OffVariantID); st's memo has been
// settled (step 1).
func (p *allFlagsPlan) decideInRounds(s *Snapshot, st *evalState, out []VariantID) {
	rs := getRoundScratch(len(p.first))
	nChoose := 0
	choose := rs.choose
	active := rs.active[:copy(rs.active, p.first)]
	// The id every default-stickiness rollout hashes, and the fields the
	// field-stickiness ones do.
	stickyID, hasStickyID := defaultStickyID(st.ctx)
	for _, f := range p.stickyFields {
		st.value(f)
	}
	for len(active) > 0 {
		// Sort the round's strategies whose constraints hold into batches;
		// those that do not hold go on to the next round if their flag
		// has another strategy.
		var n [batchCount]int
		next, nNext := rs.next, 0
		for _, d := range active {
			c := &p.checks[d.strategy]
			var ok int
			if c.fast {
				ok = c.holdsBit(st.memo)
			} else {
				ok = b2i(st.allHold(s.strategies[d.strategy].refs))
			}
			b := c.batch
			rs.batches[b][n[b]] = d
			n[b] += ok
			next[nNext] = decision{d.flag, d.strategy + 1}
			nNext += (ok ^ 1) & int(c.more)
		}
		// Decide each batch; r records the outcomes (see recorder).
		r := recorder{out: out, choose: choose, next: next, checks: p.checks, nChoose: nChoose, nNext: nNext}
		for _, d := range rs.batches[batchAlways][:n[batchAlways]] {
			r.record(d, true)
		}
		for _, d := range rs.batches[batchRollout][:n[batchRollout]] {
			r.record(d, s.strategies[d.strategy].rollout.defaultIn(stickyID, hasStickyID))
		}
		for _, d := range rs.batches[batchFieldRollout][:n[batchFieldRollout]] {
			cs := &s.strategies[d.strategy]
			f := &st.fields[cs.stickiness.field.slot] // looked up before the rounds
			r.record(d, f.present && f.value != "" && cs.rollout.hashIn(f.value))
		}
		others := rs.batches[batchOther][:n[batchOther]]
		st.touched += touchStrategies(s.strategies, others)
		for _, d := range others {
			r.record(d, s.strategies[d.strategy].decide(st))
		}
		nChoose, nNext = r.nChoose, r.nNext
		active = next[:nNext]
		rs.active, rs.next = rs.next, rs.active
	}
	st.touched += touchVariants(p.variants, choose[:nChoose])
	for _, d := range choose[:nChoose] {
		out[d.flag] = p.variants[d.strategy].choose(st)
	}
	roundPool.Put(rs)
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
