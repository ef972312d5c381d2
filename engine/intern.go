package engine

import (
	"hash/maphash"
	"strconv"
	"strings"
)

// hashSeed seeds valueHash for the life of the process.
var hashSeed = maphash.MakeSeed()

// valueHash is the hash of a constraint or user id value compared before
// the strings themselves.
func valueHash(s string) uint64 { return maphash.String(hashSeed, s) }

// hashArena hands out uint64 slices from shared chunks, so that the hash
// arrays of a snapshot lie next to each other in memory.
type hashArena struct {
	free []uint64
}

// hashChunk is how many hashes an arena allocates at once.
const hashChunk = 1024

// alloc returns a slice of n hashes; a nil arena allocates it alone.
func (a *hashArena) alloc(n int) []uint64 {
	if a == nil || n > hashChunk/4 {
		return make([]uint64, n)
	}
	if len(a.free) < n {
		a.free = make([]uint64, hashChunk)
	}
	out := a.free[:n:n]
	a.free = a.free[n:]
	return out
}

// constraintTable compiles the constraints of one snapshot, sharing one
// compiled constraint between identical ones (segments referenced by many
// strategies, the same environment or user list on many flags) and
// numbering them for the per-evaluation memo.
type constraintTable struct {
	byKey  map[string]int32
	fields *fieldTable
	// list holds the distinct constraints side by side, indexed by id.
	list []constraint
	// hashes holds the value hashes of IN/NOT_IN constraints side by side.
	hashes hashArena
}

func newConstraintTable(fields *fieldTable) *constraintTable {
	return &constraintTable{byKey: make(map[string]int32), fields: fields}
}

// compile returns a reference to the compiled form of c: the id of its
// test, shared with every constraint compiled before that differs from it
// at most in Inverted, shifted left by one, with the low bit set when c is
// inverted (see evalState.allHold). An unknown operator never holds,
// inverted or not, so its reference is never inverted.
func (t *constraintTable) compile(c Constraint) int32 {
	inverted := c.Inverted && operatorsByName[c.Operator] != opUnknown
	c.Inverted = false
	key := constraintKey(c)
	id, ok := t.byKey[key]
	if !ok {
		id = int32(len(t.list))
		t.list = append(t.list, constraint{})
		cc := &t.list[id]
		compileConstraint(cc, c, t.fields, &t.hashes)
		cc.id = id
		t.byKey[key] = id
	}
	ref := id << 1
	if inverted {
		ref |= 1
	}
	return ref
}

// size is the number of distinct constraint tests.
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
