// Package httpgzip compresses Bunting's HTTP answers with gzip for clients
// that accept it, the way the reference Unleash servers do: only bodies of
// at least MinSize bytes, never the answer to a HEAD request, with
// "Vary: Accept-Encoding" and the ETag of the uncompressed body. One
// negotiation rule (Accepts, Wants) serves every route.
//
// Answers built per request (the proxy's and the frontend API's toggles)
// are compressed by Append with klauspost's stateless deflate: about
// 1.2 GB/s on toggle JSON and no encoder state kept between requests.
// Answers served many times (the client API's features) are compressed
// once, at the best compression, by Cached. Other answers written whole
// (the admin API's JSON) go through Handler. zstd and brotli were measured
// and left out: on this JSON zstd's fastest level is slower than the
// stateless gzip encoder and saves about 10 % of the bytes, gzip at its
// best level beats zstd's better level, and the clients that poll the
// most (server-side SDKs) ask for gzip only.
package httpgzip

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

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

// Accepts reports whether r's Accept-Encoding accepts gzip: named with a
// quality above zero, or, when not named, covered by a "*" with a quality
// above zero (as the reference's Express compression reads it).
func Accepts(r *http.Request) bool {
	wildcard := false
	for _, line := range r.Header["Accept-Encoding"] {
		for line != "" {
			var item string
			item, line, _ = strings.Cut(line, ",")
			coding, params, _ := strings.Cut(item, ";")
			switch coding = strings.TrimSpace(coding); {
			case strings.EqualFold(coding, "gzip"):
				return qualityAboveZero(params)
			case coding == "*":
				wildcard = qualityAboveZero(params)
			}
		}
	}
	return wildcard
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
// 800 kB).
type encoder struct {
	gz  *gzip.Writer
	out []byte
}

func (e *encoder) Write(p []byte) (int, error) {
	e.out = append(e.out, p...)
	return len(p), nil
}

// appendGzip appends the gzip encoding of body to dst.
func (e *encoder) appendGzip(dst, body []byte) []byte {
	e.out = dst
	e.gz.Reset(e)
	_, _ = e.gz.Write(body) // writing to memory cannot fail
	_ = e.gz.Close()
	dst, e.out = e.out, nil
	return dst
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
	dst = e.appendGzip(dst, body)
	encoders.Put(e)
	return dst
}

// Stream writes to w the gzip encoding of what write writes, with the
// fast stateless encoder behind a 32 kB buffer (the stateless encoder
// compresses each write on its own, so small writes would compress
// badly).
func Stream(w io.Writer, write func(io.Writer)) error {
	gz := streamers.Get().(*gzip.Writer)
	defer streamers.Put(gz)
	gz.Reset(w)
	bw := bufio.NewWriterSize(gz, 32<<10)
	write(bw)
	if err := bw.Flush(); err != nil {
		return err
	}
	return gz.Close()
}

var streamers = sync.Pool{New: func() any {
	gz, _ := gzip.NewWriterLevel(io.Discard, gzip.StatelessCompression)
	return gz
}}

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

// Handler compresses what h writes, as Wants says, for answers a handler
// writes whole whose size it does not know in advance (the admin API's
// JSON): it holds the answer back until h returns, then sends it, gzipped
// when it reached MinSize. An answer that already has a Content-Encoding
// is passed through untouched. Handlers that stream (Flush) must not be
// wrapped.
func Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		AddVary(w.Header())
		if r.Method == http.MethodHead || !Accepts(r) {
			h.ServeHTTP(w, r)
			return
		}
		hw := &heldWriter{ResponseWriter: w}
		h.ServeHTTP(hw, r)
		hw.send()
	})
}

// heldWriter keeps an answer's status and body until send.
type heldWriter struct {
	http.ResponseWriter
	status int
	body   []byte
}

// WriteHeader keeps the first status.
func (hw *heldWriter) WriteHeader(code int) {
	if hw.status == 0 {
		hw.status = code
	}
}

// Write keeps the bytes.
func (hw *heldWriter) Write(p []byte) (int, error) {
	if hw.status == 0 {
		hw.status = http.StatusOK
	}
	hw.body = append(hw.body, p...)
	return len(p), nil
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (hw *heldWriter) Unwrap() http.ResponseWriter { return hw.ResponseWriter }

// send writes the held answer, gzipped when it is large enough.
func (hw *heldWriter) send() {
	if hw.status == 0 {
		return // nothing was written: net/http answers 200 with no body
	}
	h, body := hw.Header(), hw.body
	if len(body) >= MinSize && len(h["Content-Encoding"]) == 0 {
		body = Append(nil, body)
		h["Content-Encoding"] = HeaderGzip
	}
	if len(body) > 0 {
		h["Content-Length"] = []string{strconv.Itoa(len(body))}
	}
	hw.ResponseWriter.WriteHeader(hw.status)
	_, _ = hw.ResponseWriter.Write(body)
}
