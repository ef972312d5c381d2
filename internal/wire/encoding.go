package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/bunting-flags/bunting/engine"
)

// Encoding holds a snapshot's precomputed JSON fragments. A toggle is
// heads[i] (or offHeads[i]), then variants[id], then the flag's
// impressionData and the closing brace.
type Encoding struct {
	// heads[i] is `{"name":"<flag i>","enabled":true`, offHeads[i] the
	// same ending in false.
	heads, offHeads [][]byte
	// variants[id] is `,"variant":{…},"impressionData":`.
	variants [][]byte
	// impression[i] is flag i's impressionData.
	impression []bool
	// hash digests every fragment, so that it and the variant IDs of a
	// response determine the response's bytes (see etag).
	hash uint64
}

// NewEncoding precomputes the fragments of every flag and variant of s.
func NewEncoding(s *engine.Snapshot) *Encoding {
	e := &Encoding{
		heads: make([][]byte, s.Len()), offHeads: make([][]byte, s.Len()),
		variants: make([][]byte, s.VariantCount()), impression: make([]bool, s.Len()),
	}
	digest := xxhash.New()
	// The fragments share one buffer, so that a response copies from
	// contiguous memory.
	var blob []byte
	type span struct{ on, end int }
	spans := make([]span, len(e.heads))
	for i := range e.heads {
		start := len(blob)
		blob = append(blob, `{"name":`...)
		blob = append(blob, JSONString(s.Name(i))...)
		blob = append(blob, `,"enabled":`...)
		prefix := blob[start:]
		blob = append(blob, "true"...)
		on := len(blob)
		blob = append(append(blob, prefix...), "false"...)
		spans[i] = span{on: on, end: len(blob)}
		e.impression[i] = s.ImpressionData(i)
	}
	start := 0
	for i, sp := range spans {
		e.heads[i] = blob[start:sp.on:sp.on]
		e.offHeads[i] = blob[sp.on:sp.end:sp.end]
		start = sp.end
	}
	_, _ = digest.Write(blob)
	blob, start = nil, 0
	ends := make([]int, len(e.variants))
	for id := range e.variants {
		blob = append(appendVariant(append(blob, `,"variant":`...), s.Variant(id)), `,"impressionData":`...)
		ends[id] = len(blob)
	}
	for id, end := range ends {
		e.variants[id] = blob[start:end:end]
		start = end
	}
	_, _ = digest.Write(blob)
	for _, imp := range e.impression {
		_, _ = digest.Write([]byte{boolByte(imp)})
	}
	e.hash = digest.Sum64()
	return e
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

// AppendToggle writes one evaluated flag.
func (e *Encoding) AppendToggle(buf []byte, res *engine.Result) []byte {
	id := -1
	if res.Variant != nil {
		id = res.Variant.ID
	}
	return e.appendFlag(buf, res.Index, res.Enabled, id)
}

// appendFlag writes flag i, enabled or not, resolved to variant id.
func (e *Encoding) appendFlag(buf []byte, i int, enabled bool, id int) []byte {
	if enabled {
		buf = append(buf, e.heads[i]...)
	} else {
		buf = append(buf, e.offHeads[i]...)
	}
	if id >= 0 && id < len(e.variants) {
		buf = append(buf, e.variants[id]...)
	} else {
		buf = append(buf, `,"variant":{"name":"disabled","enabled":false,"feature_enabled":false,"featureEnabled":false},"impressionData":`...)
	}
	if e.impression[i] {
		return append(buf, "true}"...)
	}
	return append(buf, "false}"...)
}

// AppendToggles writes the answer to a request that names no flags from
// the outcome of every flag (ids): the enabled flags, or every flag
// withDisabled (the /all endpoint).
func (e *Encoding) AppendToggles(buf []byte, ids []engine.VariantID, withDisabled bool) []byte {
	buf = append(buf, `{"toggles":[`...)
	sep := false
	for i, id := range ids {
		on := id != engine.OffVariantID
		if !on && !withDisabled {
			continue
		}
		if sep {
			buf = append(buf, ',')
		}
		sep = true
		buf = e.appendFlag(buf, i, on, int(id))
	}
	return append(buf, "]}"...)
}

// OutcomeHash digests an outcome of every flag: the encoding's hash and
// the variant IDs determine the bytes AppendToggles writes, so digesting
// them (4 bytes per flag) stands for digesting the body (about 100).
func (e *Encoding) OutcomeHash(ids []engine.VariantID, withDisabled bool) uint64 {
	var d xxhash.Digest
	d.ResetWithSeed(e.hash)
	_, _ = d.Write([]byte{boolByte(withDisabled)})
	if len(ids) > 0 {
		_, _ = d.Write(unsafe.Slice((*byte)(unsafe.Pointer(&ids[0])), len(ids)*int(unsafe.Sizeof(ids[0]))))
	}
	return d.Sum64()
}

// OutcomeETag is the weak ETag of the body of length bytes AppendToggles
// wrote for the outcome OutcomeHash digested.
func OutcomeETag(length int, hash uint64) ETag { return ETag{length: length, hash: hash} }

// appendVariant writes a variant in the reference's key order; nil is the
// disabled fallback of a disabled flag.
func appendVariant(b []byte, v *engine.ResultVariant) []byte {
	if v == nil {
		return append(b, `{"name":"disabled","enabled":false,"feature_enabled":false,"featureEnabled":false}`...)
	}
	b = append(b, `{"name":`...)
	b = append(b, JSONString(v.Name)...)
	if v.Payload != nil {
		b = append(b, `,"payload":{"type":`...)
		b = append(b, JSONString(v.Payload.Type)...)
		b = append(b, `,"value":`...)
		b = append(b, JSONString(v.Payload.Value)...)
		b = append(b, '}')
	}
	b = append(b, `,"enabled":`...)
	b = strconv.AppendBool(b, v.Enabled)
	b = append(b, `,"feature_enabled":`...)
	b = strconv.AppendBool(b, v.FeatureEnabled)
	b = append(b, `,"featureEnabled":`...)
	b = strconv.AppendBool(b, v.FeatureEnabled)
	return append(b, '}')
}

// AppendUnknownToggle writes a name the snapshot does not know.
func AppendUnknownToggle(buf []byte, name string) []byte {
	buf = append(buf, `{"name":`...)
	buf = append(buf, JSONString(name)...)
	return append(buf, `,"enabled":false,"variant":{"name":"disabled","enabled":false,"feature_enabled":false,"featureEnabled":false},"impressionData":false}`...)
}

// AppendJSONString appends s encoded as JSONString encodes it, without
// allocating when s is printable ASCII without quotes or backslashes
// (a flag name usually is).
func AppendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return append(dst, JSONString(s)...)
		}
	}
	return append(append(append(dst, '"'), s...), '"')
}

// JSONString is s as a JSON string, without HTML escaping (names and
// payloads go out as written).
func JSONString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
