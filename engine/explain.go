package engine

// Explaining an outcome: what the compiled flags say about why a flag
// came out as it did, for APIs that report a reason next to the value
// (OpenFeature's OFREP). Nothing here changes an outcome.

// FlagEnabled reports whether flag i, 0 ≤ i < Len(), is enabled in the
// payload (on in its environment); a disabled flag is off for everyone.
func (s *Snapshot) FlagEnabled(i int) bool { return s.flags[i].enabled }

// FlagHasVariants reports whether flag i, 0 ≤ i < Len(), can resolve to
// one of its own variants: it has feature variants or a strategy with
// variants.
func (s *Snapshot) FlagHasVariants(i int) bool {
	f := &s.flags[i]
	if f.variants != nil {
		return true
	}
	for j := f.s0; j < f.s1; j++ {
		if s.strategies[j].variants != nil {
			return true
		}
	}
	return false
}

// FlagTargeting describes flag i's strategies, 0 ≤ i < Len(): whether
// any and whether all of them have constraints (their own or their
// segments'), and whether the flag has dependencies. A flag without
// strategies has none targeted (all is false).
func (s *Snapshot) FlagTargeting(i int) (any, all, dependencies bool) {
	f := &s.flags[i]
	all = f.s1 > f.s0
	for j := f.s0; j < f.s1; j++ {
		if len(s.strategies[j].refs) > 0 {
			any = true
		} else {
			all = false
		}
	}
	return any, all, f.d1 > f.d0
}

// EvaluateTargeted is EvaluateIndex that also reports whether the
// strategy that turned the flag on has constraints (its own or its
// segments'); false when the flag is off or no strategy decided it.
func (s *Snapshot) EvaluateTargeted(i int, ctx *Context) (Result, bool) {
	if ctx == nil {
		ctx = &Context{}
	}
	st := newEvalState(ctx, s.now)
	st.constraints = s.constraints
	f := &s.flags[i]
	on, winner := s.isEnabled(f, &st)
	if !on {
		return s.result(i, OffVariantID), false
	}
	return s.result(i, variantFor(f, winner, &st)), winner != nil && len(winner.refs) > 0
}
