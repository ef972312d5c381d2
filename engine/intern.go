package engine

import (
	"strconv"
	"strings"
)

// constraintTable compiles the constraints of one snapshot, sharing one
// compiled constraint between identical ones (segments referenced by many
// strategies, the same environment or user list on many flags) and
// numbering them for the per-evaluation memo.
type constraintTable struct {
	byKey  map[string]*constraint
	fields *fieldTable
	// free is where the next constraints are allocated, side by side.
	free []constraint
}

// slabSize is how many constraints or strategies are allocated at once,
// so that those of one snapshot lie next to each other in memory.
const slabSize = 256

func newConstraintTable(fields *fieldTable) *constraintTable {
	return &constraintTable{byKey: make(map[string]*constraint), fields: fields}
}

// compile returns the compiled form of c, shared with every identical
// constraint compiled before.
func (t *constraintTable) compile(c Constraint) *constraint {
	key := constraintKey(c)
	if cc, ok := t.byKey[key]; ok {
		return cc
	}
	if len(t.free) == 0 {
		t.free = make([]constraint, slabSize)
	}
	cc := &t.free[0]
	t.free = t.free[1:]
	compileConstraint(cc, c, t.fields)
	cc.id = int32(len(t.byKey))
	t.byKey[key] = cc
	return cc
}

// size is the number of distinct constraints.
func (t *constraintTable) size() int { return len(t.byKey) }

// constraintKey identifies a constraint by everything that affects its
// result; strings are length-prefixed so no two constraints share a key.
func constraintKey(c Constraint) string {
	var b strings.Builder
	put := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	put(c.ContextName)
	put(c.Operator)
	put(c.Value)
	b.WriteString(strconv.FormatBool(c.CaseInsensitive))
	b.WriteString(strconv.FormatBool(c.Inverted))
	b.WriteString(strconv.Itoa(len(c.Values)))
	for _, v := range c.Values {
		put(v)
	}
	return b.String()
}
