package engine

import "slices"

// The one-flag path: Evaluate → EvaluateIndex → evaluateID → isEnabled
// (dependencies, then each strategy: constraints, then its algorithm) →
// variantFor. EvaluateAllIDs uses it too, for the flags it does not decide
// in rounds (see allFlagsPlan).

// Evaluate evaluates one flag by name. A missing flag gives Found=false,
// Enabled=false and the disabled variant.
func (s *Snapshot) Evaluate(name string, ctx *Context) Result {
	i, ok := s.index[name]
	if !ok {
		return Result{Index: -1, Name: name, Variant: s.variants[disabledOffID]}
	}
	return s.EvaluateIndex(i, ctx)
}

// EvaluateIndex evaluates flag i, 0 ≤ i < Len(). A nil ctx is an empty
// context.
func (s *Snapshot) EvaluateIndex(i int, ctx *Context) Result {
	if ctx == nil {
		ctx = &Context{}
	}
	// One flag rarely repeats a constraint; clearing a memo sized for the
	// whole snapshot would cost more than it saves.
	st := newEvalState(ctx, s.now)
	st.constraints = s.constraints
	return s.result(i, s.evaluateID(i, &st))
}

// evaluateID evaluates flag i to its variant ID.
func (s *Snapshot) evaluateID(i int, st *evalState) VariantID {
	f := &s.flags[i]
	on, winner := s.isEnabled(f, st)
	if !on {
		return OffVariantID
	}
	return variantFor(f, winner, st)
}

// isEnabled evaluates f and returns the strategy that enabled it (nil when
// the flag is off or has no strategies).
func (s *Snapshot) isEnabled(f *flag, st *evalState) (bool, *strategy) {
	if !f.enabled {
		return false, nil
	}
	for i := f.d0; i < f.d1; i++ {
		if !s.satisfied(&s.dependencies[i], st) {
			return false, nil
		}
	}
	if !f.hasStrategies {
		return true, nil
	}
	// Compile dropped the strategies that can never match.
	for j := f.s0; j < f.s1; j++ {
		cs := &s.strategies[j]
		if len(cs.refs) > 0 && !st.allHold(cs.refs) {
			continue
		}
		if cs.decide(st) {
			return true, cs
		}
	}
	return false, nil
}

// variantFor resolves the variant of a flag evaluated to on, won by
// winner (nil when no strategy decided it): the strategy's variants when
// it has some, else the flag's.
func variantFor(f *flag, winner *strategy, st *evalState) VariantID {
	vl := f.variants
	if winner != nil && winner.variants != nil {
		vl = winner.variants
	}
	if vl == nil {
		return NoVariantID
	}
	return vl.choose(st)
}

// satisfied checks one dependency. Parents have no dependencies (compile
// guarantees it), so this never recurses further: a parent is evaluated
// with the child's context, or, when EvaluateAllIDs evaluates every flag
// (and so has decided every flag without dependencies first), its outcome
// is read back.
func (s *Snapshot) satisfied(d *dependency, st *evalState) bool {
	if d.parent < 0 {
		return false
	}
	var on bool
	id := NoVariantID
	if st.decided != nil {
		id = st.decided[d.parent]
		on = id != OffVariantID
	} else {
		p := &s.flags[d.parent]
		var winner *strategy
		on, winner = s.isEnabled(p, st)
		if on && d.wantEnabled && len(d.variants) > 0 {
			id = variantFor(p, winner, st)
		}
	}
	if !d.wantEnabled {
		return !on
	}
	if !on {
		return false
	}
	if len(d.variants) == 0 {
		return true
	}
	return slices.Contains(d.variants, s.variants[id].Name)
}
