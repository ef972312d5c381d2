package wire

import (
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/bunting-flags/bunting/internal/httpgzip"
)

// bufPool recycles the buffers gzipped answers are built in.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// Shared header values (never modified).
var (
	headerJSON         = []string{"application/json; charset=utf-8"}
	headerCacheControl = []string{"public, max-age=2"}
)

// WriteJSON sends body, built for this request, with its weak ETag,
// answering 304 to a matching If-None-Match on GET and HEAD; it gzips the
// body when the client accepts it (see httpgzip).
func WriteJSON(w http.ResponseWriter, r *http.Request, body []byte, etag ETag, cacheable bool) {
	writeAnswer(w, r, body, nil, etag, cacheable)
}

// WriteCachedJSON sends a body served many times, gzipped once.
func WriteCachedJSON(w http.ResponseWriter, r *http.Request, c *httpgzip.Cached, etag ETag) {
	writeAnswer(w, r, c.Body, c, etag, true)
}

// writeAnswer is WriteJSON and WriteCachedJSON: cached, when not nil, holds
// body's compressed form.
func writeAnswer(w http.ResponseWriter, r *http.Request, body []byte, cached *httpgzip.Cached, etag ETag, cacheable bool) {
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
		WriteCoalesced(w, r, body)
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

// ETag is a weak ETag before it is written out: the length of the
// body and a hash that stands for its bytes.
type ETag struct {
	length int
	hash   uint64
}

// WeakETag is the ETag of body: its length and xxhash64, one fast
// non-cryptographic pass, cheap even for large responses.
func WeakETag(body []byte) ETag { return ETag{length: len(body), hash: xxhash.Sum64(body)} }

// append writes the ETag as W/"<length hex>-<hash hex>" (at most 40 bytes).
func (e ETag) append(out []byte) []byte {
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
