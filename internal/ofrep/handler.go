package ofrep

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/cespare/xxhash/v2"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpgzip"
	"github.com/bunting-flags/bunting/internal/snapcache"
	"github.com/bunting-flags/bunting/internal/wire"
)

// Options connect a Handler to its host (the proxy or the server).
type Options struct {
	// BasePath is where the handler is mounted, without a trailing slash
	// ("/ofrep" on the server; the proxy's base path then "/ofrep").
	BasePath string
	// Authenticate checks the request's credential and returns the scope
	// it grants (what a change notification must be about; "" when every
	// caller sees the same flags). Its error (an apierr error) is written
	// as the host writes it: 401 and 403 as on the host's other routes.
	Authenticate func(r *http.Request) (scope string, err error)
	// Snapshot picks the snapshot for a scope; r is the request being
	// served (its context and, for evaluations, its credentials).
	Snapshot func(r *http.Request, scope string) (*engine.Snapshot, error)
	// Complete finishes a parsed context (remote address, default appName
	// and environment, enrichers); may be nil.
	Complete func(r *http.Request, ctx *engine.Context) error
	// RecordEveryFlag (an evaluation of every flag) and Record (one flag)
	// count evaluations for usage metrics, as the host's /proxy does;
	// either may be nil.
	RecordEveryFlag func(s *engine.Snapshot, ids []engine.VariantID)
	Record          func(s *engine.Snapshot, res engine.Result)
	// MaxBodyBytes limits request bodies; 0 means 100 kB.
	MaxBodyBytes int64
	// Logger receives internal errors; nil discards them.
	Logger *slog.Logger
	// Changes returns a channel closed when the configuration a scope sees
	// may have changed (or ctx ends). nil disables the event stream: bulk
	// answers then advertise none.
	Changes func(ctx context.Context, scope string) <-chan struct{}
	// StreamTTL is how long an event-stream credential is issued for: a
	// credential is valid from its issue for between StreamTTL and twice
	// that. 0 means 10 minutes.
	StreamTTL time.Duration
	// Secret signs event-stream credentials; nil means a random one (then
	// only this process accepts its credentials).
	Secret []byte
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
	// WriteBody sends an answer's body after its headers (the proxy sends
	// large ones in one system call); nil means w.Write.
	WriteBody func(w http.ResponseWriter, r *http.Request, body []byte)
	// ConfigVersion, when set, identifies a snapshot's configuration (equal
	// configurations, equal versions, across processes) for a host whose
	// snapshots do not keep their payload; nil means a digest of the
	// payload, or a number of this process when there is none.
	ConfigVersion func(s *engine.Snapshot) uint64
}

// Handler serves OFREP's endpoints (see the package documentation).
type Handler struct {
	opts   Options
	signer *signer
	cache  *snapcache.Cache[*encoding]
}

// New builds a Handler.
func New(opts Options) *Handler {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 100 * 1024
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.StreamTTL <= 0 {
		opts.StreamTTL = 10 * time.Minute
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.WriteBody == nil {
		opts.WriteBody = func(w http.ResponseWriter, _ *http.Request, body []byte) { _, _ = w.Write(body) }
	}
	return &Handler{opts: opts, signer: newSigner(opts.Secret), cache: snapcache.New[*encoding](16)}
}

// Route names the OFREP route of a request path (with the base path), or
// "" when it is none of them; hosts use it for their request metrics.
func (h *Handler) Route(path string) string {
	rest, ok := strings.CutPrefix(path, h.opts.BasePath)
	if !ok {
		return ""
	}
	switch {
	case rest == "/v1/evaluate/flags":
		return "ofrep_bulk"
	case strings.HasPrefix(rest, "/v1/evaluate/flags/"):
		return "ofrep_flag"
	case rest == "/v1/events":
		return "ofrep_events"
	}
	return ""
}

// ServeHTTP serves the OFREP routes under BasePath.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch h.Route(r.URL.Path) {
	case "ofrep_bulk":
		if r.Method != http.MethodPost {
			h.methodNotAllowed(w, "POST")
			return
		}
		h.serveBulk(w, r)
	case "ofrep_flag":
		if r.Method != http.MethodPost {
			h.methodNotAllowed(w, "POST")
			return
		}
		h.serveFlag(w, r)
	case "ofrep_events":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			h.methodNotAllowed(w, "GET, HEAD")
			return
		}
		h.serveEvents(w, r)
	default:
		errorf(http.StatusNotFound, CodeGeneral, "no OFREP route %s %s", r.Method, r.URL.Path).write(w)
	}
}

func (h *Handler) methodNotAllowed(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	errorf(http.StatusMethodNotAllowed, CodeGeneral, "use %s", allow).write(w)
}

// encodingFor returns the snapshot's encoding, built once; the newest 16
// are kept (the proxy serves one snapshot, the server one per scope).
func (h *Handler) encodingFor(s *engine.Snapshot) *encoding {
	return h.cache.Get(s, func(s *engine.Snapshot) *encoding {
		e := newEncoding(s)
		if h.opts.ConfigVersion != nil {
			e.version = h.opts.ConfigVersion(s)
		}
		return e
	})
}

// Forget drops the encoding of s, a snapshot that will not be served
// again.
func (h *Handler) Forget(s *engine.Snapshot) { h.cache.Forget(s) }

// Version identifies the configuration of a snapshot as this handler
// sees it (what the bulk ETag and the change notifications follow).
func (h *Handler) Version(s *engine.Snapshot) uint64 { return h.encodingFor(s).version }

var (
	targetedPool = sync.Pool{New: func() any { s := make([]bool, 0, 64); return &s }}
	bufPool      = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}
	idsPool      = sync.Pool{New: func() any { s := make([]engine.VariantID, 0, 128); return &s }}
)

// prepare authenticates, reads and parses the body, picks the snapshot
// and completes the context. It writes the error and returns false when
// the request cannot be evaluated.
func (h *Handler) prepare(w http.ResponseWriter, r *http.Request, ctx *engine.Context, key string) (*engine.Snapshot, string, bool) {
	scope, err := h.opts.Authenticate(r)
	if err != nil {
		apierr.Write(w, r, h.opts.Logger, err)
		return nil, "", false
	}
	bp := bufPool.Get().(*[]byte)
	body, rerr := readBody(w, r, h.opts.MaxBodyBytes, (*bp)[:0])
	if rerr == nil {
		rerr = parseRequest(body, ctx)
	}
	*bp = body[:0]
	bufPool.Put(bp)
	if rerr != nil {
		rerr.Key = key
		rerr.write(w)
		return nil, "", false
	}
	snap, err := h.opts.Snapshot(r, scope)
	if err != nil {
		apierr.Write(w, r, h.opts.Logger, err)
		return nil, "", false
	}
	if h.opts.Complete != nil {
		if err := h.opts.Complete(r, ctx); err != nil {
			apierr.Write(w, r, h.opts.Logger, err)
			return nil, "", false
		}
	}
	return snap, scope, true
}

// readBody reads the whole body into buf, within limit (wire.ReadBody),
// with its errors in OFREP's shape.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, buf []byte) ([]byte, *Error) {
	buf, err := wire.ReadBody(w, r, limit, buf)
	switch {
	case err == nil:
		return buf, nil
	case apierr.IsKind(err, apierr.KindTooLarge):
		return buf, errorf(http.StatusRequestEntityTooLarge, CodeGeneral, "the request body is larger than the limit of %d bytes", limit)
	default:
		return buf, errorf(http.StatusBadRequest, CodeParseError, "the request body could not be read")
	}
}

// serveBulk answers POST /v1/evaluate/flags: every flag of the snapshot
// for the context, with an ETag that changes with the configuration, the
// context, the outcomes and the advertised event stream.
func (h *Handler) serveBulk(w http.ResponseWriter, r *http.Request) {
	var ctx engine.Context
	snap, scope, ok := h.prepare(w, r, &ctx, "")
	if !ok {
		return
	}
	e := h.encodingFor(snap)
	ip := idsPool.Get().(*[]engine.VariantID)
	// The flags whose reason needs their winner are asked about within
	// the evaluation (see encoding.evaluated).
	tp := targetedPool.Get().(*[]bool)
	ids, targeted := snap.EvaluateAllIDsTargeted(&ctx, (*ip)[:0], e.evaluated, (*tp)[:0])
	if h.opts.RecordEveryFlag != nil {
		h.opts.RecordEveryFlag(snap, ids)
	}
	bp := bufPool.Get().(*[]byte)
	// An answer is one of each flag's two or three fragments: grown once
	// (a pooled buffer keeps its size) rather than by doubling.
	buf := append(slices.Grow((*bp)[:0], len(e.blob)*3/5), `{"flags":[`...)
	// reasons digests the winners the reasons of some flags needed (they
	// are not in ids).
	var reasons uint64
	next, comma := 0, 1 // the first answer goes without its comma
	for i, id := range ids {
		t := false
		if id == engine.NoVariantID && e.onKind[i] == onEvaluated {
			for e.evaluated[next] != int32(i) {
				next++
			}
			if t = targeted[next]; t {
				reasons = reasons*31 + uint64(i) + 1
			}
		}
		buf = append(buf, e.answer(i, id, t)[comma:]...)
		comma = 0
	}
	*tp = targeted[:0]
	targetedPool.Put(tp)
	buf = append(buf, ']')
	var stream []byte
	if h.opts.Changes != nil {
		stream = h.streamTail(e, scope)
		buf = append(buf, stream...)
	}
	buf = append(buf, '}')

	var d xxhash.Digest
	d.ResetWithSeed(e.version)
	var word [8]byte
	for _, v := range [...]uint64{contextHash(&ctx), reasons, uint64(len(ids))} {
		putUint64(word[:], v)
		_, _ = d.Write(word[:])
	}
	if len(ids) > 0 {
		_, _ = d.Write(unsafe.Slice((*byte)(unsafe.Pointer(&ids[0])), len(ids)*int(unsafe.Sizeof(ids[0]))))
	}
	_, _ = d.Write(stream)
	etag := appendETag(make([]byte, 0, 24), d.Sum64())
	h.writeAnswer(w, r, buf, string(etag))

	*ip = ids[:0]
	idsPool.Put(ip)
	*bp = buf[:0]
	bufPool.Put(bp)
}

// serveFlag answers POST /v1/evaluate/flags/{key}.
func (h *Handler) serveFlag(w http.ResponseWriter, r *http.Request) {
	rawKey := strings.TrimPrefix(r.URL.EscapedPath(), h.opts.BasePath+"/v1/evaluate/flags/")
	key, err := url.PathUnescape(rawKey)
	if err != nil || key == "" {
		errorf(http.StatusBadRequest, CodeGeneral, "the flag key in the path is not valid").write(w)
		return
	}
	var ctx engine.Context
	snap, _, ok := h.prepare(w, r, &ctx, key)
	if !ok {
		return
	}
	i, found := snap.Index(key)
	if !found {
		e := errorf(http.StatusNotFound, CodeFlagNotFound, "flag %q was not found", key)
		e.Key = key
		e.write(w)
		return
	}
	e := h.encodingFor(snap)
	res, targeted := snap.EvaluateTargeted(i, &ctx)
	if h.opts.Record != nil {
		h.opts.Record(snap, res)
	}
	id := engine.VariantID(res.Variant.ID)
	if !res.Enabled {
		id = engine.OffVariantID
	}
	status := http.StatusOK
	if id >= 0 && int(id) < len(e.failed) && e.failed[id] {
		status = http.StatusBadRequest
	}
	body := e.answer(i, id, targeted)[1:]
	hd := w.Header()
	hd.Set("Content-Type", "application/json; charset=utf-8")
	hd.Set("Cache-Control", "no-store")
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// writeAnswer sends a bulk answer, or 304 when If-None-Match names its
// ETag; gzipped when the client accepts it.
func (h *Handler) writeAnswer(w http.ResponseWriter, r *http.Request, body []byte, etag string) {
	hd := w.Header()
	hd.Set("ETag", etag)
	hd.Set("Cache-Control", "no-cache")
	httpgzip.AddVary(hd)
	if notModified(r, etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	hd.Set("Content-Type", "application/json; charset=utf-8")
	if httpgzip.Wants(r, len(body)) {
		hd.Set("Content-Encoding", "gzip")
		bp := bufPool.Get().(*[]byte)
		gz := httpgzip.Append((*bp)[:0], body)
		hd.Set("Content-Length", strconv.Itoa(len(gz)))
		w.WriteHeader(http.StatusOK)
		h.opts.WriteBody(w, r, gz)
		*bp = gz[:0]
		bufPool.Put(bp)
		return
	}
	hd.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	h.opts.WriteBody(w, r, body)
}

// notModified compares If-None-Match weakly with etag ("*" and lists
// allowed).
func notModified(r *http.Request, etag string) bool {
	want := strings.TrimPrefix(etag, "W/")
	for _, line := range r.Header.Values("If-None-Match") {
		for _, tag := range strings.Split(line, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" || strings.TrimPrefix(tag, "W/") == want {
				return true
			}
		}
	}
	return false
}

// appendETag writes a weak ETag of a 64-bit digest.
func appendETag(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	b = append(b, `W/"`...)
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, digits[(v>>uint(shift))&0xf])
	}
	return append(b, '"')
}

func putUint64(b []byte, v uint64) {
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
}

// contextHash digests a completed context; properties are combined so
// that their order does not matter.
func contextHash(ctx *engine.Context) uint64 {
	var d xxhash.Digest
	d.Reset()
	for _, s := range [...]string{ctx.UserID, ctx.SessionID, ctx.RemoteAddress, ctx.Environment, ctx.AppName, ctx.CurrentTime} {
		_, _ = d.WriteString(s)
		_, _ = d.Write([]byte{0})
	}
	h := d.Sum64()
	for k, v := range ctx.Properties {
		h += (xxhash.Sum64String(k)*0x9e3779b97f4a7c15 ^ xxhash.Sum64String(v)) * 0xbf58476d1ce4e5b9
	}
	return h
}
