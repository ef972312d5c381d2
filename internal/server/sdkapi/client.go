package sdkapi

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"regexp"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/clientconfig"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpgzip"
	"github.com/bunting-flags/bunting/internal/httpjson"
)

// clientCache keeps the client configuration at the store's current
// generation and the answers of the queries asked of it.
type clientCache struct {
	s  *API
	mu sync.Mutex
	// cfg is the configuration; responses the answers built from it.
	cfg       *clientconfig.Config
	responses map[string]*clientResponse
	// chunks keeps the compressed parts of large answers across
	// configurations, so that a change recompresses what it touched.
	chunks chunkCache
	// built is set once a configuration was built.
	built atomic.Bool
	// builds counts the builds by kind ("full", or "changed": only the
	// flags a change touched); buildSeconds times them.
	builds       *prometheus.CounterVec
	buildSeconds *prometheus.HistogramVec
}

func newClientCache(s *API) *clientCache {
	return &clientCache{s: s, responses: map[string]*clientResponse{},
		builds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bunting_client_config_builds_total",
			Help: "Builds of the client configuration SDKs are served from: full, or changed (only the flags a change touched).",
		}, []string{"kind"}),
		buildSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "bunting_client_config_build_seconds",
			Help:    "How long a build of the client configuration took, loading included.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"kind"}),
	}
}

// config returns the current configuration, bringing it up to the store's
// generation first. Concurrent callers wait for one load.
func (c *clientCache) config(r *http.Request) (*clientconfig.Config, error) {
	return c.configCtx(r.Context())
}

// configCtx is config outside a request. While the database is
// unavailable the last configuration is kept: SDKs get the flags as they
// were.
func (c *clientCache) configCtx(ctx context.Context) (*clientconfig.Config, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cfg != nil && (c.cfg.Generation == c.s.store.Generation() || c.s.store.Unavailable() != nil) {
		return c.cfg, nil
	}
	start := time.Now()
	var since, recent int64
	var related func([]string) []string
	if c.cfg != nil {
		since, recent, related = c.cfg.Revision, c.cfg.Recent, c.cfg.Dependents
	}
	data, err := c.s.store.ClientDataSince(c.s.store.Q(ctx), since, recent, related)
	if err != nil {
		if c.cfg != nil && apierr.IsKind(err, apierr.KindDatabaseUnavailable) {
			return c.cfg, nil
		}
		return nil, err
	}
	kind := "full"
	if c.cfg != nil && data.Only != nil && len(data.Only) == 0 && data.Revision == c.cfg.Revision {
		// The generation moved without a change (the revision poll saw
		// this process's own commit): same content, same answers.
		c.cfg = c.cfg.Apply(data)
		return c.cfg, nil
	}
	if c.cfg == nil || data.Only == nil {
		c.cfg = clientconfig.Build(data)
		c.built.Store(true)
		releaseAfterBuild(c.cfg.Size())
	} else {
		c.cfg, kind = c.cfg.Apply(data), "changed"
	}
	c.builds.WithLabelValues(kind).Inc()
	c.buildSeconds.WithLabelValues(kind).Observe(time.Since(start).Seconds())
	clear(c.responses)
	c.chunks.nextGeneration()
	return c.cfg, nil
}

// releaseAfterBuild gives the memory a build of size bytes of flags left
// behind back to the operating system when the build was large: loading
// or compiling a large configuration whole leaves several times its size
// in garbage (rows, decoded flags), which the runtime would otherwise keep
// for the heap to grow into. It runs before the build's caller goes on
// (a collection, tens of milliseconds for the largest configurations, on
// a path that took hundreds), so that the garbage is gone before the
// answers of the first reads add theirs.
func releaseAfterBuild(size int) {
	if size > materializeMax {
		debug.FreeOSMemory()
	}
}

// clientQuery is the effective filter of one client request, after the
// token's scope overrides the parameters.
type clientQuery struct {
	env        string
	projects   []string
	namePrefix string
	tags       [][2]string
	inline     bool
	// none is set when the asked projects and the token's do not overlap.
	none bool
}

// strictSemver matches a full semantic version; it is compiled on first
// use rather than at start-up.
var strictSemver = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\d+)\.(\d+)\.(\d+)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$`)
})

// parseClientQuery reads the token scope, the query parameters and the
// Unleash-Client-Spec header.
func parseClientQuery(r *http.Request) (clientQuery, error) {
	p := domain.PrincipalFrom(r.Context())
	q := clientQuery{env: p.Environment, inline: true}
	var values url.Values // SDKs usually send no query: nothing to parse
	if r.URL.RawQuery != "" {
		values = r.URL.Query()
	}
	if q.env == "*" || q.env == "" {
		q.env = values.Get("environment")
		if q.env == "" {
			q.env = "development"
		}
	}
	asked := values["project"]
	if p.AllProjects() {
		q.projects = asked
	} else if len(asked) == 0 && slices.IsSorted(p.Projects) {
		q.projects = p.Projects // only read from here on
	} else {
		q.projects = slices.Clone(p.Projects)
		if len(asked) > 0 {
			q.projects = slices.DeleteFunc(q.projects, func(proj string) bool { return !slices.Contains(asked, proj) })
			if len(q.projects) == 0 {
				q.projects, q.none = slices.Clone(asked), true
			}
		}
	}
	if !slices.IsSorted(q.projects) { // never true of the principal's own slice
		slices.Sort(q.projects)
	}
	q.namePrefix = values.Get("namePrefix")
	for _, t := range values["tag"] {
		typ, value, ok := strings.Cut(t, ":")
		if !ok || typ == "" || value == "" {
			return q, apierr.Validation("The `tag` query parameter must look like type:value. You sent %q.", t)
		}
		q.tags = append(q.tags, [2]string{typ, value})
	}
	if spec := r.Header.Get("Unleash-Client-Spec"); spec != "" {
		m := strictSemver().FindStringSubmatch(spec)
		if m == nil {
			return q, apierr.Validation("Invalid SemVer in the Unleash-Client-Spec header: %q.", spec)
		}
		major, _ := strconv.Atoi(m[1])
		minor, _ := strconv.Atoi(m[2])
		q.inline = major < 4 || (major == 4 && minor < 2)
	}
	return q, nil
}

func (q clientQuery) key() string { return string(q.appendKey(nil)) }

// appendKey appends the cache key of q to b.
func (q clientQuery) appendKey(b []byte) []byte {
	b = append(b, q.env...)
	for _, p := range q.projects {
		b = append(append(b, "\x00p"...), p...)
	}
	b = append(append(b, "\x00n"...), q.namePrefix...)
	for _, t := range q.tags {
		b = append(append(b, "\x00t"...), t[0]...)
		b = append(append(b, "\x00"...), t[1]...)
	}
	if q.inline {
		b = append(b, "\x00inline"...)
	}
	if q.none {
		b = append(b, "\x00none"...)
	}
	return b
}

func (q clientQuery) hash() string {
	h := fnv.New32a()
	h.Write([]byte(q.key()))
	return fmt.Sprintf("%08x", h.Sum32())
}

func (q clientQuery) matches(f *clientconfig.Flag) bool {
	if q.none {
		return false
	}
	if q.namePrefix != "" && !strings.HasPrefix(f.Name, q.namePrefix) {
		return false
	}
	if len(q.projects) > 0 && !slices.Contains(q.projects, f.Project) {
		return false
	}
	if len(q.tags) > 0 && !slices.ContainsFunc(q.tags, func(t [2]string) bool { return slices.Contains(f.Tags(), t) }) {
		return false
	}
	return true
}

// selectFlags returns the flags of cfg that q sees, sharing cfg's slice
// when it sees them all.
func (q clientQuery) selectFlags(cfg *clientconfig.Config) []*clientconfig.Flag {
	flags := cfg.Flags(q.env)
	for i, f := range flags {
		if !q.matches(f) {
			out := slices.Clone(flags[:i])
			for _, f := range flags[i+1:] {
				if q.matches(f) {
					out = append(out, f)
				}
			}
			return out
		}
	}
	return flags
}

func (q clientQuery) echo() *engine.Query {
	out := &engine.Query{Project: q.projects, NamePrefix: q.namePrefix, Environment: q.env, InlineSegmentConstraints: q.inline}
	if len(out.Project) == 0 {
		out.Project = []string{"*"}
	}
	for _, t := range q.tags {
		out.Tag = append(out.Tag, []string{t[0], t[1]})
	}
	return out
}

// response returns the answer for q, from cache when possible.
func (c *clientCache) response(r *http.Request, q clientQuery) (*clientResponse, error) {
	cfg, err := c.config(r)
	if err != nil {
		return nil, err
	}
	var buf [128]byte
	keyBytes := q.appendKey(buf[:0])
	c.mu.Lock()
	res, ok := c.responses[string(keyBytes)] // looked up without allocating
	c.mu.Unlock()
	if ok {
		return res, nil
	}
	key := string(keyBytes)
	res = newClientResponse(cfg, q, &c.chunks)
	c.mu.Lock()
	if c.cfg == cfg {
		if len(c.responses) > 1000 {
			clear(c.responses)
		}
		c.responses[key] = res
	}
	c.mu.Unlock()
	return res, nil
}

// The fixed parts of a GET /api/client/features answer around its flags.
var (
	featuresHead = []byte(`{"version":2,"features":[`)
	// featuresHeadGzip is featuresHead deflated once, for chunked answers.
	featuresHeadGzip = sync.OnceValue(func() httpgzip.Piece { return httpgzip.Deflate(false, featuresHead) })
)

// materializeMax is the largest answer kept whole in memory (with its
// gzip encoding); a larger one is written from the configuration's
// fragments on each request and compressed in chunks, so that a large
// configuration is held once. (A variable for tests.)
var materializeMax = 4 << 20

// clientResponse is one GET /api/client/features answer: `{"version":2,
// "features":[` (featuresHead), the flags' JSON separated by commas, then
// tail (segments, query, meta). Its strong ETag is "<query hash>:
// <revision>:<content hash>", so two instances serving the same data
// agree, and any change of content changes it.
type clientResponse struct {
	etag   string
	flags  [][]byte // the flags' JSON, in order
	tail   []byte
	length int
	// whole is the answer in one piece when it is at most materializeMax
	// bytes (flags is then nil).
	whole *httpgzip.Cached
	// gz is the chunked gzip encoding of a large answer, made on the
	// first request that accepts gzip.
	gz func() []httpgzip.Piece
}

// newClientResponse builds the answer for q from cfg.
func newClientResponse(cfg *clientconfig.Config, q clientQuery, chunks *chunkCache) *clientResponse {
	selected := q.selectFlags(cfg)
	res := &clientResponse{flags: make([][]byte, len(selected))}
	hashes := make([]uint64, len(selected))
	res.length = len(featuresHead) + max(len(selected)-1, 0)
	for i, f := range selected {
		res.flags[i], hashes[i] = f.Encoded(q.inline)
		res.length += len(res.flags[i])
	}
	// The tail up to the query is the content the ETag digests, with the
	// flags; the meta (holding the ETag) follows it.
	tail := []byte{']'}
	var segmentIDs []int
	if !q.inline {
		for _, f := range selected {
			segmentIDs = append(segmentIDs, f.SegmentIDs()...)
		}
		slices.Sort(segmentIDs)
		segmentIDs = slices.Compact(segmentIDs)
	}
	segments := 0
	for _, id := range segmentIDs {
		sg := cfg.Segment(id)
		if sg == nil {
			continue
		}
		if segments == 0 {
			tail = append(tail, `,"segments":[`...)
		} else {
			tail = append(tail, ',')
		}
		tail = append(tail, sg.JSON...)
		segments++
	}
	if segments > 0 {
		tail = append(tail, ']')
	}
	query, _ := json.Marshal(q.echo())
	tail = append(append(tail, `,"query":`...), query...)
	d := xxhash.New()
	_, _ = d.Write(featuresHead)
	for i, b := range res.flags {
		if i > 0 {
			_, _ = d.Write([]byte{','})
		}
		_, _ = d.Write(b)
	}
	_, _ = d.Write(tail)
	_, _ = d.Write([]byte{'}'})
	res.etag = fmt.Sprintf("%q", fmt.Sprintf("%s:%d:%08x", q.hash(), cfg.Revision, uint32(d.Sum64())))
	meta, _ := json.Marshal(&engine.Meta{Revision: cfg.Revision, ETag: res.etag, QueryHash: q.hash()})
	tail = append(append(tail, `,"meta":`...), meta...)
	if !q.inline && segments == 0 {
		// Keep "segments":[] for clients that announced segment support.
		tail = append(tail, `,"segments":[]`...)
	}
	res.tail = append(tail, '}')
	res.length += len(res.tail)
	if res.length <= materializeMax {
		body := make([]byte, 0, res.length)
		body = res.appendFlags(append(body, featuresHead...))
		res.whole, res.flags = httpgzip.NewCached(append(body, res.tail...)), nil
		return res
	}
	res.gz = sync.OnceValue(func() []httpgzip.Piece {
		pieces := append([]httpgzip.Piece{featuresHeadGzip()}, chunks.pieces(selected, res.flags, hashes)...)
		return append(pieces, httpgzip.Deflate(true, res.tail))
	})
	return res
}

// appendFlags appends the flags' JSON separated by commas.
func (res *clientResponse) appendFlags(b []byte) []byte {
	for i, f := range res.flags {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, f...)
	}
	return b
}

// writeBufSize is the size of the buffer a large answer is written
// through.
const writeBufSize = 64 << 10

var writeBufs = sync.Pool{New: func() any { b := make([]byte, 0, writeBufSize); return &b }}

// write sends the uncompressed body.
func (res *clientResponse) write(w http.ResponseWriter) {
	if res.whole != nil {
		_, _ = w.Write(res.whole.Body)
		return
	}
	bp := writeBufs.Get().(*[]byte)
	buf := append((*bp)[:0], featuresHead...)
	for i, f := range res.flags {
		if len(buf)+len(f)+1 > writeBufSize {
			if _, err := w.Write(buf); err != nil {
				break
			}
			buf = buf[:0]
		}
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, f...)
	}
	_, _ = w.Write(append(buf, res.tail...))
	*bp = buf[:0]
	writeBufs.Put(bp)
}

func (s *API) clientFeatures(w http.ResponseWriter, r *http.Request) error {
	q, err := parseClientQuery(r)
	if err != nil {
		return err
	}
	res, err := s.client.response(r, q)
	if err != nil {
		return err
	}
	writeClientFeatures(w, r, res)
	return nil
}

// writeClientFeatures sends res: 304 to a matching If-None-Match, else
// the body, gzipped when the client accepts it.
func writeClientFeatures(w http.ResponseWriter, r *http.Request, res *clientResponse) {
	h := w.Header()
	httpgzip.AddVary(h)
	if r.Header.Get("If-None-Match") == res.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("ETag", res.etag)
	h.Set("Content-Type", "application/json; charset=utf-8")
	gzipped := httpgzip.Wants(r, res.length)
	if gzipped {
		h["Content-Encoding"] = httpgzip.HeaderGzip
	}
	switch {
	case !gzipped:
		h.Set("Content-Length", strconv.Itoa(res.length))
	case res.whole != nil:
		h.Set("Content-Length", strconv.Itoa(len(res.whole.Gzipped())))
	default:
		h.Set("Content-Length", strconv.Itoa(httpgzip.GzipLen(res.gz())))
	}
	w.WriteHeader(http.StatusOK)
	switch {
	case r.Method == http.MethodHead:
	case !gzipped:
		res.write(w)
	case res.whole != nil:
		_, _ = w.Write(res.whole.Gzipped())
	default:
		_ = httpgzip.WriteGzip(w, res.gz())
	}
}

func (s *API) clientFeature(w http.ResponseWriter, r *http.Request) error {
	q, err := parseClientQuery(r)
	if err != nil {
		return err
	}
	cfg, err := s.client.config(r)
	if err != nil {
		return err
	}
	name := r.PathValue("featureName")
	f := cfg.Find(q.env, name)
	if f == nil || !q.matches(f) {
		return apierr.NotFound("Could not find feature flag %s", name)
	}
	body, _ := f.Encoded(q.inline)
	return httpjson.Write(w, http.StatusOK, json.RawMessage(body))
}

// chunkCache keeps the deflated chunks of large answers: consecutive runs
// of flags whose boundaries depend on the flags' names only, so that a
// change to one flag leaves the other chunks as they were.
type chunkCache struct {
	mu        sync.Mutex
	cur, prev map[uint64]httpgzip.Piece
}

// Chunk bounds: a chunk ends after a flag whose name hashes to a multiple
// of chunkEvery once it holds chunkMin bytes, and at chunkMax bytes in
// any case.
const (
	chunkMin   = 32 << 10
	chunkMax   = 256 << 10
	chunkEvery = 16
)

// nextGeneration starts a new configuration: chunks not used since the
// last configuration that used any are dropped (so a few changes in a row
// without a gzip request in between keep them).
func (cc *chunkCache) nextGeneration() {
	cc.mu.Lock()
	if len(cc.cur) > 0 {
		cc.prev, cc.cur = cc.cur, map[uint64]httpgzip.Piece{}
	}
	cc.mu.Unlock()
}

// pieces deflates the flags' JSON, separated by commas, in chunks, reusing
// the chunks already deflated.
func (cc *chunkCache) pieces(flags []*clientconfig.Flag, data [][]byte, hashes []uint64) []httpgzip.Piece {
	var out []httpgzip.Piece
	start, size := 0, 0
	for i, f := range flags {
		size += len(data[i]) + 1
		if i < len(flags)-1 && size < chunkMax && (size < chunkMin || xxhash.Sum64String(f.Name)%chunkEvery != 0) {
			continue
		}
		out = append(out, cc.chunk(data[start:i+1], hashes[start:i+1], start == 0))
		start, size = i+1, 0
	}
	return out
}

// chunk returns the deflated chunk of parts (a leading comma unless
// first), from the cache when it was deflated before.
func (cc *chunkCache) chunk(parts [][]byte, hashes []uint64, first bool) httpgzip.Piece {
	d := xxhash.New()
	var b [8]byte
	if first {
		_, _ = d.Write([]byte{1})
	}
	for _, h := range hashes {
		for i := range b {
			b[i] = byte(h >> (8 * i))
		}
		_, _ = d.Write(b[:])
	}
	key := d.Sum64()
	cc.mu.Lock()
	p, ok := cc.cur[key]
	if !ok {
		if p, ok = cc.prev[key]; ok {
			cc.cur[key] = p
		}
	}
	cc.mu.Unlock()
	if ok {
		return p
	}
	joined := make([][]byte, 0, 2*len(parts))
	for i, part := range parts {
		if i > 0 || !first {
			joined = append(joined, []byte{','})
		}
		joined = append(joined, part)
	}
	p = httpgzip.Deflate(false, joined...)
	cc.mu.Lock()
	if cc.cur == nil {
		cc.cur = map[uint64]httpgzip.Piece{}
	}
	cc.cur[key] = p
	cc.mu.Unlock()
	return p
}
