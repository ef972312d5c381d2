package engine

// Explaining one flag in full, for an admin playground: every strategy in
// payload order (disabled ones too, as if enabled), each constraint's and segment's
// result, the dependencies, and the variant. Compile drops the strategies
// that can never match and shares identical constraints between flags, so
// the snapshot alone cannot say which of the payload's constraints failed;
// Explain compiles the flag's strategies again from the payload, with the
// same compile and decision code evaluation uses (compileStrategy,
// constraint.test through evalState.allHold, strategy.decide,
// variantList.choose). Nothing on the evaluation paths changes.

// FlagExplanation says why a flag came out as it did for one context.
type FlagExplanation struct {
	// Name is the flag's name.
	Name string
	// FlagEnabled reports whether the flag is on in its environment.
	FlagEnabled bool
	// Enabled is the outcome: on in its environment, every dependency
	// satisfied, and no strategies or one of them enabled.
	Enabled bool
	// Variant is the variant the flag resolves to; the disabled variant
	// (Enabled false) when it is off or has no variant.
	Variant ExplainedVariant
	// DependenciesSatisfied reports whether every dependency is
	// satisfied (true without dependencies).
	DependenciesSatisfied bool
	// Dependencies explain the flag's dependencies, in payload order.
	Dependencies []DependencyExplanation
	// Strategies explain every strategy in payload order. Each enabled
	// strategy is evaluated, also those after the one that decided.
	Strategies []StrategyExplanation
	// Winner is the index in Strategies of the first strategy that is
	// enabled and not disabled (the one that turns the flag on when it is on in its
	// environment and its dependencies hold), or -1.
	Winner int
}

// ExplainedVariant is a variant an explanation reports.
type ExplainedVariant struct {
	// Name is "disabled" for the disabled variant.
	Name    string
	Enabled bool
	Payload *VariantPayload
	// FromStrategy reports that the variant comes from the winning
	// strategy's variants rather than the flag's.
	FromStrategy bool
}

// StrategyExplanation explains one strategy.
type StrategyExplanation struct {
	// Strategy is the strategy as the payload has it.
	Strategy Strategy
	// Constraints are the strategy's own constraints with their results.
	Constraints []ConstraintExplanation
	// Segments are the strategy's segments with their results.
	Segments []SegmentExplanation
	// ConstraintsHold reports whether every constraint and every segment
	// holds.
	ConstraintsHold bool
	// Known reports whether the engine knows the strategy's name (a
	// built-in or a custom strategy of Options); an unknown strategy is
	// never enabled.
	Known bool
	// Evaluated reports whether the strategy's algorithm ran: it is known
	// and its constraints hold.
	Evaluated bool
	// Enabled reports whether the strategy says yes for the context. A
	// disabled strategy is evaluated as if it were enabled (what it would
	// say) but never turns the flag on.
	Enabled bool
	// Variant is the variant of the strategy's own variants the context
	// gets, when the strategy is enabled and has variants.
	Variant *ExplainedVariant
}

// ConstraintExplanation is one constraint and its result.
type ConstraintExplanation struct {
	Constraint Constraint
	// Value is the context's value of the constraint's field and Present
	// whether the context has that field.
	Value   string
	Present bool
	// Holds is the constraint's result, inversion included.
	Holds bool
}

// SegmentExplanation is one segment of a strategy and its result.
type SegmentExplanation struct {
	ID   int
	Name string
	// Found is false when the payload lacks the segment, which makes the
	// strategy never match.
	Found       bool
	Constraints []ConstraintExplanation
	// Holds reports whether the segment was found and all its constraints
	// hold.
	Holds bool
}

// DependencyExplanation is one dependency on a parent flag and its result.
type DependencyExplanation struct {
	Dependency Dependency
	// Found is false when the parent is missing or has dependencies of its
	// own, which makes the dependency unsatisfiable.
	Found bool
	// ParentEnabled and ParentVariant are the parent's outcome for the
	// same context.
	ParentEnabled bool
	ParentVariant string
	Satisfied     bool
}

// Explain evaluates flag i, 0 ≤ i < Len(), for ctx (nil is an empty
// context) and says why. Its outcome (Enabled, Variant) is the one
// EvaluateIndex gives, except that random rollouts draw again. It is meant
// for people, not for the SDK path: it allocates and compiles the flag's
// strategies each time.
func (s *Snapshot) Explain(i int, ctx *Context) FlagExplanation {
	if ctx == nil {
		ctx = &Context{}
	}
	f := &s.features.Features[i]
	ex := FlagExplanation{Name: f.Name, FlagEnabled: f.Enabled, Winner: -1}
	ex.Dependencies, ex.DependenciesSatisfied = s.explainDependencies(i, ctx)

	cfg := newCompileConfig(s.hostname, s.custom)
	segments := s.compileSegmentsOf(f, cfg)
	st := newEvalState(ctx, s.now)
	var winner *strategy
	for _, ps := range f.Strategies {
		se := StrategyExplanation{Strategy: ps}
		refs := make([]int32, len(ps.Constraints))
		for k, c := range ps.Constraints {
			refs[k] = cfg.constraints.compile(c)
		}
		se.Known = compileStrategy(f.Name, ps, segments, cfg)
		cs := &cfg.strategies[len(cfg.strategies)-1]
		st.constraints = cfg.constraints.list
		se.Constraints = explainConstraints(ps.Constraints, refs, cfg, &st)
		se.ConstraintsHold = allExplainedHold(se.Constraints)
		for _, id := range ps.Segments {
			sg := s.explainSegment(id, segments[id], cfg, &st)
			se.ConstraintsHold = se.ConstraintsHold && sg.Holds
			se.Segments = append(se.Segments, sg)
		}
		if se.Known && se.ConstraintsHold {
			se.Evaluated = true
			se.Enabled = cs.decide(&st)
		}
		if se.Enabled && cs.variants != nil {
			v := explainedVariant(cfg.variants[cs.variants.choose(&st)], true)
			se.Variant = &v
		}
		if se.Enabled && !ps.Disabled && ex.Winner < 0 {
			ex.Winner, winner = len(ex.Strategies), cs
		}
		ex.Strategies = append(ex.Strategies, se)
	}
	ex.Enabled = ex.FlagEnabled && ex.DependenciesSatisfied && (len(f.Strategies) == 0 || winner != nil)
	id := OffVariantID
	if ex.Enabled {
		flagVariants := compileFlagVariants(*f, cfg)
		id = variantFor(&flag{variants: flagVariants}, winner, &st)
	}
	ex.Variant = explainedVariant(cfg.variants[id], winner != nil && winner.variants != nil && id != NoVariantID)
	return ex
}

// compileSegmentsOf compiles the segments f's strategies use, by id; a
// segment the payload lacks is left out (see compileStrategy).
func (s *Snapshot) compileSegmentsOf(f *Feature, cfg *compileConfig) map[int][]int32 {
	out := map[int][]int32{}
	for _, ps := range f.Strategies {
		for _, id := range ps.Segments {
			seg, ok := s.payloadSegment(id)
			if _, done := out[id]; !ok || done {
				continue
			}
			refs := make([]int32, len(seg.Constraints))
			for k, c := range seg.Constraints {
				refs[k] = cfg.constraints.compile(c)
			}
			out[id] = refs
		}
	}
	return out
}

// payloadSegment finds a segment of the payload by id.
func (s *Snapshot) payloadSegment(id int) (*Segment, bool) {
	s.segmentsOnce.Do(func() {
		s.segments = make(map[int]*Segment, len(s.features.Segments))
		for k := range s.features.Segments {
			sg := &s.features.Segments[k]
			s.segments[sg.ID] = sg
		}
	})
	sg, ok := s.segments[id]
	return sg, ok
}

// explainSegment explains segment id, whose constraints compiled to refs.
func (s *Snapshot) explainSegment(id int, refs []int32, cfg *compileConfig, st *evalState) SegmentExplanation {
	seg, ok := s.payloadSegment(id)
	if !ok {
		return SegmentExplanation{ID: id}
	}
	cs := explainConstraints(seg.Constraints, refs, cfg, st)
	return SegmentExplanation{ID: id, Name: seg.Name, Found: true, Constraints: cs, Holds: allExplainedHold(cs)}
}

// explainConstraints evaluates each constraint of cs, compiled to refs in
// cfg, on its own.
func explainConstraints(cs []Constraint, refs []int32, cfg *compileConfig, st *evalState) []ConstraintExplanation {
	out := make([]ConstraintExplanation, len(cs))
	for k, c := range cs {
		ref := refs[k : k+1]
		v, ok := cfg.constraints.list[ref[0]>>1].field.lookup(st.ctx)
		out[k] = ConstraintExplanation{Constraint: c, Value: v, Present: ok, Holds: st.allHold(ref)}
	}
	return out
}

func allExplainedHold(cs []ConstraintExplanation) bool {
	for _, c := range cs {
		if !c.Holds {
			return false
		}
	}
	return true
}

func explainedVariant(v *ResultVariant, fromStrategy bool) ExplainedVariant {
	return ExplainedVariant{Name: v.Name, Enabled: v.Enabled, Payload: v.Payload, FromStrategy: fromStrategy}
}

// explainDependencies explains flag i's dependencies through the snapshot
// (a parent is evaluated as EvaluateIndex evaluates it).
func (s *Snapshot) explainDependencies(i int, ctx *Context) ([]DependencyExplanation, bool) {
	f := &s.flags[i]
	payload := s.features.Features[i].Dependencies
	st := newEvalState(ctx, s.now)
	st.constraints = s.constraints
	all := true
	var out []DependencyExplanation
	for k := f.d0; k < f.d1; k++ {
		d := &s.dependencies[k]
		de := DependencyExplanation{Dependency: payload[k-f.d0], Found: d.parent >= 0}
		if de.Found {
			p := &s.flags[d.parent]
			on, winner := s.isEnabled(p, &st)
			de.ParentEnabled = on
			if on {
				de.ParentVariant = s.variants[variantFor(p, winner, &st)].Name
			}
		}
		de.Satisfied = s.satisfied(d, &st)
		all = all && de.Satisfied
		out = append(out, de)
	}
	return out, all
}
