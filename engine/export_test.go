package engine

// Test hooks: the external tests reach a few internals through these.

// DistinctConstraints is the number of distinct compiled constraints.
func (s *Snapshot) DistinctConstraints() int { return s.constraintCount }
