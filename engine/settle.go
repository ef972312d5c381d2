package engine

import (
	"maps"
	"slices"
)

// settlePlan is the first step of evaluating every flag with a plan (see
// allFlagsPlan): before any flag is walked, it settles into the memo the
// outcome of every constraint test the enabled flags use (their live
// tests): IN and NOT_IN through an index from values to the tests that list
// them, NUM_* and DATE_* with the field read and parsed once per field, the
// other operators one after another, grouped by operator so that
// consecutive tests take the same path (regular expressions too: RE2 runs
// in linear time). Walking the strategies then reads outcomes from the
// memo instead of branching into a different test at every constraint,
// which is what an evaluation of every flag spends most of its time on
// (mispredicted branches). The tests only disabled flags use stay lazy:
// evaluated if ever reached.
type settlePlan struct {
	// base is the memo every evaluation starts from: the outcome of the
	// IN and NOT_IN tests for a value no test lists, of broken and
	// unknown tests, and memoUnknown for the lazy ones. Its last entry,
	// past the tests, is a test that always holds (see strategyCheck).
	base []uint8
	// sets index the IN and NOT_IN tests by field.
	sets []valueIndex
	// numbers and dates are the NUM_* and DATE_* tests by field: the
	// field is read and parsed once, then each test is one comparison.
	numbers []numberGroup
	dates   []dateGroup
	// tests are the ids of the other tests settled eagerly, by operator.
	tests []int32
}

// valueIndex lists, for each value of a field, the IN and NOT_IN tests on
// that field whose values include it: the tests whose outcome that value
// turns around (IN to true, NOT_IN to false).
type valueIndex struct {
	field  field
	listed map[string][]int32
}

// numberGroup is the NUM_* tests of one field, ordered by operator.
type numberGroup struct {
	field field
	tests []numberTest
}

type numberTest struct {
	id      int32
	op      operator
	operand float64
}

// dateGroup is the DATE_* tests of one field, DATE_AFTER first.
type dateGroup struct {
	field field
	tests []dateTest
}

// dateTest compares with an instant as Unix seconds and nanoseconds, which
// compare like time.Time.After and Before for any year.
type dateTest struct {
	id    int32
	after bool
	sec   int64
	nsec  int64
}

// newSettlePlan plans the settling of the tests marked live (by test id)
// among constraints.
func newSettlePlan(constraints []constraint, live []bool) settlePlan {
	sentinel := len(constraints)
	p := settlePlan{base: make([]uint8, sentinel+1)}
	p.base[sentinel] = memoTrue
	sets := map[int32]*valueIndex{}
	numbers, dates := map[int32]*numberGroup{}, map[int32]*dateGroup{}
	for id := range constraints {
		c := &constraints[id]
		if !live[id] {
			continue
		}
		switch {
		case c.broken || c.op == opUnknown:
			p.base[id] = memoFalse
		case c.op == opIn || c.op == opNotIn:
			p.base[id] = memoFalse
			if c.op == opNotIn {
				p.base[id] = memoTrue
			}
			idx := groupOf(sets, c.field, func() *valueIndex { return &valueIndex{field: c.field, listed: map[string][]int32{}} })
			for _, v := range c.values {
				// A value listed twice must turn the outcome around once.
				if l := idx.listed[v]; len(l) == 0 || l[len(l)-1] != int32(id) {
					idx.listed[v] = append(l, int32(id))
				}
			}
		case c.op >= opNumEq && c.op <= opNumLte:
			p.base[id] = memoFalse // absent or not a number
			g := groupOf(numbers, c.field, func() *numberGroup { return &numberGroup{field: c.field} })
			g.tests = append(g.tests, numberTest{id: int32(id), op: c.op, operand: c.number})
		case c.op == opDateAfter || c.op == opDateBefore:
			p.base[id] = memoFalse // absent or not a date
			g := groupOf(dates, c.field, func() *dateGroup { return &dateGroup{field: c.field} })
			at := c.ext.date
			g.tests = append(g.tests, dateTest{id: int32(id), after: c.op == opDateAfter, sec: at.Unix(), nsec: int64(at.Nanosecond())})
		default:
			p.tests = append(p.tests, int32(id))
		}
	}
	p.sets, p.numbers, p.dates = inSlotOrder(sets), inSlotOrder(numbers), inSlotOrder(dates)
	for _, g := range p.numbers {
		slices.SortStableFunc(g.tests, func(a, b numberTest) int { return int(a.op) - int(b.op) })
	}
	for _, g := range p.dates {
		slices.SortStableFunc(g.tests, func(a, b dateTest) int { return b2i(b.after) - b2i(a.after) })
	}
	slices.SortStableFunc(p.tests, func(a, b int32) int {
		return int(constraints[a].op) - int(constraints[b].op)
	})
	return p
}

// groupOf returns the group of field f in groups, made by newGroup when
// there is none yet.
func groupOf[G any](groups map[int32]*G, f field, newGroup func() *G) *G {
	g := groups[f.slot]
	if g == nil {
		g = newGroup()
		groups[f.slot] = g
	}
	return g
}

// inSlotOrder returns the groups, keyed by field slot, in slot order.
func inSlotOrder[G any](groups map[int32]*G) []G {
	out := make([]G, 0, len(groups))
	for _, slot := range slices.Sorted(maps.Keys(groups)) {
		out = append(out, *groups[slot])
	}
	return out
}

// settle fills st.memo, which has the plan's size, with the plan's
// outcomes for st's context.
func (p *settlePlan) settle(st *evalState) {
	memo := st.memo
	copy(memo, p.base)
	for i := range p.sets {
		v, ok := st.value(p.sets[i].field)
		if !ok {
			continue
		}
		for _, id := range p.sets[i].listed[v] {
			memo[id] ^= memoFalse ^ memoTrue
		}
	}
	for i := range p.numbers {
		g := &p.numbers[i]
		if n, ok := st.number(g.field); ok {
			settleNumbers(memo, g.tests, n)
		}
	}
	for i := range p.dates {
		g := &p.dates[i]
		if t, ok := st.dateOrNow(g.field); ok {
			settleDates(memo, g.tests, t.Unix(), int64(t.Nanosecond()))
		}
	}
	st.touched += touchConstraints(st.constraints, p.tests)
	for _, id := range p.tests {
		outcome := memoFalse
		if st.constraints[id].test(st) {
			outcome = memoTrue
		}
		memo[id] = outcome
	}
}

// settleNumbers records the NUM_* tests of a field whose value is n.
func settleNumbers(memo []uint8, tests []numberTest, n float64) {
	for _, t := range tests {
		memo[t.id] = memoFalse + uint8(b2i(compareNumber(t.op, n, t.operand)))
	}
}

// settleDates records the DATE_* tests of a field whose instant is sec
// and nsec (Unix).
func settleDates(memo []uint8, tests []dateTest, sec, nsec int64) {
	for _, t := range tests {
		later := b2i(sec > t.sec) | b2i(sec == t.sec)&b2i(nsec > t.nsec)
		earlier := b2i(sec < t.sec) | b2i(sec == t.sec)&b2i(nsec < t.nsec)
		yes := earlier
		if t.after {
			yes = later
		}
		memo[t.id] = memoFalse + uint8(yes)
	}
}
