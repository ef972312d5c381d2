// Package proxy is Bunting's client proxy: it keeps an upstream flag
// server's configuration in memory, evaluates flags for front-end SDKs and
// returns only the results, wire-compatible with the Unleash proxy.
//
// Go programs can mount it: build a Config (LoadConfig or DefaultConfig),
// call New, serve the *Proxy as an http.Handler and call Run.
package proxy

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"os/user"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/frontend"
	"github.com/bunting-flags/bunting/internal/httpgzip"
	"github.com/bunting-flags/bunting/internal/httpserver"
	"github.com/bunting-flags/bunting/internal/ofrep"
	"github.com/bunting-flags/bunting/internal/upstream"
	"github.com/bunting-flags/bunting/internal/wire"
)

// Version is reported upstream as part of the SDK version.
var Version = "dev"

// ContextEnricher changes a request's context before evaluation. A
// failing enricher is skipped and logged.
type ContextEnricher interface {
	Enrich(ctx engine.Context) (engine.Context, error)
}

// Option customises New.
type Option func(*settings)

type settings struct {
	logger     *slog.Logger
	storage    StorageProvider
	httpClient *http.Client
	registry   prometheus.Registerer
	gatherer   prometheus.Gatherer
	strategies map[string]engine.CustomStrategy
	enrichers  []ContextEnricher
	compact    bool
}

// WithMemoryCompaction makes the proxy collect garbage and return free
// memory to the operating system after each configuration change (the
// decoding and compiling garbage of a large payload would otherwise stay
// resident). The bunting proxy command uses it; it costs a few
// milliseconds per change.
func WithMemoryCompaction() Option { return func(s *settings) { s.compact = true } }

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(s *settings) { s.logger = l } }

// WithStorageProvider replaces the file backup (nil disables backups).
func WithStorageProvider(sp StorageProvider) Option {
	return func(s *settings) { s.storage = sp }
}

// WithHTTPClient sets the client used towards upstream; it then owns TLS
// settings (httpOptions.rejectUnauthorized is not applied).
func WithHTTPClient(c *http.Client) Option { return func(s *settings) { s.httpClient = c } }

// WithRegistry registers the proxy's Prometheus metrics in r as well as
// serving them at /proxy/internal-backstage/prometheus.
func WithRegistry(r prometheus.Registerer) Option { return func(s *settings) { s.registry = r } }

// WithCustomStrategies adds Go custom strategies (script strategies from
// Config.CustomStrategies are added too; these win on a name clash).
func WithCustomStrategies(m map[string]engine.CustomStrategy) Option {
	return func(s *settings) { s.strategies = m }
}

// WithEnrichers adds Go context enrichers, run after the script ones.
func WithEnrichers(e ...ContextEnricher) Option {
	return func(s *settings) { s.enrichers = append(s.enrichers, e...) }
}

// Proxy is the client proxy. It is an http.Handler; Run keeps it in sync
// with upstream.
type Proxy struct {
	cfg        Config
	log        *slog.Logger
	storage    StorageProvider
	upstream   *upstream.Client
	strategies map[string]engine.CustomStrategy
	enrichers  []ContextEnricher
	usage      *Usage
	metrics    *promMetrics

	snapshot   atomic.Pointer[engine.Snapshot]
	fromAPI    atomic.Bool
	readyOnce  sync.Once
	readyCh    chan struct{}
	lastSum    [sha256.Size]byte // of the served upstream body; sync loop only
	features   atomic.Pointer[featuresBody]
	relay      *relay // streaming and delta for server-side SDKs (streaming.go)
	compact    bool
	started    time.Time
	instanceID string

	frontend  *frontend.Handler
	routes    *routeIndex
	handler   http.Handler
	docs      http.Handler
	keyHeader string
	// anyOrigin holds the CORS headers sent to requests without an Origin
	// when every origin is allowed (the spec wants them on every
	// successful response); nil otherwise.
	anyOrigin  http.Header
	clientKeys map[string]struct{}
	sdkTokens  map[string]struct{}

	// sdkVariants indexes the served snapshots' variants for SDK metrics
	// posts (addSDKUsage); built on the first post after a change.
	sdkVariants atomic.Pointer[[]*variantIndex]

	// ofrep serves OpenFeature's protocol (ofrep.go); ofrepChanges wakes
	// its event streams after each new snapshot.
	ofrep        *ofrep.Handler
	ofrepChanges *ofrep.Broadcaster
}

// servedSnapshots is how many snapshots the proxy keeps encodings and
// usage counters for: the one being served and the one before it, which
// requests that started before a change may still use. Older ones are
// garbage once their counts are posted.
const servedSnapshots = 2

// featuresBody caches the /proxy/client/features response of a snapshot,
// its wire.ETag and, once asked for, its gzip encoding.
type featuresBody struct {
	snap *engine.Snapshot
	body *httpgzip.Cached
	etag wire.ETag
}

// New builds a proxy from a validated configuration. It loads script
// files and the backup; it does not contact upstream (Run does).
func New(cfg Config, opts ...Option) (*Proxy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := settings{storage: FileStorage{Dir: cfg.BackupDir}}
	for _, o := range opts {
		o(&s)
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	p := &Proxy{
		cfg:        cfg,
		log:        s.logger,
		storage:    s.storage,
		usage:      NewUsage(),
		readyCh:    make(chan struct{}),
		started:    time.Now(),
		keyHeader:  textproto.CanonicalMIMEHeaderKey(cfg.ClientKeysHeaderName),
		clientKeys: toSet(cfg.ClientKeys),
		sdkTokens:  toSet(cfg.ExpServerSideSDKTokens),
		compact:    s.compact,
	}
	p.usage.keep = servedSnapshots
	if err := p.loadScripts(s); err != nil {
		return nil, err
	}
	p.instanceID = cfg.UpstreamInstanceID
	if p.instanceID == "" {
		p.instanceID = generatedInstanceID()
	}
	hc := s.httpClient
	if hc == nil {
		hc = upstream.NewHTTPClient(cfg.HTTPOptions.RejectUnauthorized)
	}
	p.upstream = upstream.New(p.upstreamConfig(), hc)
	p.frontend = frontend.New(frontend.Options{
		Snapshot:          p.currentSnapshot,
		EnableAllEndpoint: cfg.EnableAllEndpoint,
		Counter:           p.usage.Counter,
		Complete:          p.completeContext,
		MaxBodyBytes:      cfg.MaxBodyBytes,
		Logger:            p.log,
		Snapshots:         servedSnapshots,
	})
	p.routes = newRouteIndex(cfg.ProxyBasePath, routeTable)
	p.metrics = newPromMetrics(s.registry, p.routes)
	p.newOFREP()
	p.relay = newRelay(p)
	// Security headers go on first, so that every answer carries them.
	p.handler = httpserver.PageHeaders(p.withCORS(http.HandlerFunc(p.route)))
	if len(cfg.CORS.Origin) == 1 && cfg.CORS.Origin[0] == "*" && !cfg.CORS.Credentials {
		p.anyOrigin = http.Header{"Access-Control-Allow-Origin": {"*"}}
		if len(cfg.CORS.ExposedHeaders) > 0 {
			p.anyOrigin["Access-Control-Expose-Headers"] = []string{strings.Join(cfg.CORS.ExposedHeaders, ", ")}
		}
	}
	if cfg.EnableOAS {
		p.docs = httpserver.PageHeaders(newDocsHandler(cfg))
	}
	p.loadBackup()
	return p, nil
}

func (p *Proxy) upstreamConfig() upstream.Config {
	tags := make([]string, len(p.cfg.Tags))
	for i, t := range p.cfg.Tags {
		tags[i] = t.Name + ":" + t.Value
	}
	return upstream.Config{
		BaseURL:         p.cfg.UpstreamURL,
		Token:           p.cfg.UpstreamAPIToken,
		AppName:         p.cfg.UpstreamAppName,
		InstanceID:      p.instanceID,
		ConnectionID:    newUUID(),
		SDKVersion:      "bunting-proxy:" + Version,
		Interval:        p.cfg.RefreshInterval,
		MetricsInterval: p.cfg.MetricsInterval,
		Project:         p.cfg.ProjectName,
		NamePrefix:      p.cfg.NamePrefix,
		Tags:            tags,
	}
}

func toSet(items []string) map[string]struct{} {
	m := make(map[string]struct{}, len(items))
	for _, it := range items {
		m[it] = struct{}{}
	}
	return m
}

func generatedInstanceID() string {
	host, _ := os.Hostname()
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username + "-" + host
	}
	return fmt.Sprintf("generated-%s-%d-%s", newUUID()[:8], os.Getpid(), host)
}

func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// Ready reports whether the proxy has a configuration to serve (from
// upstream, the bootstrap or the backup).
func (p *Proxy) Ready() bool { return p.snapshot.Load() != nil }

// ReadyChan is closed when the proxy becomes ready.
func (p *Proxy) ReadyChan() <-chan struct{} { return p.readyCh }

// Snapshot returns the snapshot being served, or nil before ready. Its
// Features payload is kept only when the proxy serves it to server-side
// SDKs (ExpServerSideSDKTokens); otherwise it has no flags or segments.
func (p *Proxy) Snapshot() *engine.Snapshot { return p.snapshot.Load() }

// Config returns the proxy's configuration.
func (p *Proxy) Config() Config { return p.cfg }

func (p *Proxy) currentSnapshot(*http.Request) (*engine.Snapshot, error) {
	if s := p.snapshot.Load(); s != nil {
		return s, nil
	}
	return nil, errNotReady
}

var errNotReady = apierr.Unavailable("The Unleash Proxy has not connected to the Unleash API and is not ready to accept requests yet.")

// install serves a new snapshot.
func (p *Proxy) install(s *engine.Snapshot, source string) {
	// The frontend's encodings are built from the payload, so before it
	// may be released.
	p.frontend.Prepare(s)
	if !p.servesPayload() {
		releasePayload(s)
	}
	p.snapshot.Store(s)
	p.relay.publish(s)
	p.ofrepChanges.Notify()
	p.metrics.flagsLoaded.Set(float64(s.Len()))
	p.readyOnce.Do(func() {
		p.metrics.ready.Set(1)
		p.log.Info("proxy is ready", "source", source, "flags", s.Len())
		close(p.readyCh)
	})
}

// servesPayload reports whether the proxy hands the flag configuration
// itself to server-side SDKs (/proxy/client/features), and so needs each
// snapshot's decoded payload after compiling it.
func (p *Proxy) servesPayload() bool { return len(p.sdkTokens) > 0 }

// releasePayload drops the decoded payload a snapshot was compiled from,
// about half of a snapshot's memory. Evaluation never reads it (see
// engine.Compile); Features then returns a payload with no flags or
// segments.
func releasePayload(s *engine.Snapshot) {
	if cf := s.Features(); cf != nil {
		*cf = engine.ClientFeatures{Version: cf.Version}
	}
}

// compactMemory returns the garbage of a configuration change to the
// operating system when WithMemoryCompaction is set.
func (p *Proxy) compactMemory() {
	if p.compact {
		debug.FreeOSMemory()
	}
}

// collectGarbage frees the body and decoding garbage of a configuration
// change before it is compiled, when WithMemoryCompaction is set, so that
// compiling reuses that memory instead of growing the heap: the proxy's
// peak resident memory is reached during a change.
func (p *Proxy) collectGarbage() {
	if p.compact {
		runtime.GC()
	}
}

func (p *Proxy) compile(cf *engine.ClientFeatures) *engine.Snapshot {
	return engine.Compile(cf, engine.Options{CustomStrategies: p.strategies})
}

// ServeHTTP serves every route of the proxy.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.docs != nil && strings.HasPrefix(r.URL.Path, p.cfg.ProxyBasePath+"/docs/") {
		p.docs.ServeHTTP(w, r)
		return
	}
	p.handler.ServeHTTP(w, r)
}

// CoalesceWrites prepares srv, which serves a Proxy, to send each large
// response in one system call; see wire.CoalesceWrites.
func CoalesceWrites(srv *http.Server, ln net.Listener) net.Listener {
	return wire.CoalesceWrites(srv, ln)
}

// MaxToggleNames is the most names a POST's toggle list may hold (a 400
// beyond); see wire.MaxToggleNames.
const MaxToggleNames = wire.MaxToggleNames

// FrontendHandler is the evaluation endpoints alone (no upstream, no
// client keys), as the server mounts them at /api/frontend; build one with
// NewFrontendHandler.
type FrontendHandler = frontend.Handler

// FrontendOptions configure a FrontendHandler.
type FrontendOptions = frontend.Options

// UsageCounter counts the evaluations served from one snapshot (see
// Usage.Counter).
type UsageCounter = frontend.Counter

// NewFrontendHandler builds the evaluation endpoints alone.
func NewFrontendHandler(opts FrontendOptions) *FrontendHandler { return frontend.New(opts) }
