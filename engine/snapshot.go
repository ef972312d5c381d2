package engine

// Snapshot is a compiled, immutable set of flags. All methods are safe for
// concurrent use.
//
// NOTE: the bodies below are placeholders that fix the API shape; the
// engine implementation replaces them.
type Snapshot struct {
	_ struct{}
}

// Compile turns a client features payload into a Snapshot. It never fails:
// invalid constraint values compile to constraints that do not match (with
// the inversion semantics of the reference), unknown strategies to false.
func Compile(cf *ClientFeatures, opts Options) *Snapshot { panic("engine: Compile not implemented yet") }

// Len is the number of flags in the snapshot.
func (s *Snapshot) Len() int { panic("engine: not implemented yet") }

// Name is the name of flag i, 0 ≤ i < Len(), in payload order.
func (s *Snapshot) Name(i int) string { panic("engine: not implemented yet") }

// Index finds a flag by exact name.
func (s *Snapshot) Index(name string) (int, bool) { panic("engine: not implemented yet") }

// VariantCount bounds ResultVariant.ID for this snapshot.
func (s *Snapshot) VariantCount() int { panic("engine: not implemented yet") }

// Variant returns the variant with the given ID.
func (s *Snapshot) Variant(id int) *ResultVariant { panic("engine: not implemented yet") }

// Evaluate evaluates one flag by name. A missing flag gives Found=false,
// Enabled=false and the disabled variant.
func (s *Snapshot) Evaluate(name string, ctx *Context) Result { panic("engine: not implemented yet") }

// EvaluateIndex evaluates flag i.
func (s *Snapshot) EvaluateIndex(i int, ctx *Context) Result { panic("engine: not implemented yet") }

// EvaluateAll appends the result of every flag, in snapshot order, to dst
// and returns it. It allocates nothing per flag when dst has capacity.
func (s *Snapshot) EvaluateAll(ctx *Context, dst []Result) []Result {
	panic("engine: not implemented yet")
}

// Features returns the payload the snapshot was compiled from. Callers must
// not modify it.
func (s *Snapshot) Features() *ClientFeatures { panic("engine: not implemented yet") }

// Matcher is a compiled list of constraints (ANDed), usable outside flag
// evaluation, for example to filter signal payloads.
type Matcher struct {
	_ struct{}
}

// CompileConstraints compiles constraints once for repeated matching.
func CompileConstraints(cs []Constraint, opts Options) *Matcher {
	panic("engine: not implemented yet")
}

// Match reports whether every constraint holds for ctx.
func (m *Matcher) Match(ctx *Context) bool { panic("engine: not implemented yet") }
