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
	weight uint32 // clamped to [0, 2^31-1]
	id     VariantID
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
	total := 0
	for _, v := range vs {
		rv := cfg.newVariant(v)
		weight := min(max(v.Weight, 0), maxTotal)
		vl.entries = append(vl.entries, variantEntry{weight: uint32(weight), id: VariantID(rv.ID)})
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
	var acc uint64
	for _, e := range vl.entries {
		acc += uint64(e.weight)
		if e.weight > 0 && acc >= uint64(target) {
			return e.id
		}
	}
	return NoVariantID
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
