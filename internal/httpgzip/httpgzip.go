// Package httpgzip compresses Bunting's HTTP answers with gzip for clients
// that accept it, the way the reference Unleash servers do: only bodies of
// at least MinSize bytes, never the answer to a HEAD request, with
// "Vary: Accept-Encoding" and the ETag of the uncompressed body.
//
// Two kinds of answer use it. Answers built per request (the proxy's and
// the frontend API's toggles) are compressed by Append with klauspost's
// stateless deflate: about 1.2 GB/s on toggle JSON and no encoder state
// kept between requests. Answers served many times (the client API's
// features) are compressed once, at the best compression, by Cached. Other
// JSON answers (the admin API) go through Handler, klauspost's gzhttp
// middleware. zstd and brotli were measured and left out: on this JSON
// zstd's fastest level is slower than the stateless gzip encoder and saves
// about 10 % of the bytes, gzip at its best level beats zstd's better
// level, and the clients that poll the most (server-side SDKs) ask for
// gzip only.
package httpgzip

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/gzip"
)

// MinSize is the smallest body that is compressed (Express's compression
// threshold): below it, the gzip header and a packet's worth of bytes
// gain nothing.
const MinSize = 1024

// Shared header values (never modified).
var (
	// HeaderGzip is the Content-Encoding of a compressed answer.
	HeaderGzip = []string{"gzip"}

	varyAcceptEncoding       = []string{"Accept-Encoding"}
	varyOriginAcceptEncoding = []string{"Origin", "Accept-Encoding"}
)

// AddVary adds Accept-Encoding to h's Vary header without allocating in
// the usual cases (no Vary yet, or the CORS middleware's "Origin").
func AddVary(h http.Header) {
	switch v := h["Vary"]; {
	case len(v) == 0:
		h["Vary"] = varyAcceptEncoding
	case len(v) == 1 && v[0] == "Origin":
		h["Vary"] = varyOriginAcceptEncoding
	default:
		h["Vary"] = append(v[:len(v):len(v)], "Accept-Encoding")
	}
}

// Wants reports whether the answer to r, with a body of n bytes, is to be
// gzipped: r is not a HEAD request, the body is at least MinSize bytes
// and r accepts gzip.
func Wants(r *http.Request, n int) bool {
	return n >= MinSize && r.Method != http.MethodHead && Accepts(r)
}

// Accepts reports whether r's Accept-Encoding names gzip with a quality
// above zero. As in gzhttp, a "*" alone does not count: clients that send
// it mostly expect the plain bytes.
func Accepts(r *http.Request) bool {
	for _, line := range r.Header["Accept-Encoding"] {
		for line != "" {
			var item string
			item, line, _ = strings.Cut(line, ",")
			coding, params, _ := strings.Cut(item, ";")
			if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
				return qualityAboveZero(params)
			}
		}
	}
	return false
}

// qualityAboveZero reads the q parameter of one coding: absent means 1; a
// malformed one means 0.
func qualityAboveZero(params string) bool {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		p = strings.TrimSpace(p)
		if len(p) >= 2 && (p[0] == 'q' || p[0] == 'Q') && p[1] == '=' {
			q, err := strconv.ParseFloat(strings.TrimSpace(p[2:]), 64)
			return err == nil && q > 0
		}
	}
	return true
}

// encoder is a gzip writer that appends to a byte slice. The stateless
// level keeps no tables between uses (a level-1 writer holds about
// 800 kB), so a pooled encoder costs a couple of kilobytes.
type encoder struct {
	gz  *gzip.Writer
	out []byte
}

func (e *encoder) Write(p []byte) (int, error) {
	e.out = append(e.out, p...)
	return len(p), nil
}

var encoders = sync.Pool{New: func() any {
	e := &encoder{}
	e.gz, _ = gzip.NewWriterLevel(e, gzip.StatelessCompression)
	return e
}}

// Append appends the gzip encoding of body to dst with the fast stateless
// encoder, for answers built per request.
func Append(dst, body []byte) []byte {
	e := encoders.Get().(*encoder)
	e.out = dst
	e.gz.Reset(e)
	_, _ = e.gz.Write(body) // writing to memory cannot fail
	_ = e.gz.Close()
	dst, e.out = e.out, nil
	encoders.Put(e)
	return dst
}

// Cached is a body served many times; its gzip encoding is made once, on
// first use, at the best compression. Its zero value holds an empty body.
type Cached struct {
	// Body is the uncompressed body; it must not change.
	Body []byte
	once sync.Once
	gz   []byte
}

// NewCached wraps body.
func NewCached(body []byte) *Cached { return &Cached{Body: body} }

// Gzipped returns the gzip encoding of c.Body, compressing it on the first
// call; concurrent first callers wait for one compression.
func (c *Cached) Gzipped() []byte {
	c.once.Do(func() {
		var b bytes.Buffer
		w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		_, _ = w.Write(c.Body)
		_ = w.Close()
		c.gz = b.Bytes()
	})
	return c.gz
}

// handler is gzhttp's middleware with the rules above: gzip only, from
// MinSize bytes, HEAD never compressed (gzhttp's own rule), an answer that
// already has a Content-Encoding passed through untouched.
var handler = sync.OnceValue(func() func(http.Handler) http.HandlerFunc {
	wrap, err := gzhttp.NewWrapper(gzhttp.MinSize(MinSize), gzhttp.EnableZstd(false))
	if err != nil {
		panic(err) // the options are constants
	}
	return wrap
})

// Handler compresses what h writes when the client accepts gzip and the
// body reaches MinSize; for answers written in one piece whose size is not
// known in advance (the admin API's JSON).
func Handler(h http.Handler) http.Handler { return handler()(h) }
