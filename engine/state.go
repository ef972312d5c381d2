package engine

import (
	"net/netip"
	"sync"
	"time"
)

// cachedField is a field's value looked up once per evaluation, with the
// typed forms the operators parse it into, each parsed at most once.
type cachedField struct {
	value   string
	present bool
	done    bool
	// parsed has a bit per typed form below that has been computed.
	parsed    parsedForms
	numberOK  bool
	versionOK bool
	addrOK    bool
	dateOK    bool
	hash      uint64
	number    float64
	version   semverValue
	addr      netip.Addr
	date      time.Time
}

// parsedForms says which typed forms of a cachedField are computed.
type parsedForms uint8

const (
	parsedNumber parsedForms = 1 << iota
	parsedVersion
	parsedAddr
	parsedDate
	parsedHash
)

// evalState is the per-evaluation scratch state. It lives on the caller's
// stack; nothing in it outlives one Evaluate/EvaluateAll/Match call.
type evalState struct {
	ctx *Context
	// constraints are the snapshot's (see Snapshot).
	constraints []constraint
	// memo records the outcomes of constraint tests (before inversion)
	// by test id for this evaluation (memoUnknown, memoFalse, memoTrue);
	// nil disables it.
	memo []uint8
	// fields caches field values by slot for this evaluation; nil
	// disables it.
	fields  []cachedField
	nowFunc func() time.Time
	now     time.Time
	hasNow  bool
	// remote is ctx.RemoteAddress parsed for the remoteAddress strategy
	// once remoteDone is set; remoteOK says it is an address.
	remote     netip.Addr
	remoteOK   bool
	remoteDone bool
	// decided holds the variant IDs of every flag by flag index when
	// EvaluateAllIDs has decided the flags without dependencies and
	// evaluates those with; nil otherwise (see Snapshot.satisfied).
	decided []VariantID
	// userHash is valueHash(ctx.UserID) once userHashDone is set.
	userHash     uint64
	userHashDone bool
	// touched keeps what the touch functions read (see touch.go).
	touched uint64
}

// Constraint test outcomes in evalState.memo.
const (
	memoUnknown uint8 = iota
	memoFalse
	memoTrue
)

// scratch is the reusable per-evaluation state that does not fit on the
// stack: the constraint memo and the field cache.
type scratch struct {
	memo   []uint8
	fields []cachedField
}

// scratchPool recycles scratch space so that evaluations do not allocate.
var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// getScratch returns cleared scratch space for a snapshot with the given
// numbers of distinct constraints and fields.
func getScratch(constraints, fields int) *scratch {
	s := scratchPool.Get().(*scratch)
	if cap(s.memo) < constraints {
		s.memo = make([]uint8, constraints)
	}
	if cap(s.fields) < fields {
		s.fields = make([]cachedField, fields)
	}
	s.memo, s.fields = s.memo[:constraints], s.fields[:fields]
	clear(s.memo)
	clear(s.fields)
	return s
}

// putScratch returns s to the pool without keeping context strings alive.
func putScratch(s *scratch) {
	clear(s.fields)
	scratchPool.Put(s)
}

func newEvalState(ctx *Context, now func() time.Time) evalState {
	return evalState{ctx: ctx, nowFunc: now}
}

// currentTime is the evaluation's "now", read once.
func (st *evalState) currentTime() time.Time {
	if !st.hasNow {
		if st.nowFunc != nil {
			st.now = st.nowFunc()
		} else {
			st.now = time.Now()
		}
		st.hasNow = true
	}
	return st.now
}

// remoteAddress is ctx.RemoteAddress parsed as an IP address, once per
// evaluation.
func (st *evalState) remoteAddress() (netip.Addr, bool) {
	if !st.remoteDone {
		st.remote, st.remoteOK = parseAddr(st.ctx.RemoteAddress)
		st.remoteDone = true
	}
	return st.remote, st.remoteOK
}

// value looks up field f in the context, once per evaluation.
func (st *evalState) value(f field) (string, bool) {
	if st.fields == nil {
		return f.lookup(st.ctx)
	}
	c := &st.fields[f.slot]
	if !c.done {
		c.value, c.present = f.lookup(st.ctx)
		c.done = true
	}
	return c.value, c.present
}

// cached returns the cache entry of field f after looking its value up,
// or nil when the evaluation has no field cache.
func (st *evalState) cached(f field) *cachedField {
	if st.fields == nil {
		return nil
	}
	c := &st.fields[f.slot]
	if !c.done {
		c.value, c.present = f.lookup(st.ctx)
		c.done = true
	}
	return c
}

// number is field f parsed as a number (see parseNumber), once per
// evaluation; false when it is absent or not a number.
func (st *evalState) number(f field) (float64, bool) {
	c := st.cached(f)
	if c == nil {
		v, ok := f.lookup(st.ctx)
		if !ok {
			return 0, false
		}
		return parseNumber(v)
	}
	if c.parsed&parsedNumber == 0 {
		if c.present {
			c.number, c.numberOK = parseNumber(c.value)
		}
		c.parsed |= parsedNumber
	}
	return c.number, c.numberOK
}

// version is field f parsed as a semantic version (see parseSemver), once
// per evaluation; false when it is absent or not a version.
func (st *evalState) version(f field) (semverValue, bool) {
	c := st.cached(f)
	if c == nil {
		v, ok := f.lookup(st.ctx)
		if !ok {
			return semverValue{}, false
		}
		return parseSemver(v)
	}
	if c.parsed&parsedVersion == 0 {
		if c.present {
			c.version, c.versionOK = parseSemver(c.value)
		}
		c.parsed |= parsedVersion
	}
	return c.version, c.versionOK
}

// addr is field f parsed as an IP address (see parseAddr), once per
// evaluation; false when it is absent or not an address.
func (st *evalState) addr(f field) (netip.Addr, bool) {
	c := st.cached(f)
	if c == nil {
		v, ok := f.lookup(st.ctx)
		if !ok {
			return netip.Addr{}, false
		}
		return parseAddr(v)
	}
	if c.parsed&parsedAddr == 0 {
		if c.present {
			c.addr, c.addrOK = parseAddr(c.value)
		}
		c.parsed |= parsedAddr
	}
	return c.addr, c.addrOK
}

// date is field f parsed as a date (see parseDate), once per evaluation;
// false when it is absent, empty or not a date.
func (st *evalState) date(f field) (time.Time, bool) {
	c := st.cached(f)
	if c == nil {
		v, ok := f.lookup(st.ctx)
		if !ok {
			return time.Time{}, false
		}
		return parseDate(v)
	}
	if c.parsed&parsedDate == 0 {
		if c.present {
			c.date, c.dateOK = parseDate(c.value)
		}
		c.parsed |= parsedDate
	}
	return c.date, c.dateOK
}

// dateOrNow is the instant DATE_* operators compare for field f, as
// constraint.testDate reads it: the field parsed as a date when present
// and not empty, the evaluation's current time for an absent or empty
// currentTime; false otherwise.
func (st *evalState) dateOrNow(f field) (time.Time, bool) {
	if v, ok := st.value(f); ok && v != "" {
		return st.date(f)
	}
	if f.kind == fieldCurrentTime {
		return st.currentTime(), true
	}
	return time.Time{}, false
}

// stickyValue is value for hashing: the empty string counts as missing.
func (st *evalState) stickyValue(f field) (string, bool) {
	v, ok := st.value(f)
	return v, ok && v != ""
}

// hash is valueHash of field f's value v, once per evaluation.
func (st *evalState) hash(f field, v string) uint64 {
	c := st.cached(f)
	if c == nil {
		return valueHash(v)
	}
	if c.parsed&parsedHash == 0 {
		c.hash = valueHash(v)
		c.parsed |= parsedHash
	}
	return c.hash
}

// userIDHash is valueHash of ctx.UserID, once per evaluation.
func (st *evalState) userIDHash() uint64 {
	if !st.userHashDone {
		st.userHash = valueHash(st.ctx.UserID)
		st.userHashDone = true
	}
	return st.userHash
}
