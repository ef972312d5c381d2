package proxy

import (
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/proxy/wire"
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
	var err error
	switch strings.TrimSuffix(r.URL.Path, "/") {
	case "":
		err = h.serve(w, r, false)
	case "/all":
		err = h.serve(w, r, true)
	default:
		err = apierr.NotFound("no route for %s %s", r.Method, r.URL.Path)
	}
	if err != nil {
		apierr.Write(w, r, h.opts.Logger, err)
	}
}

// snapshotState is what the handler precomputes per snapshot.
type snapshotState struct {
	snap  *engine.Snapshot
	enc   *wire.Encoding
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
		st := &snapshotState{snap: s, enc: wire.NewEncoding(s)}
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

// serve evaluates for one request; its error is for the caller to write.
func (h *FrontendHandler) serve(w http.ResponseWriter, r *http.Request, all bool) error {
	if all && !h.opts.EnableAll {
		return apierr.NotImplemented("The /proxy/all endpoint is disabled. Please check your server configuration. To enable it, set the `enableAllEndpoint` configuration option or `ENABLE_ALL_ENDPOINT` environment variable to `true`.")
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
	h.respond(w, r, h.state(snap), ctx, names, all)
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
	clear(rc.names) // serve reslices it to length 0 before use
	requestContextPool.Put(rc)
}

// readPost checks the content type, reads the body within the limit and
// parses it.
func (h *FrontendHandler) readPost(w http.ResponseWriter, r *http.Request, ctx *engine.Context, names []string) ([]string, error) {
	if err := httpjson.CheckContentType(r, proxyContentRule); err != nil {
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
	if st.usage != nil {
		st.usage.record(results)
	}
	wire.WriteJSON(w, r, buf, wire.WeakETag(buf), true)
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
	buf := st.enc.AppendToggles((*bp)[:0], ids, all)
	if st.usage != nil {
		st.usage.recordIDs(ids)
	}
	wire.WriteJSON(w, r, buf, st.enc.ETag(len(buf), ids, all), true)
	*ip = ids[:0]
	idsPool.Put(ip)
	*bp = buf[:0]
	bufPool.Put(bp)
}
