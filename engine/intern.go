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
	byKey  map[string]int32
	fields *fieldTable
	// list holds the distinct constraints side by side, indexed by id.
	list []constraint
}

func newConstraintTable(fields *fieldTable) *constraintTable {
	return &constraintTable{byKey: make(map[string]int32), fields: fields}
}

// compile returns the id of the compiled form of c, shared with every
// identical constraint compiled before.
func (t *constraintTable) compile(c Constraint) int32 {
	key := constraintKey(c)
	if id, ok := t.byKey[key]; ok {
		return id
	}
	id := int32(len(t.list))
	t.list = append(t.list, constraint{})
	cc := &t.list[id]
	compileConstraint(cc, c, t.fields)
	cc.id = id
	t.byKey[key] = id
	return id
}

// size is the number of distinct constraints.
func (t *constraintTable) size() int { return len(t.list) }

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
