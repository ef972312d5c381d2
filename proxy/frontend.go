package proxy

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpgzip"
)

// FrontendOptions configure the evaluation endpoints that front-end SDKs
// call. The server mounts them at /api/frontend, the proxy at /proxy.
type FrontendOptions struct {
	// Snapshot picks the snapshot for a request; it may reject the
	// request with an apierr error (for example an unknown token).
	Snapshot func(r *http.Request) (*engine.Snapshot, error)
	// EnableAll serves "/all"; otherwise "/all" answers 501.
	EnableAll bool
	// Usage counts every evaluation of a known flag; may be nil.
	Usage *Usage
	// Complete finishes the context of a request after it was parsed
	// (remote address, forced environment, default appName, enrichers);
	// may be nil.
	Complete func(r *http.Request, ctx *engine.Context) error
	// MaxBodyBytes limits POST bodies; 0 means 100 kB.
	MaxBodyBytes int64
	// Logger receives internal errors; nil discards them.
	Logger *slog.Logger

	// snapshots bounds the snapshots whose encodings are kept; 0 means
	// cacheSize. The proxy serves one snapshot at a time and keeps 2.
	snapshots int
}

// FrontendHandler serves GET/HEAD/POST "" and "/all" relative to where it
// is mounted (strip the prefix first, e.g. with http.StripPrefix).
type FrontendHandler struct {
	opts  FrontendOptions
	cache atomic.Pointer[[]*snapshotState]
}

// NewFrontendHandler builds the evaluation endpoints.
func NewFrontendHandler(opts FrontendOptions) *FrontendHandler {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 100 * 1024
	}
	if opts.snapshots <= 0 {
		opts.snapshots = cacheSize
	}
	return &FrontendHandler{opts: opts}
}

// ServeHTTP serves "", "/", "/all" and "/all/".
func (h *FrontendHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch strings.TrimSuffix(r.URL.Path, "/") {
	case "":
		h.serve(w, r, false)
	case "/all":
		h.serve(w, r, true)
	default:
		apierr.Write(w, r, h.opts.Logger, apierr.NotFound("no route for %s %s", r.Method, r.URL.Path))
	}
}

// snapshotState is what the handler precomputes per snapshot.
type snapshotState struct {
	snap  *engine.Snapshot
	enc   *encoding
	usage *snapshotUsage
}

// cacheSize is how many snapshots' encodings are kept by default (the
// server serves one snapshot per environment).
const cacheSize = 16

func (h *FrontendHandler) state(s *engine.Snapshot) *snapshotState {
	for {
		cur := h.cache.Load()
		if cur != nil {
			for _, st := range *cur {
				if st.snap == s {
					return st
				}
			}
		}
		st := &snapshotState{snap: s, enc: newEncoding(s)}
		if h.opts.Usage != nil {
			st.usage = h.opts.Usage.forSnapshot(s)
		}
		next := []*snapshotState{st}
		if cur != nil {
			next = append(next, (*cur)[:min(len(*cur), h.opts.snapshots-1)]...)
		}
		if h.cache.CompareAndSwap(cur, &next) {
			return st
		}
	}
}

var (
	resultPool = sync.Pool{New: func() any { s := make([]engine.Result, 0, 128); return &s }}
	idsPool    = sync.Pool{New: func() any { s := make([]engine.VariantID, 0, 128); return &s }}
	bufPool    = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}
)

func (h *FrontendHandler) serve(w http.ResponseWriter, r *http.Request, all bool) {
	if all && !h.opts.EnableAll {
		apierr.Write(w, r, h.opts.Logger, apierr.NotImplemented("The /proxy/all endpoint is disabled. Please check your server configuration. To enable it, set the `enableAllEndpoint` configuration option or `ENABLE_ALL_ENDPOINT` environment variable to `true`."))
		return
	}
	rc := getRequestContext()
	defer putRequestContext(rc)
	ctx := &rc.ctx
	var names []string
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if err := parseQueryContext(r.URL.RawQuery, ctx); err != nil {
			apierr.Write(w, r, h.opts.Logger, err)
			return
		}
	case http.MethodPost:
		var err error
		if names, err = h.readPost(w, r, ctx, rc.names[:0]); err != nil {
			apierr.Write(w, r, h.opts.Logger, err)
			return
		}
		if names != nil {
			rc.names = names
		}
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		apierr.Write(w, r, h.opts.Logger, &apierr.Error{Kind: apierr.KindMethodNotAllowed, Message: "method " + r.Method + " is not allowed here"})
		return
	}
	normaliseCurrentTime(ctx)
	snap, err := h.opts.Snapshot(r)
	if err != nil {
		apierr.Write(w, r, h.opts.Logger, err)
		return
	}
	if h.opts.Complete != nil {
		if err := h.opts.Complete(r, ctx); err != nil {
			apierr.Write(w, r, h.opts.Logger, err)
			return
		}
	}
	h.respond(w, r, h.state(snap), ctx, names, all)
}

// requestContext is what serving one request parses into, recycled
// through a pool: the context (with its properties map, emptied) and the
// requested toggle names. Nothing keeps either past the request: the
// engine and the script engine copy what they keep.
type requestContext struct {
	ctx   engine.Context
	names []string
}

// maxPooledProperties bounds the properties map a recycled context keeps,
// so that one request with many properties does not pin a large map.
const maxPooledProperties = 64

var requestContextPool = sync.Pool{New: func() any { return new(requestContext) }}

func getRequestContext() *requestContext { return requestContextPool.Get().(*requestContext) }

func putRequestContext(rc *requestContext) {
	props := rc.ctx.Properties
	if len(props) > maxPooledProperties {
		props = nil
	}
	clear(props)
	rc.ctx = engine.Context{Properties: props}
	clear(rc.names) // serve reslices it to length 0 before use
	requestContextPool.Put(rc)
}

// readPost checks the content type, reads the body within the limit and
// parses it.
func (h *FrontendHandler) readPost(w http.ResponseWriter, r *http.Request, ctx *engine.Context, names []string) ([]string, error) {
	if err := checkJSONContentType(r); err != nil {
		return nil, err
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	body, err := readBody(w, r, h.opts.MaxBodyBytes, (*bp)[:0])
	*bp = body[:0]
	if err != nil {
		return nil, err
	}
	return parsePostBody(body, ctx, names)
}

// checkJSONContentType rejects bodies that are not JSON; a body without a
// Content-Type is taken as JSON.
func checkJSONContentType(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" || (r.ContentLength == 0 && len(r.TransferEncoding) == 0) {
		return nil
	}
	if strings.HasPrefix(ct, "application/json") && (len(ct) == 16 || ct[16] == ';' || ct[16] == ' ') {
		return nil
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil && mt == "application/json" {
		return nil
	}
	return apierr.UnsupportedMediaType("the body must be application/json, not %q", ct)
}

// readBody reads the whole body into buf, failing with 413 past limit.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, buf []byte) ([]byte, error) {
	if r.ContentLength > limit {
		return buf, apierr.TooLarge("the request body is larger than the limit of %d bytes", limit)
	}
	if n := r.ContentLength; n > int64(cap(buf)) {
		buf = slices.Grow(buf, int(n)+1) // read once into a buffer of the right size
	}
	rd := http.MaxBytesReader(w, r.Body, limit)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, bodyError(err)
		}
	}
}

// respond evaluates and writes the toggles.
func (h *FrontendHandler) respond(w http.ResponseWriter, r *http.Request, st *snapshotState, ctx *engine.Context, names []string, all bool) {
	if names == nil {
		h.respondAll(w, r, st, ctx, all)
		return
	}
	rp := resultPool.Get().(*[]engine.Result)
	results := (*rp)[:0]
	bp := bufPool.Get().(*[]byte)
	buf := append((*bp)[:0], `{"toggles":[`...)
	for _, name := range names {
		res := st.snap.Evaluate(name, ctx)
		if res.Found {
			results = append(results, res)
			buf = st.enc.appendToggle(buf, &res)
		} else {
			// Not counted: upstream keeps usage of its own flags only,
			// and a client could otherwise fill the bucket with names.
			buf = appendUnknownToggle(buf, name)
		}
		buf = append(buf, ',')
	}
	if buf[len(buf)-1] == ',' {
		buf = buf[:len(buf)-1]
	}
	buf = append(buf, "]}"...)
	if st.usage != nil {
		st.usage.record(results)
	}
	writeJSON(w, r, buf, weakETag(buf), true)
	// Results point into the snapshot only, so they are not cleared.
	*rp = results[:0]
	resultPool.Put(rp)
	*bp = buf[:0]
	bufPool.Put(bp)
}

// respondAll evaluates every flag and writes the enabled ones (all of
// them for "/all"). Every flag is counted, including those a GET /proxy
// does not return because they are off.
func (h *FrontendHandler) respondAll(w http.ResponseWriter, r *http.Request, st *snapshotState, ctx *engine.Context, all bool) {
	ip := idsPool.Get().(*[]engine.VariantID)
	ids := st.snap.EvaluateAllIDs(ctx, (*ip)[:0])
	bp := bufPool.Get().(*[]byte)
	buf := st.enc.appendToggles((*bp)[:0], ids, all)
	if st.usage != nil {
		st.usage.recordIDs(ids)
	}
	writeJSON(w, r, buf, st.enc.etag(len(buf), ids, all), true)
	*ip = ids[:0]
	idsPool.Put(ip)
	*bp = buf[:0]
	bufPool.Put(bp)
}

// Shared header values (never modified).
var (
	headerJSON         = []string{"application/json; charset=utf-8"}
	headerCacheControl = []string{"public, max-age=2"}
)

// writeJSON sends body, built for this request, with its weak ETag,
// answering 304 to a matching If-None-Match on GET and HEAD; it gzips the
// body when the client accepts it (see httpgzip).
func writeJSON(w http.ResponseWriter, r *http.Request, body []byte, etag etagValue, cacheable bool) {
	writeAnswer(w, r, body, nil, etag, cacheable)
}

// writeCachedJSON sends a body served many times, gzipped once.
func writeCachedJSON(w http.ResponseWriter, r *http.Request, c *httpgzip.Cached, etag etagValue) {
	writeAnswer(w, r, c.Body, c, etag, true)
}

// writeAnswer is writeJSON and writeCachedJSON: cached, when not nil, holds
// body's compressed form.
func writeAnswer(w http.ResponseWriter, r *http.Request, body []byte, cached *httpgzip.Cached, etag etagValue, cacheable bool) {
	hv := &headerValues{}
	h := w.Header()
	h["Etag"] = hv.set(&hv.etag, etag.append(hv.buf[:0]))
	if cacheable {
		h["Cache-Control"] = headerCacheControl
	}
	httpgzip.AddVary(h)
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && notModified(r, hv.etag[0]) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h["Content-Type"] = headerJSON
	if !httpgzip.Wants(r, len(body)) {
		writeBody(w, r, hv, body)
		return
	}
	h["Content-Encoding"] = httpgzip.HeaderGzip
	if cached != nil {
		writeBody(w, r, hv, cached.Gzipped())
		return
	}
	bp := bufPool.Get().(*[]byte)
	gz := httpgzip.Append((*bp)[:0], body)
	writeBody(w, r, hv, gz)
	*bp = gz[:0]
	bufPool.Put(bp)
}

// writeBody sends a 200 with body and its Content-Length (its text goes
// after the ETag's in hv.buf).
func writeBody(w http.ResponseWriter, r *http.Request, hv *headerValues, body []byte) {
	n := len(hv.etag[0])
	w.Header()["Content-Length"] = hv.set(&hv.length, strconv.AppendInt(hv.buf[n:n], int64(len(body)), 10))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		writeCoalesced(w, r, body)
	}
}

// headerValues holds the per-response header values of a toggle answer
// (ETag and Content-Length) and their text in one allocation.
type headerValues struct {
	etag, length [1]string
	buf          [64]byte
}

// set makes text, which lies in hv.buf, the value of the one-element
// slot and returns the slot as a header value. hv.buf is never written
// again, so the string stays as it was.
func (hv *headerValues) set(slot *[1]string, text []byte) []string {
	slot[0] = unsafe.String(unsafe.SliceData(text), len(text))
	return slot[:]
}

// etagValue is a weak ETag before it is written out: the length of the
// body and a hash that stands for its bytes.
type etagValue struct {
	length int
	hash   uint64
}

// weakETag is the ETag of body: its length and xxhash64, one fast
// non-cryptographic pass, cheap even for large responses.
func weakETag(body []byte) etagValue { return etagValue{length: len(body), hash: xxhash.Sum64(body)} }

// append writes the ETag as W/"<length hex>-<hash hex>" (at most 40 bytes).
func (e etagValue) append(out []byte) []byte {
	out = append(out, `W/"`...)
	out = strconv.AppendUint(out, uint64(e.length), 16)
	out = append(out, '-')
	out = appendHex64(out, e.hash)
	return append(out, '"')
}

// appendHex64 appends v as 16 lowercase hex digits.
func appendHex64(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, digits[(v>>uint(shift))&0xf])
	}
	return b
}

// notModified compares If-None-Match weakly with etag, as Express does:
// "*" matches, lists are allowed, and Cache-Control: no-cache disables it.
func notModified(r *http.Request, etag string) bool {
	inm := r.Header["If-None-Match"]
	if len(inm) == 0 {
		return false
	}
	if cc := r.Header.Get("Cache-Control"); cc != "" && strings.Contains(cc, "no-cache") {
		return false
	}
	want := strings.TrimPrefix(etag, "W/")
	for _, line := range inm {
		for _, tag := range strings.Split(line, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" || strings.TrimPrefix(tag, "W/") == want {
				return true
			}
		}
	}
	return false
}

// encoding holds a snapshot's precomputed JSON fragments. A toggle is
// heads[i] (or offHeads[i]), then variants[id], then the flag's
// impressionData and the closing brace.
type encoding struct {
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

func newEncoding(s *engine.Snapshot) *encoding {
	e := &encoding{
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
		blob = append(blob, jsonString(s.Name(i))...)
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

// appendToggle writes one evaluated flag.
func (e *encoding) appendToggle(buf []byte, res *engine.Result) []byte {
	id := -1
	if res.Variant != nil {
		id = res.Variant.ID
	}
	return e.appendFlag(buf, res.Index, res.Enabled, id)
}

// appendFlag writes flag i, enabled or not, resolved to variant id.
func (e *encoding) appendFlag(buf []byte, i int, enabled bool, id int) []byte {
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

// appendToggles writes the response to a request for every flag: the
// enabled flags, or all of them with all.
func (e *encoding) appendToggles(buf []byte, ids []engine.VariantID, all bool) []byte {
	buf = append(buf, `{"toggles":[`...)
	sep := false
	for i, id := range ids {
		on := id != engine.OffVariantID
		if !on && !all {
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

// etag is the weak ETag of the response appendToggles wrote for ids: the
// encoding's hash and the variant IDs determine its bytes, so digesting
// them (4 bytes per flag) stands for digesting the body (about 100).
func (e *encoding) etag(length int, ids []engine.VariantID, all bool) etagValue {
	var d xxhash.Digest
	d.ResetWithSeed(e.hash)
	_, _ = d.Write([]byte{boolByte(all)})
	if len(ids) > 0 {
		_, _ = d.Write(unsafe.Slice((*byte)(unsafe.Pointer(&ids[0])), len(ids)*int(unsafe.Sizeof(ids[0]))))
	}
	return etagValue{length: length, hash: d.Sum64()}
}

// appendVariant writes a variant in the reference's key order; nil is the
// disabled fallback of a disabled flag.
func appendVariant(b []byte, v *engine.ResultVariant) []byte {
	if v == nil {
		return append(b, `{"name":"disabled","enabled":false,"feature_enabled":false,"featureEnabled":false}`...)
	}
	b = append(b, `{"name":`...)
	b = append(b, jsonString(v.Name)...)
	if v.Payload != nil {
		b = append(b, `,"payload":{"type":`...)
		b = append(b, jsonString(v.Payload.Type)...)
		b = append(b, `,"value":`...)
		b = append(b, jsonString(v.Payload.Value)...)
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

// appendUnknownToggle writes a name the snapshot does not know.
func appendUnknownToggle(buf []byte, name string) []byte {
	buf = append(buf, `{"name":`...)
	buf = append(buf, jsonString(name)...)
	return append(buf, `,"enabled":false,"variant":{"name":"disabled","enabled":false,"feature_enabled":false,"featureEnabled":false},"impressionData":false}`...)
}

func jsonString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
