package ofrep

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/wire"
)

// How a flag's "on, no variant" outcome gets its reason.
const (
	onStatic    uint8 = iota // no strategy has constraints
	onTargeted               // every strategy has constraints
	onEvaluated              // some do: the winner decides (one more evaluation)
)

// Shared answer tails: an evaluated flag is its head (`{"key":"…"`) then
// one of these or a variant's tail.
var (
	tailOnStatic     = []byte(`,"value":true,"reason":"STATIC","variant":"enabled"}`)
	tailOnTargeted   = []byte(`,"value":true,"reason":"TARGETING_MATCH","variant":"enabled"}`)
	tailOffDisabled  = []byte(`,"value":false,"reason":"DISABLED","variant":"disabled"}`)
	tailOffTargeted  = []byte(`,"value":false,"reason":"TARGETING_MATCH","variant":"disabled"}`)
	tailOffStatic    = []byte(`,"value":false,"reason":"STATIC","variant":"disabled"}`)
	tailVariantOff   = []byte(`,"reason":"DISABLED","metadata":{"enabled":false}}`)
	snapshotSequence atomic.Uint64
)

// span is where a fragment lies in encoding.blob.
type span struct{ start, end uint32 }

// encoding is what a snapshot's answers are made of, built once per
// snapshot: every answer a flag can get, whole and after a comma
// (`,{"key":…}`), so that a bulk answer is one copy per flag. A flag's
// fragments (off, on, its variants') lie together, in flag order.
type encoding struct {
	snap *engine.Snapshot
	blob []byte
	// offs[i] is flag i off; ons[i] flag i on without a variant, [0] when
	// its winner has no constraints and [1] when it has (the same span
	// unless onKind[i] is onEvaluated); variants[id] a flag on with
	// variant id (or, when failed[id], its evaluation failure).
	offs     []span
	ons      [][2]span
	variants []span
	onKind   []uint8
	failed   []bool
	// evaluated are the flags whose onKind is onEvaluated, in order.
	evaluated []int32
	version   uint64 // changes with the configuration (see configVersion)
	stream    atomic.Pointer[streamTail]
}

func newEncoding(s *engine.Snapshot) *encoding {
	e := &encoding{
		snap: s, offs: make([]span, s.Len()), ons: make([][2]span, s.Len()), onKind: make([]uint8, s.Len()),
		variants: make([]span, s.VariantCount()), failed: make([]bool, s.VariantCount()),
	}
	byFlag := make([][]int, s.Len())
	for id := range e.variants {
		if f := s.VariantFlag(id); f >= 0 { // not the shared "disabled" variants
			byFlag[f] = append(byFlag[f], id)
		}
	}
	// Two passes of the same walk: the first measures the fragments, so
	// that the blob is allocated once at its size (a large configuration's
	// would otherwise be grown by doubling, or kept with room to spare).
	var blob, head []byte
	size, measuring := 0, true
	tails := make([][]byte, s.VariantCount()) // rendered while measuring
	add := func(tail []byte) span {
		if measuring {
			size += 1 + len(head) + len(tail)
			return span{}
		}
		start := len(blob)
		blob = append(append(append(blob, ','), head...), tail...)
		return span{uint32(start), uint32(len(blob))}
	}
	walk := func() {
		e.evaluated = e.evaluated[:0]
		for i := range e.offs {
			head = wire.AppendJSONString(append(head[:0], `{"key":`...), s.Name(i))
			any, all, deps := s.FlagTargeting(i)
			switch {
			case s.FlagHasVariants(i):
				e.offs[i] = add(tailVariantOff)
			case !s.FlagEnabled(i):
				e.offs[i] = add(tailOffDisabled)
			case any || deps:
				e.offs[i] = add(tailOffTargeted)
			default:
				e.offs[i] = add(tailOffStatic)
			}
			switch {
			case all:
				e.onKind[i] = onTargeted
				e.ons[i][0] = add(tailOnTargeted)
				e.ons[i][1] = e.ons[i][0]
			case any:
				e.onKind[i] = onEvaluated
				e.evaluated = append(e.evaluated, int32(i))
				e.ons[i] = [2]span{add(tailOnStatic), add(tailOnTargeted)}
			default:
				e.onKind[i] = onStatic
				e.ons[i][0] = add(tailOnStatic)
				e.ons[i][1] = e.ons[i][0]
			}
			for _, id := range byFlag[i] {
				if measuring {
					tails[id], e.failed[id] = variantTail(s.Variant(id))
				}
				e.variants[id] = add(tails[id])
			}
		}
	}
	walk()
	blob, measuring = make([]byte, 0, size), false
	walk()
	e.blob = blob
	e.version = configVersion(s)
	return e
}

// configVersion identifies a snapshot's configuration: a digest of its
// payload when the snapshot keeps it (equal configurations, equal
// versions, across processes), else a number no other snapshot of this
// process has.
func configVersion(s *engine.Snapshot) uint64 {
	if cf := s.Features(); cf != nil && (len(cf.Features) > 0 || s.Len() == 0) {
		if body, err := json.Marshal(cf); err == nil {
			return xxhash.Sum64(body)
		}
	}
	return snapshotSequence.Add(1) | 1<<63
}

// variantTail renders a variant's answer tail, decoding its payload by
// type; failed reports a payload that does not decode.
func variantTail(v *engine.ResultVariant) (tail []byte, failed bool) {
	var value []byte
	payloadType := ""
	if p := v.Payload; p == nil {
		value = wire.JSONString(v.Name)
	} else {
		payloadType = p.Type
		switch p.Type {
		case "number":
			n := bytes.TrimSpace([]byte(p.Value))
			if !isJSONNumber(n) {
				return failure(CodeParseError, "variant "+strconv.Quote(v.Name)+" has a number payload that is not a number"), true
			}
			value = n
		case "json":
			var b bytes.Buffer
			if err := json.Compact(&b, []byte(p.Value)); err != nil || b.Len() == 0 {
				return failure(CodeParseError, "variant "+strconv.Quote(v.Name)+" has a json payload that is not JSON"), true
			}
			value = b.Bytes()
		default: // string, csv and types this version does not know
			value = wire.JSONString(p.Value)
		}
	}
	t := append([]byte(`,"value":`), value...)
	t = append(t, `,"reason":"SPLIT","variant":`...)
	t = append(t, wire.JSONString(v.Name)...)
	t = append(t, `,"metadata":{"enabled":true`...)
	if payloadType != "" {
		t = append(append(t, `,"payloadType":`...), wire.JSONString(payloadType)...)
	}
	return append(t, "}}"...), false
}

func failure(code, details string) []byte {
	t := append([]byte(`,"errorCode":`), wire.JSONString(code)...)
	t = append(append(t, `,"errorDetails":`...), wire.JSONString(details)...)
	return append(t, '}')
}

// isJSONNumber reports whether b is one JSON number.
func isJSONNumber(b []byte) bool {
	if len(b) == 0 || !json.Valid(b) {
		return false
	}
	c := b[0]
	return c == '-' || (c >= '0' && c <= '9')
}

// answer is flag i's answer for id after a comma; targeted is whether
// the winner of an "on, no variant" outcome has constraints (read only
// when onKind[i] is onEvaluated).
func (e *encoding) answer(i int, id engine.VariantID, targeted bool) []byte {
	sp := e.ons[i][b2i(targeted)]
	switch {
	case id == engine.OffVariantID:
		sp = e.offs[i]
	case id != engine.NoVariantID && int(id) < len(e.variants) && e.variants[id].end > 0:
		sp = e.variants[id]
	}
	return e.blob[sp.start:sp.end:sp.end]
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
