package proxy

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpgzip"
)

// Route names, also the "route" label of the request metrics.
const (
	routeFrontend   = "frontend"
	routeAll        = "all"
	routeHealth     = "health"
	routeMetrics    = "client_metrics"
	routeRegister   = "client_register"
	routeFeatures   = "client_features"
	routeStreaming  = "client_streaming"
	routeDelta      = "client_delta"
	routePrometheus = "prometheus"
	routeOptions    = "options"
	routeUnknown    = "unknown"
)

// route serves every request that is not for the docs, and records it.
func (p *Proxy) route(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := recorderPool.Get().(*statusRecorder)
	rec.ResponseWriter, rec.status = w, http.StatusOK
	if p.anyOrigin != nil && len(r.Header["Origin"]) == 0 {
		h := w.Header()
		for k, v := range p.anyOrigin {
			h[k] = v
		}
	}
	name := p.dispatch(rec, r)
	p.metrics.observe(name, r.Method, rec.status, time.Since(start))
	rec.ResponseWriter = nil
	recorderPool.Put(rec)
}

// dispatch answers a request on one of the proxy's routes. Until the
// first configuration arrives, every request but a CORS preflight gets
// the 503 not-ready answer, whatever its route, method or credentials.
func (p *Proxy) dispatch(w http.ResponseWriter, r *http.Request) string {
	if r.Method == http.MethodOptions {
		w.WriteHeader(p.cfg.CORS.OptionsSuccessStatus)
		return routeOptions
	}
	name := p.resolve(r.URL.Path)
	if !p.Ready() {
		apierr.Write(w, r, p.log, errNotReady)
		return name
	}
	switch name {
	case routeFrontend:
		p.serveFrontend(w, r, false)
	case routeAll:
		p.serveFrontend(w, r, true)
	case routeHealth:
		p.serveHealth(w, r)
	case routeMetrics:
		p.serveClientMetrics(w, r)
	case routeRegister:
		p.serveRegister(w, r)
	case routeFeatures:
		p.serveFeatures(w, r)
	case routeStreaming:
		p.serveStreaming(w, r)
	case routeDelta:
		p.serveDelta(w, r)
	case routePrometheus:
		p.servePrometheus(w, r)
	default:
		p.notFound(w, r)
	}
	return name
}

// resolve names the route of a request path. Under the base path, the
// front-end routes live under /proxy and, as Unleash Edge serves them,
// under /api/frontend and /api/proxy; server-side SDKs that talk to Edge
// find /api/client/{features,metrics,register}.
func (p *Proxy) resolve(path string) string {
	rest, ok := strings.CutPrefix(path, p.cfg.ProxyBasePath)
	if !ok {
		return routeUnknown
	}
	own := true
	if sub, ok := cutSegments(rest, "/proxy"); ok {
		rest = sub
	} else if sub, ok := cutSegments(rest, "/api/frontend"); ok {
		rest, own = sub, false
	} else if sub, ok := cutSegments(rest, "/api/proxy"); ok {
		rest, own = sub, false
	} else if sub, ok := cutSegments(rest, "/api/client"); ok {
		return sdkRoute(trimSlash(sub))
	} else {
		return routeUnknown
	}
	switch trimSlash(rest) {
	case "", "/":
		return routeFrontend
	case "/all":
		return routeAll
	case "/client/metrics", "/all/client/metrics":
		return routeMetrics
	case "/client/register", "/all/client/register":
		return routeRegister
	}
	if !own {
		return routeUnknown
	}
	switch trimSlash(rest) {
	case "/health":
		return routeHealth
	case "/client/features":
		return routeFeatures
	case "/internal-backstage/prometheus":
		return routePrometheus
	}
	return routeUnknown
}

// sdkRoute names the server-side SDK routes under /api/client (Edge's
// paths).
func sdkRoute(rest string) string {
	switch rest {
	case "/features":
		return routeFeatures
	case "/metrics":
		return routeMetrics
	case "/register":
		return routeRegister
	case "/streaming":
		return routeStreaming
	case "/delta":
		return routeDelta
	}
	return routeUnknown
}

// cutSegments removes prefix from path when it ends there or at a "/".
func cutSegments(path, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(path, prefix)
	if !ok || (rest != "" && rest[0] != '/') {
		return path, false
	}
	return rest, true
}

// trimSlash drops one trailing slash, keeping a lone "/".
func trimSlash(rest string) string {
	if len(rest) > 1 {
		return strings.TrimSuffix(rest, "/")
	}
	return rest
}

func (p *Proxy) notFound(w http.ResponseWriter, r *http.Request) {
	apierr.Write(w, r, p.log, apierr.NotFound("Cannot %s %s", r.Method, r.URL.Path))
}

func (p *Proxy) methodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) {
	w.Header().Set("Allow", allow)
	apierr.Write(w, r, p.log, &apierr.Error{Kind: apierr.KindMethodNotAllowed, Message: "Cannot " + r.Method + " " + r.URL.Path})
}

func isRead(r *http.Request) bool { return r.Method == http.MethodGet || r.Method == http.MethodHead }

// serveFrontend checks the client key, then evaluates.
func (p *Proxy) serveFrontend(w http.ResponseWriter, r *http.Request, all bool) {
	if !isRead(r) && r.Method != http.MethodPost {
		p.methodNotAllowed(w, r, "GET, HEAD, POST")
		return
	}
	if !p.hasKey(r, p.clientKeys) {
		p.unauthorized(w, r)
		return
	}
	p.frontend.serve(w, r, all)
}

func (p *Proxy) key(r *http.Request) string {
	if v := r.Header[p.keyHeader]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func (p *Proxy) hasKey(r *http.Request, keys map[string]struct{}) bool {
	k := p.key(r)
	if k == "" {
		return false
	}
	_, ok := keys[k]
	return ok
}

func (p *Proxy) unauthorized(w http.ResponseWriter, r *http.Request) {
	apierr.Write(w, r, p.log, apierr.Unauthenticated("Unauthorized: send a valid client key in the %q header", p.cfg.ClientKeysHeaderName))
}

var headerHTML = []string{"text/html; charset=utf-8"}
var headerText = []string{"text/plain; charset=utf-8"}

func (p *Proxy) serveHealth(w http.ResponseWriter, r *http.Request) {
	if !isRead(r) {
		p.methodNotAllowed(w, r, "GET, HEAD")
		return
	}
	h := w.Header()
	h["Content-Type"] = headerHTML
	h["Content-Length"] = headerLengthOK
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(bodyOK)
	}
}

// The health answer's body and its length, shared by every request (never
// modified), so that answering allocates nothing.
var (
	bodyOK         = []byte("ok")
	headerLengthOK = []string{"2"}
)

func writeOK(w http.ResponseWriter) {
	w.Header()["Content-Type"] = headerText
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("OK"))
}

// sdkMetrics is the body SDKs post to /proxy/client/metrics.
type sdkMetrics struct {
	AppName    *string `json:"appName"`
	InstanceID string  `json:"instanceId"`
	Bucket     *struct {
		Start   *string              `json:"start"`
		Stop    *string              `json:"stop"`
		Toggles map[string]sdkToggle `json:"toggles"`
	} `json:"bucket"`
}

// sdkToggle is one flag's counts in an SDK's metrics post.
type sdkToggle struct {
	Yes      int64            `json:"yes"`
	No       int64            `json:"no"`
	Variants map[string]int64 `json:"variants"`
}

func (p *Proxy) readJSON(w http.ResponseWriter, r *http.Request, into any) error {
	if err := checkJSONContentType(r); err != nil {
		return err
	}
	body, err := readBody(w, r, p.cfg.MaxBodyBytes, nil)
	if err != nil {
		return err
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return apierr.Validation("the request body must be a JSON object")
	}
	if trimmed[0] != '{' {
		if !json.Valid(trimmed) {
			return syntaxError(body)
		}
		return apierr.Validation("the request body must be a JSON object")
	}
	if err := json.Unmarshal(body, into); err != nil {
		if !json.Valid(body) {
			return syntaxError(body)
		}
		return apierr.Validation("the request body does not match the schema: %v", err)
	}
	return nil
}

// serveClientMetrics adds what an SDK posts about the proxy's flags to
// its own bucket;
// client keys and server-side SDK tokens are accepted.
func (p *Proxy) serveClientMetrics(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		p.methodNotAllowed(w, r, "POST")
		return
	}
	if !p.hasKey(r, p.clientKeys) && !p.hasKey(r, p.sdkTokens) {
		p.unauthorized(w, r)
		return
	}
	var m sdkMetrics
	if err := p.readJSON(w, r, &m); err != nil {
		apierr.Write(w, r, p.log, err)
		return
	}
	if err := validateSDKMetrics(&m); err != nil {
		apierr.Write(w, r, p.log, err)
		return
	}
	p.addSDKUsage(m.Bucket.Toggles)
	writeOK(w)
}

func validateSDKMetrics(m *sdkMetrics) error {
	if m.AppName == nil || *m.AppName == "" {
		return apierr.Validation("appName is required")
	}
	if m.Bucket == nil {
		return apierr.Validation("bucket is required")
	}
	for field, v := range map[string]*string{"bucket.start": m.Bucket.Start, "bucket.stop": m.Bucket.Stop} {
		if v == nil {
			return apierr.Validation("%s is required", field)
		}
		if _, err := time.Parse(time.RFC3339Nano, *v); err != nil {
			return apierr.Validation("%s must be a date-time", field)
		}
	}
	for name, t := range m.Bucket.Toggles {
		if t.Yes < 0 || t.No < 0 {
			return apierr.Validation("bucket.toggles.%s: counts must be >= 0", name)
		}
		for v, n := range t.Variants {
			if n < 0 {
				return apierr.Validation("bucket.toggles.%s.variants.%s must be >= 0", name, v)
			}
		}
	}
	return nil
}

// serveRegister accepts an SDK registration; there is nothing to keep.
func (p *Proxy) serveRegister(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		p.methodNotAllowed(w, r, "POST")
		return
	}
	if !p.hasKey(r, p.clientKeys) && !p.hasKey(r, p.sdkTokens) {
		p.unauthorized(w, r)
		return
	}
	var reg struct {
		AppName *string `json:"appName"`
	}
	if err := p.readJSON(w, r, &reg); err != nil {
		apierr.Write(w, r, p.log, err)
		return
	}
	if reg.AppName == nil || *reg.AppName == "" {
		apierr.Write(w, r, p.log, apierr.Validation("appName is required"))
		return
	}
	p.log.Debug("client registered", "appName", *reg.AppName)
	writeOK(w)
}

// serveFeatures gives server-side SDKs the configuration, segments
// included, to the tokens of expServerSideSdkConfig.tokens only.
func (p *Proxy) serveFeatures(w http.ResponseWriter, r *http.Request) {
	if !isRead(r) {
		p.methodNotAllowed(w, r, "GET, HEAD")
		return
	}
	snap := p.snapshot.Load()
	if snap == nil {
		apierr.Write(w, r, p.log, errNotReady)
		return
	}
	if !p.hasKey(r, p.sdkTokens) {
		p.unauthorized(w, r)
		return
	}
	fb := p.features.Load()
	if fb == nil || fb.snap != snap {
		cf := *snap.Features()
		if cf.Version == 0 {
			cf.Version = 2
		}
		body, err := json.Marshal(&cf)
		if err != nil {
			apierr.Write(w, r, p.log, apierr.Internal(err))
			return
		}
		fb = &featuresBody{snap: snap, body: httpgzip.NewCached(body), etag: weakETag(body)}
		p.features.Store(fb)
	}
	writeCachedJSON(w, r, fb.body, fb.etag)
}

func (p *Proxy) servePrometheus(w http.ResponseWriter, r *http.Request) {
	if !isRead(r) {
		p.methodNotAllowed(w, r, "GET, HEAD")
		return
	}
	p.metrics.handler.ServeHTTP(w, r)
}

// completeContext fills what the request does not say: the remote
// address, the default appName and environment (or the forced one), then
// runs the enrichers.
func (p *Proxy) completeContext(r *http.Request, ctx *engine.Context) error {
	if ctx.RemoteAddress == "" {
		ctx.RemoteAddress = p.clientIP(r)
	}
	if ctx.AppName == "" {
		ctx.AppName = p.cfg.UpstreamAppName
	}
	for i, e := range p.enrichers {
		out, err := e.Enrich(*ctx)
		if err != nil {
			p.log.Warn("context enricher failed; skipped", "enricher", i, "err", err)
			continue
		}
		*ctx = out
	}
	if p.cfg.Environment != "" {
		ctx.Environment = p.cfg.Environment
	} else if ctx.Environment == "" {
		ctx.Environment = "default"
	}
	return nil
}

// clientIP is the peer address in plain form (IPv4 as a.b.c.d), or, when
// the peer is trusted, the address X-Forwarded-For names.
func (p *Proxy) clientIP(r *http.Request) string {
	peer, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	addr := peer.Addr().Unmap()
	tp := p.cfg.TrustProxy
	xff := r.Header.Values("X-Forwarded-For")
	if !tp.Enabled() || len(xff) == 0 {
		if peer.Addr().Is4() {
			// "a.b.c.d:port" already holds the plain form (IPv4 parses
			// only from its one canonical text).
			return r.RemoteAddr[:strings.LastIndexByte(r.RemoteAddr, ':')]
		}
		return addr.String()
	}
	var chain []string
	for _, line := range xff {
		for _, s := range strings.Split(line, ",") {
			if s = strings.TrimSpace(s); s != "" {
				chain = append(chain, s)
			}
		}
	}
	if len(chain) == 0 {
		return addr.String()
	}
	if tp.All {
		return plainIP(chain[0])
	}
	for i := len(chain) - 1; i >= 0 && tp.trusts(addr); i-- {
		a, err := netip.ParseAddr(plainIP(chain[i]))
		if err != nil {
			return addr.String()
		}
		addr = a
	}
	return addr.String()
}

func plainIP(s string) string {
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().String()
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().String()
	}
	return s
}
