package engine

// Test hooks: the external tests reach a few internals through these.

// EvaluateIndexWithoutMemo evaluates flag i without the per-evaluation
// constraint memo.
func (s *Snapshot) EvaluateIndexWithoutMemo(i int, ctx *Context) Result {
	st := newEvalState(ctx, s.now)
	return s.evaluate(i, &st)
}

// DistinctConstraints is the number of distinct compiled constraints.
func (s *Snapshot) DistinctConstraints() int { return s.constraintCount }
