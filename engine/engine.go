package engine

import "time"

// Context is the evaluation context of one request. The empty string means
// "absent" for the built-in fields; Properties holds every other field.
type Context struct {
	UserID        string
	SessionID     string
	RemoteAddress string
	Environment   string
	AppName       string
	// CurrentTime is an RFC 3339 time; empty means now (Options.Now).
	CurrentTime string
	// Properties are custom context fields. A built-in field name is
	// looked up on the struct first, then here.
	Properties map[string]string
}

// CustomStrategy is a strategy implemented outside the engine (for example
// the proxy's script strategies). IsEnabled must be safe for concurrent
// use and must not modify parameters (one map per strategy, shared by all
// evaluations) or ctx. It runs after the strategy's constraints and
// segments hold. An error or a panic makes that strategy evaluate to false;
// it never takes the process down. Time limits are the implementation's
// job: the engine waits for IsEnabled to return.
type CustomStrategy interface {
	IsEnabled(parameters map[string]string, ctx *Context) (bool, error)
}

// Options tune compilation. The zero value is ready to use.
type Options struct {
	// CustomStrategies are looked up by strategy name for names the engine
	// does not know. Unknown names without an entry evaluate to false.
	CustomStrategies map[string]CustomStrategy
	// Hostname is the machine name for the applicationHostname strategy;
	// empty means $HOSTNAME or os.Hostname at compile time.
	Hostname string
	// Now returns the current time for DATE_* constraints when the context
	// has no currentTime; nil means time.Now.
	Now func() time.Time
}

// ResultVariant is the variant an evaluation resolved to. Pointers returned
// by a Snapshot stay valid and immutable for the Snapshot's lifetime, and ID
// is dense (0 ≤ ID < Snapshot.VariantCount()), so callers can precompute
// per-variant data (for example encoded JSON) in a slice indexed by ID.
type ResultVariant struct {
	ID             int
	Name           string
	Enabled        bool
	FeatureEnabled bool
	Payload        *VariantPayload
}

// Result is the outcome of evaluating one flag for one context.
type Result struct {
	// Index is the flag's position in the Snapshot (see Snapshot.Name), or
	// -1 when the flag does not exist.
	Index          int
	Name           string
	Found          bool
	Enabled        bool
	ImpressionData bool
	Variant        *ResultVariant
}
