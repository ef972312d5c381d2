package engine

// Test hooks: the external tests reach a few internals through these.

// DistinctConstraints is the number of distinct compiled constraints.
func (s *Snapshot) DistinctConstraints() int { return len(s.constraints) }

// EagerMinFlags is the snapshot size from which EvaluateAll follows an
// allFlagsPlan (settling constraint tests eagerly, deciding in rounds).
const EagerMinFlags = planMinFlags
