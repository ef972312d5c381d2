package engine

// Touching memory before using it.
//
// In a server, the network stack and other processes run between two
// evaluations and push much of a snapshot out of the per-core caches. An
// evaluation that then walks a list of flags and, for each, follows
// pointers into scattered memory (a strategy, its operands, a variant
// list and its entries) waits for each of those cache misses in turn: the
// work on one item is long enough that the processor cannot look ahead to
// the next item's loads.
//
// The touch functions walk such a list first, reading one word of each
// piece of memory the real pass will need and adding it to a sum, which
// the caller keeps (evalState.touched) so that the reads are not
// optimised away. Their iterations are a few instructions with no
// dependency on one another, so many misses are under way at once and the
// real pass that follows finds the memory in cache. When the memory is
// already in cache, a touch costs a few instructions per item.
//
// The all-flags plan touches before settling the operator-grouped tests
// (settlePlan.settle), deciding the strategies of batchOther and choosing
// the winners' variants (decideInRounds). Together they cost about 2 % of
// the instructions of an evaluation with every cache hot, and save a
// quarter of its CPU time when 8 MB were written between evaluations
// (docs/engine.md has the figures; callgrind cannot show the gain, since
// it counts misses without telling whether they overlap).

// touchVariants touches the variant list, and its first entry, that each
// decision will choose from (variants by strategy index).
func touchVariants(variants []*variantList, ds []decision) uint64 {
	var sum uint64
	for _, d := range ds {
		sum += touchVariantList(variants[d.strategy])
	}
	return sum
}

// touchVariantList reads the word of vl that choosing reads first and the
// first of its entries.
func touchVariantList(vl *variantList) uint64 {
	sum := uint64(vl.totalWeight)
	if len(vl.entries) > 0 {
		sum += vl.entries[0].upTo
	}
	return sum
}

// touchStrategies touches the strategies that the decisions will decide
// one by one, and the operands they keep apart.
func touchStrategies(strategies []strategy, ds []decision) uint64 {
	var sum uint64
	for _, d := range ds {
		cs := &strategies[d.strategy]
		sum += uint64(cs.algo)
		if x := cs.ext; x != nil {
			sum += uint64(len(x.userHashes) + len(x.prefixes))
		}
	}
	return sum
}

// touchConstraints touches the constraints with the given ids and the
// operands they keep apart.
func touchConstraints(constraints []constraint, ids []int32) uint64 {
	var sum uint64
	for _, id := range ids {
		c := &constraints[id]
		sum += uint64(c.op)
		if x := c.ext; x != nil {
			sum += uint64(x.version.major)
		}
	}
	return sum
}
