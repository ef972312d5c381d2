package engine

import (
	"math/rand/v2"
	"slices"
)

// Shared variants every snapshot starts with.
const (
	// disabledOffID is the "disabled" variant of a flag that is off.
	disabledOffID = 0
	// disabledOnID is the "disabled" variant of a flag that is on but
	// resolves no variant.
	disabledOnID = 1
)

// variantList is a compiled list of variants (a flag's or a strategy's).
type variantList struct {
	prefix      hashPrefix // "groupId:" under variantSeed
	stickiness  stickiness
	totalWeight uint32
	entries     []variantEntry
	overrides   []override
}

// variantEntry is one weighted variant, by its ID (see Snapshot.Variant).
type variantEntry struct {
	// upTo is the sum of the weights (each clamped to [0, 2^31-1]) of
	// this entry and those before it: a target in (previous upTo, upTo]
	// picks it.
	upTo uint64
	id   VariantID
}

// override pins the variant with ID id when field has one of values.
type override struct {
	field  field
	values []string
	id     VariantID
}

// compileVariants compiles vs hashed under group with the given stickiness
// name, registering one ResultVariant per entry.
func compileVariants(vs []Variant, group, sticky string, cfg *compileConfig) *variantList {
	vl := cfg.newVariantList()
	*vl = variantList{prefix: newHashPrefix(variantSeed, groupPrefix(group)), stickiness: newStickiness(sticky, cfg.fields), entries: cfg.newEntries(len(vs))}
	const maxTotal = 1<<31 - 1
	total, upTo := 0, uint64(0)
	for _, v := range vs {
		rv := cfg.newVariant(v)
		weight := min(max(v.Weight, 0), maxTotal)
		upTo += uint64(weight)
		vl.entries = append(vl.entries, variantEntry{upTo: upTo, id: VariantID(rv.ID)})
		total = min(total+weight, maxTotal)
		for _, o := range v.Overrides {
			vl.overrides = append(vl.overrides, override{field: cfg.fields.field(o.ContextName), values: slices.Clone(o.Values), id: VariantID(rv.ID)})
		}
	}
	vl.totalWeight = uint32(total)
	return vl
}

// choose picks the variant for ctx: an override first, then the weighted
// hash of the stickiness value. It returns NoVariantID when the weights sum
// to 0.
func (vl *variantList) choose(st *evalState) VariantID {
	if vl.totalWeight == 0 {
		return NoVariantID
	}
	for i := range vl.overrides {
		o := &vl.overrides[i]
		if v, ok := st.value(o.field); ok {
			for _, x := range o.values {
				if x == v {
					return o.id
				}
			}
		}
	}
	var target uint32
	if seed, ok := vl.seed(st); ok {
		target = vl.prefix.normalized(seed, vl.totalWeight)
	} else {
		target = rand.Uint32N(vl.totalWeight) + 1
	}
	// The first entry whose upTo reaches the target, found by counting
	// the entries below it rather than branching on each: that entry has
	// a positive weight, since target ≥ 1 and upTo only grows with one.
	below := 0
	for _, e := range vl.entries {
		below += b2i(e.upTo < uint64(target))
	}
	if below == len(vl.entries) {
		return NoVariantID // unreachable: the last upTo is at least totalWeight
	}
	return vl.entries[below].id
}

// seed is the stickiness value for hashing; false means "use a random
// target".
func (vl *variantList) seed(st *evalState) (string, bool) {
	ctx := st.ctx
	switch vl.stickiness.kind {
	case stickField:
		return st.stickyValue(vl.stickiness.field)
	case stickRandom:
		return "", false
	}
	switch {
	case ctx.UserID != "":
		return ctx.UserID, true
	case ctx.SessionID != "":
		return ctx.SessionID, true
	case ctx.RemoteAddress != "":
		return ctx.RemoteAddress, true
	}
	return "", false
}
