// Package frontend is the evaluation endpoints that front-end SDKs call,
// mounted by both products: the proxy at /proxy (and Edge's paths), the
// server at /api/frontend. A request names a context (in the query or a
// POST body) and, optionally, a list of flags; the answer is the
// evaluated flags in the reference's toggle shape, built from a
// snapshot's precomputed fragments (internal/wire).
//
// Three different things are "all" in the reference's vocabulary, and
// this package names them apart:
//
//   - the /all endpoint (Options.EnableAllEndpoint): its answer lists the
//     disabled flags too (withDisabled);
//   - a request that names no flags (no toggles in a POST body, or a GET):
//     every flag of the snapshot is evaluated (respondEveryFlag);
//   - every flag evaluated at once is counted as one "whole" evaluation
//     by a Counter (RecordIDs).
package frontend

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/snapcache"
	"github.com/bunting-flags/bunting/internal/wire"
)

// Options configure the evaluation endpoints.
type Options struct {
	// Snapshot picks the snapshot for a request; it may reject the
	// request with an apierr error (for example an unknown token).
	Snapshot func(r *http.Request) (*engine.Snapshot, error)
	// EnableAllEndpoint serves "/all" (every flag, disabled ones
	// included); otherwise "/all" answers 501.
	EnableAllEndpoint bool
	// Counter, when set, returns the usage counter of a snapshot; it is
	// called once per snapshot the handler prepares.
	Counter func(*engine.Snapshot) Counter
	// Complete finishes the context of a request after it was parsed
	// (remote address, forced environment, default appName, enrichers);
	// may be nil.
	Complete func(r *http.Request, ctx *engine.Context) error
	// MaxBodyBytes limits POST bodies; 0 means 100 kB.
	MaxBodyBytes int64
	// Logger receives internal errors; nil discards them.
	Logger *slog.Logger
	// Snapshots bounds the snapshots whose encodings are kept; 0 means
	// 16 (the server serves one snapshot per token scope; the proxy one
	// at a time and keeps 2).
	Snapshots int
}

// Counter counts the evaluations served from one snapshot.
type Counter interface {
	// Record counts the results of a toggle list (Found results only).
	Record(results []engine.Result)
	// RecordIDs counts one evaluation of every flag: ids[i] is flag i's
	// outcome.
	RecordIDs(ids []engine.VariantID)
}

// BodyContentRule is the content-type rule of POST bodies: as the
// reference's proxy, a body without a Content-Type is taken as JSON.
var BodyContentRule = httpjson.ContentRule{Optional: true}

// Handler serves GET/HEAD/POST "" and "/all" relative to where it is
// mounted (strip the prefix first, e.g. with http.StripPrefix).
type Handler struct {
	opts  Options
	cache *snapcache.Cache[*snapshotState]
}

// New builds the evaluation endpoints.
func New(opts Options) *Handler {
	if opts.MaxBodyBytes <= 0 {
		opts.MaxBodyBytes = 100 * 1024
	}
	if opts.Snapshots <= 0 {
		opts.Snapshots = cacheSize
	}
	return &Handler{opts: opts, cache: snapcache.New[*snapshotState](opts.Snapshots)}
}

// ServeHTTP serves "", "/", "/all" and "/all/".
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var err error
	switch strings.TrimSuffix(r.URL.Path, "/") {
	case "":
		err = h.Serve(w, r, false)
	case "/all":
		err = h.Serve(w, r, true)
	default:
		err = apierr.NotFound("no route for %s %s", r.Method, r.URL.Path)
	}
	if err != nil {
		apierr.Write(w, r, h.opts.Logger, err)
	}
}

// snapshotState is what the handler precomputes per snapshot.
type snapshotState struct {
	snap    *engine.Snapshot
	enc     *wire.Encoding
	counter Counter
	answers answerCache
}

// cacheSize is how many snapshots' encodings are kept by default.
const cacheSize = 16

// Prepare precomputes what serving s needs (its encoding and usage
// counter), so that the first request after a change does not pay for it.
func (h *Handler) Prepare(s *engine.Snapshot) { h.state(s) }

// Counter returns the usage counter of s (nil without Options.Counter).
func (h *Handler) Counter(s *engine.Snapshot) Counter { return h.state(s).counter }

// Forget drops what is kept for s, a snapshot that will not be served
// again.
func (h *Handler) Forget(s *engine.Snapshot) { h.cache.Forget(s) }

// Snapshots returns the snapshots whose encodings are kept, newest first.
func (h *Handler) Snapshots() []*engine.Snapshot { return h.cache.Snapshots() }

func (h *Handler) state(s *engine.Snapshot) *snapshotState {
	return h.cache.Get(s, func(s *engine.Snapshot) *snapshotState {
		st := &snapshotState{snap: s, enc: wire.NewEncoding(s)}
		if h.opts.Counter != nil {
			st.counter = h.opts.Counter(s)
		}
		return st
	})
}

var (
	resultPool = sync.Pool{New: func() any { s := make([]engine.Result, 0, 128); return &s }}
	idsPool    = sync.Pool{New: func() any { s := make([]engine.VariantID, 0, 128); return &s }}
	bufPool    = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}
)

// errAllEndpointDisabled is the answer of "/all" when it is not enabled,
// in the reference's words.
var errAllEndpointDisabled = apierr.NotImplemented("The /proxy/all endpoint is disabled. Please check your server configuration. To enable it, set the `enableAllEndpoint` configuration option or `ENABLE_ALL_ENDPOINT` environment variable to `true`.")

// Serve evaluates for one request; withDisabled is the "/all" endpoint,
// whose answer lists the disabled flags too. Its error is for the caller
// to write.
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, withDisabled bool) error {
	if withDisabled && !h.opts.EnableAllEndpoint {
		return errAllEndpointDisabled
	}
	rc := getRequestContext()
	defer putRequestContext(rc)
	ctx := &rc.ctx
	var names []string
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		if err := wire.ParseQuery(r.URL.RawQuery, ctx); err != nil {
			return err
		}
	case http.MethodPost:
		var err error
		if names, err = h.readPost(w, r, ctx, rc.names[:0]); err != nil {
			return err
		}
		if names != nil {
			rc.names = names
		}
	default:
		return httpjson.MethodNotAllowed(w, r, "GET, HEAD, POST")
	}
	wire.NormaliseCurrentTime(ctx)
	snap, err := h.opts.Snapshot(r)
	if err != nil {
		return err
	}
	if h.opts.Complete != nil {
		if err := h.opts.Complete(r, ctx); err != nil {
			return err
		}
	}
	st := h.state(snap)
	if names == nil { // no names given: every flag
		respondEveryFlag(w, r, st, ctx, withDisabled)
	} else {
		respondNamed(w, r, st, ctx, names)
	}
	return nil
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
	clear(rc.names) // Serve reslices it to length 0 before use
	requestContextPool.Put(rc)
}

// readPost checks the content type, reads the body within the limit and
// parses it.
func (h *Handler) readPost(w http.ResponseWriter, r *http.Request, ctx *engine.Context, names []string) ([]string, error) {
	if err := httpjson.CheckContentType(r, BodyContentRule); err != nil {
		return nil, err
	}
	bp := bufPool.Get().(*[]byte)
	defer bufPool.Put(bp)
	body, err := wire.ReadBody(w, r, h.opts.MaxBodyBytes, (*bp)[:0])
	*bp = body[:0]
	if err != nil {
		return nil, err
	}
	return wire.ParsePostBody(body, ctx, names)
}

// respondNamed evaluates and writes the named flags, in the order asked
// (unknown names answer disabled).
func respondNamed(w http.ResponseWriter, r *http.Request, st *snapshotState, ctx *engine.Context, names []string) {
	rp := resultPool.Get().(*[]engine.Result)
	results := (*rp)[:0]
	bp := bufPool.Get().(*[]byte)
	buf := append((*bp)[:0], `{"toggles":[`...)
	for _, name := range names {
		res := st.snap.Evaluate(name, ctx)
		if res.Found {
			results = append(results, res)
			buf = st.enc.AppendToggle(buf, &res)
		} else {
			// Not counted: upstream keeps usage of its own flags only,
			// and a client could otherwise fill the bucket with names.
			buf = wire.AppendUnknownToggle(buf, name)
		}
		buf = append(buf, ',')
	}
	if buf[len(buf)-1] == ',' {
		buf = buf[:len(buf)-1]
	}
	buf = append(buf, "]}"...)
	if st.counter != nil {
		st.counter.Record(results)
	}
	wire.WriteJSON(w, r, buf, wire.WeakETag(buf), true)
	// Results point into the snapshot only, so they are not cleared.
	*rp = results[:0]
	resultPool.Put(rp)
	*bp = buf[:0]
	bufPool.Put(bp)
}

// respondEveryFlag evaluates every flag and writes the enabled ones (all
// of them withDisabled). Every flag is counted, including those the
// answer leaves out because they are off.
func respondEveryFlag(w http.ResponseWriter, r *http.Request, st *snapshotState, ctx *engine.Context, withDisabled bool) {
	ip := idsPool.Get().(*[]engine.VariantID)
	ids := st.snap.EvaluateAllIDs(ctx, (*ip)[:0])
	if st.counter != nil {
		st.counter.RecordIDs(ids)
	}
	hash := st.enc.OutcomeHash(ids, withDisabled)
	if a := st.answers.get(hash, ids, withDisabled); a != nil {
		wire.WriteJSON(w, r, a.body, a.etag, true)
	} else {
		bp := bufPool.Get().(*[]byte)
		buf := st.enc.AppendToggles((*bp)[:0], ids, withDisabled)
		etag := wire.OutcomeETag(len(buf), hash)
		st.answers.offer(hash, ids, withDisabled, buf, etag)
		wire.WriteJSON(w, r, buf, etag, true)
		*bp = buf[:0]
		bufPool.Put(bp)
	}
	*ip = ids[:0]
	idsPool.Put(ip)
}
