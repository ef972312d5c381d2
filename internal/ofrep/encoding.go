package ofrep

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"

	"github.com/bunting-flags/bunting/engine"
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
	tailOnByReason   = [...][]byte{onStatic: tailOnStatic, onTargeted: tailOnTargeted}
	snapshotSequence atomic.Uint64
)

// encoding is what a snapshot's answers are made of, built once per
// snapshot: per flag its head, its off tail and how its reason is found;
// per variant its tail (value, variant, SPLIT, metadata), or a
// PARSE_ERROR tail when its payload does not decode.
type encoding struct {
	snap   *engine.Snapshot
	heads  [][]byte
	offs   [][]byte
	onKind []uint8
	// evaluated are the flags whose onKind is onEvaluated, in order.
	evaluated []int32
	tails     [][]byte
	failed    []bool // by variant ID: tails[id] is an evaluation failure
	version   uint64 // changes with the configuration (see configVersion)
	stream    atomic.Pointer[streamTail]
}

func newEncoding(s *engine.Snapshot) *encoding {
	e := &encoding{
		snap: s, heads: make([][]byte, s.Len()), offs: make([][]byte, s.Len()), onKind: make([]uint8, s.Len()),
		tails: make([][]byte, s.VariantCount()), failed: make([]bool, s.VariantCount()),
	}
	var blob []byte
	ends := make([]int, s.Len())
	for i := range e.heads {
		blob = append(append(blob, `{"key":`...), jsonString(s.Name(i))...)
		ends[i] = len(blob)
		any, all, deps := s.FlagTargeting(i)
		switch {
		case s.FlagHasVariants(i):
			e.offs[i] = tailVariantOff
		case !s.FlagEnabled(i):
			e.offs[i] = tailOffDisabled
		case any || deps:
			e.offs[i] = tailOffTargeted
		default:
			e.offs[i] = tailOffStatic
		}
		switch {
		case all:
			e.onKind[i] = onTargeted
		case any:
			e.onKind[i] = onEvaluated
			e.evaluated = append(e.evaluated, int32(i))
		default:
			e.onKind[i] = onStatic
		}
	}
	start := 0
	for i, end := range ends {
		e.heads[i] = blob[start:end:end]
		start = end
	}
	for id := range e.tails {
		if s.VariantFlag(id) < 0 {
			continue // the shared "disabled" variants: never a tail
		}
		e.tails[id], e.failed[id] = variantTail(s.Variant(id))
	}
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
		value = jsonString(v.Name)
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
			value = jsonString(p.Value)
		}
	}
	t := append([]byte(`,"value":`), value...)
	t = append(t, `,"reason":"SPLIT","variant":`...)
	t = append(t, jsonString(v.Name)...)
	t = append(t, `,"metadata":{"enabled":true`...)
	if payloadType != "" {
		t = append(append(t, `,"payloadType":`...), jsonString(payloadType)...)
	}
	return append(t, "}}"...), false
}

func failure(code, details string) []byte {
	t := append([]byte(`,"errorCode":`), jsonString(code)...)
	t = append(append(t, `,"errorDetails":`...), jsonString(details)...)
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

// tail is the answer tail of flag i resolved to id, or nil when the
// reason needs the winner (onEvaluated: see winnerTail).
func (e *encoding) tail(i int, id engine.VariantID) []byte {
	switch {
	case id == engine.OffVariantID:
		return e.offs[i]
	case id != engine.NoVariantID && int(id) < len(e.tails) && e.tails[id] != nil:
		return e.tails[id]
	}
	k := e.onKind[i]
	if k == onEvaluated {
		return nil
	}
	return tailOnByReason[k]
}

// winnerTail is the "on, no variant" tail of a flag whose winner decides
// the reason.
func winnerTail(targeted bool) []byte {
	if targeted {
		return tailOnTargeted
	}
	return tailOnStatic
}

func jsonString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
