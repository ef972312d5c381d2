package engine

import (
	"sync"
	"time"
)

// fieldKind says where a context field lives: one of the built-in struct
// fields, or Properties.
type fieldKind uint8

const (
	fieldProperty fieldKind = iota
	fieldUserID
	fieldSessionID
	fieldRemoteAddress
	fieldEnvironment
	fieldAppName
	fieldCurrentTime
)

// field is a compiled reference to a context field by name.
type field struct {
	kind fieldKind
	name string
}

func newField(name string) field {
	switch name {
	case "userId":
		return field{kind: fieldUserID, name: name}
	case "sessionId":
		return field{kind: fieldSessionID, name: name}
	case "remoteAddress":
		return field{kind: fieldRemoteAddress, name: name}
	case "environment":
		return field{kind: fieldEnvironment, name: name}
	case "appName":
		return field{kind: fieldAppName, name: name}
	case "currentTime":
		return field{kind: fieldCurrentTime, name: name}
	}
	return field{kind: fieldProperty, name: name}
}

// lookup returns the value of the field and whether it is present. A
// built-in field that is empty on the struct falls back to Properties under
// the same name (what Node's resolveContextValue does); any other name is
// read from Properties only. A present property may be the empty string.
func (f field) lookup(ctx *Context) (string, bool) {
	var v string
	switch f.kind {
	case fieldUserID:
		v = ctx.UserID
	case fieldSessionID:
		v = ctx.SessionID
	case fieldRemoteAddress:
		v = ctx.RemoteAddress
	case fieldEnvironment:
		v = ctx.Environment
	case fieldAppName:
		v = ctx.AppName
	case fieldCurrentTime:
		v = ctx.CurrentTime
	}
	if v != "" {
		return v, true
	}
	if ctx.Properties == nil {
		return "", false
	}
	v, ok := ctx.Properties[f.name]
	return v, ok
}

// stickyValue is lookup for hashing: the empty string counts as missing.
func (f field) stickyValue(ctx *Context) (string, bool) {
	v, ok := f.lookup(ctx)
	return v, ok && v != ""
}

// evalState is the per-evaluation scratch state. It lives on the caller's
// stack; nothing in it outlives one Evaluate/EvaluateAll/Match call.
type evalState struct {
	ctx *Context
	// memo records constraint outcomes by constraint id for this
	// evaluation (memoUnknown, memoFalse, memoTrue); nil disables it.
	memo    []uint8
	nowFunc func() time.Time
	now     time.Time
	hasNow  bool
}

// Constraint outcomes in evalState.memo.
const (
	memoUnknown uint8 = iota
	memoFalse
	memoTrue
)

// memoPool recycles memo buffers so that evaluations do not allocate them.
var memoPool = sync.Pool{New: func() any { return new([]uint8) }}

// getMemo returns a cleared memo of n entries from the pool.
func getMemo(n int) *[]uint8 {
	m := memoPool.Get().(*[]uint8)
	if cap(*m) < n {
		*m = make([]uint8, n)
	}
	*m = (*m)[:n]
	clear(*m)
	return m
}

func putMemo(m *[]uint8) { memoPool.Put(m) }

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
