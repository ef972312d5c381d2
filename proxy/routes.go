package proxy

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
)

// route is one entry of the proxy's route table: where it is served, what
// a request must bring before its handler runs, and the handler. The
// handler returns its error; dispatch writes it, once, with apierr.
type route struct {
	// name is the "route" label of the request metrics.
	name string
	// paths are the route's paths under the base path; each also matches
	// with one trailing slash added.
	paths []string
	// prefix makes each path match every path that starts with it (a
	// route with a parameter, such as "/ofrep/v1/evaluate/flags/"); exact
	// paths are looked up first.
	prefix bool
	// allow lists the methods, as the Allow header of a 405 says them.
	allow string
	// ready answers 503 until the first configuration arrives; a route
	// whose handler reads the snapshot must set it.
	ready bool
	// key is the credential the request must carry (401 without it).
	key keyKind
	// serve answers a request that passed the checks above.
	serve func(p *Proxy, w http.ResponseWriter, r *http.Request) error

	methods methodSet // allow, parsed
	index   int       // position in the table (the metrics slot)
}

// keyKind is the credential a route asks for, in the configured header.
type keyKind uint8

const (
	keyNone        keyKind = iota // none
	keyClient                     // a client key (clientKeys)
	keyClientOrSDK                // a client key or a server-side SDK token
	keySDK                        // a server-side SDK token (expServerSideSdkConfig.tokens)
)

// Route names, also the "route" label of the request metrics.
const (
	routeFrontend    = "frontend"
	routeAllEndpoint = "all"
	routeHealth      = "health"
	routeMetrics     = "client_metrics"
	routeRegister    = "client_register"
	routeFeatures    = "client_features"
	routePrometheus  = "prometheus"
	routeStreaming   = "client_streaming"
	routeDelta       = "client_delta"
	routeOptions     = "options"
	routeUnknown     = "unknown"
)

// routeTable is the proxy's whole HTTP surface (besides /docs, see
// ServeHTTP), one line per route. The front-end routes live under /proxy
// and, as Unleash Edge serves them, under /api/frontend and /api/proxy;
// server-side SDKs that talk to Edge find /api/client/{features,metrics,
// register}. Before the first configuration every route but a CORS
// preflight answers 503, whatever its method or credentials.
var routeTable = []route{
	{name: routeFrontend, paths: frontendPaths("", "/"), allow: "GET, HEAD, POST", ready: true, key: keyClient, serve: (*Proxy).serveToggles},
	{name: routeAllEndpoint, paths: frontendPaths("/all"), allow: "GET, HEAD, POST", ready: true, key: keyClient, serve: (*Proxy).serveAllEndpoint},
	{name: routeHealth, paths: []string{"/proxy/health"}, allow: "GET, HEAD", ready: true, serve: (*Proxy).serveHealth},
	{name: routeMetrics, paths: sdkPaths("/metrics"), allow: "POST", ready: true, key: keyClientOrSDK, serve: (*Proxy).serveClientMetrics},
	{name: routeRegister, paths: sdkPaths("/register"), allow: "POST", ready: true, key: keyClientOrSDK, serve: (*Proxy).serveRegister},
	{name: routeFeatures, paths: []string{"/proxy/client/features", "/api/client/features"}, allow: "GET, HEAD", ready: true, key: keySDK, serve: (*Proxy).serveFeatures},
	{name: routePrometheus, paths: []string{"/proxy/internal-backstage/prometheus"}, allow: "GET, HEAD", ready: true, serve: (*Proxy).servePrometheus},
	// Streaming and delta for server-side SDKs, as Edge relays them
	// (streaming.go).
	{name: routeStreaming, paths: []string{"/api/client/streaming"}, allow: "GET", ready: true, key: keySDK, serve: (*Proxy).serveStreaming},
	{name: routeDelta, paths: []string{"/api/client/delta"}, allow: "GET, HEAD", ready: true, key: keySDK, serve: (*Proxy).serveDelta},
	// OpenFeature's protocol checks its methods and credentials itself
	// (ofrep.go): its errors have OFREP's shape, not the proxy's.
	{name: routeOFREP, paths: []string{"/ofrep/"}, prefix: true, ready: true, serve: (*Proxy).serveOFREP},
}

// unknownRoute answers every other path: 503 before the first
// configuration, then 404 whatever the method.
var unknownRoute = route{name: routeUnknown, ready: true, serve: (*Proxy).notFound}

// frontendPrefixes are the three places the front-end routes are mounted.
var frontendPrefixes = []string{"/proxy", "/api/frontend", "/api/proxy"}

// frontendPaths is each of subs under each front-end prefix.
func frontendPaths(subs ...string) []string {
	var out []string
	for _, prefix := range frontendPrefixes {
		for _, sub := range subs {
			out = append(out, prefix+sub)
		}
	}
	return out
}

// sdkPaths are where SDKs post to (name "/metrics" or "/register"): under
// every front-end prefix, as /client<name> and /all/client<name>, and
// under /api/client.
func sdkPaths(name string) []string {
	return append(frontendPaths("/client"+name, "/all/client"+name), "/api/client"+name)
}

// routeIndex is a proxy's copy of the route table, indexed by full path
// (base path included) and by the one-trailing-slash form of each path.
type routeIndex struct {
	table    []route
	byPath   map[string]*route
	prefixes []prefixRoute
	unknown  route
}

// prefixRoute is one path of a prefix route, base path included.
type prefixRoute struct {
	prefix string
	route  *route
}

func newRouteIndex(basePath string, table []route) *routeIndex {
	ix := &routeIndex{table: slices.Clone(table), byPath: make(map[string]*route), unknown: unknownRoute}
	for i := range ix.table {
		rt := &ix.table[i]
		rt.index = i
		rt.methods = parseMethods(rt.allow)
		for _, path := range rt.paths {
			if rt.prefix {
				ix.prefixes = append(ix.prefixes, prefixRoute{basePath + path, rt})
				continue
			}
			ix.byPath[basePath+path] = rt
			ix.byPath[basePath+path+"/"] = rt
		}
	}
	ix.unknown.index = len(ix.table)
	return ix
}

// lookup finds the route of a path.
func (ix *routeIndex) lookup(path string) *route {
	if rt := ix.byPath[path]; rt != nil {
		return rt
	}
	for _, p := range ix.prefixes {
		if strings.HasPrefix(path, p.prefix) {
			return p.route
		}
	}
	return &ix.unknown
}

// slots is the number of metrics slots: one per route, unknown paths and
// preflights.
func (ix *routeIndex) slots() int { return len(ix.table) + 2 }

// methodSet is a set of the methods routes allow.
type methodSet uint8

func methodBit(m string) methodSet {
	switch m {
	case http.MethodGet:
		return 1
	case http.MethodHead:
		return 2
	case http.MethodPost:
		return 4
	case http.MethodPut:
		return 8
	case http.MethodDelete:
		return 16
	case http.MethodPatch:
		return 32
	}
	return 0
}

func parseMethods(allow string) methodSet {
	var s methodSet
	for _, m := range strings.Split(allow, ",") {
		s |= methodBit(strings.TrimSpace(m))
	}
	return s
}

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
	slot, name := p.dispatch(rec, r)
	p.metrics.observe(slot, name, r.Method, rec.status, time.Since(start))
	rec.ResponseWriter = nil
	recorderPool.Put(rec)
}

// dispatch answers a request on one of the proxy's routes and returns the
// route's metrics slot and name. A CORS preflight is answered on any path.
func (p *Proxy) dispatch(w http.ResponseWriter, r *http.Request) (int, string) {
	if r.Method == http.MethodOptions {
		w.WriteHeader(p.cfg.CORS.OptionsSuccessStatus)
		return p.routes.slots() - 1, routeOptions
	}
	rt := p.routes.lookup(r.URL.Path)
	if err := p.serveRoute(w, r, rt); err != nil {
		apierr.Write(w, r, p.log, err)
	}
	return rt.index, rt.name
}

// serveRoute runs the route's checks, in order — readiness, method,
// credential — and then its handler.
func (p *Proxy) serveRoute(w http.ResponseWriter, r *http.Request, rt *route) error {
	if rt.ready && !p.Ready() {
		return errNotReady
	}
	if rt.allow != "" && methodBit(r.Method)&rt.methods == 0 {
		return httpjson.MethodNotAllowed(w, r, rt.allow)
	}
	switch rt.key {
	case keyClient:
		if !p.hasKey(r, p.clientKeys) {
			return p.unauthorized()
		}
	case keyClientOrSDK:
		if !p.hasKey(r, p.clientKeys) && !p.hasKey(r, p.sdkTokens) {
			return p.unauthorized()
		}
	case keySDK:
		if !p.hasKey(r, p.sdkTokens) {
			return p.unauthorized()
		}
	}
	return rt.serve(p, w, r)
}

func (p *Proxy) notFound(w http.ResponseWriter, r *http.Request) error {
	return apierr.NotFound("Cannot %s %s", r.Method, r.URL.Path)
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

func (p *Proxy) unauthorized() error {
	return apierr.Unauthenticated("Unauthorized: send a valid client key in the %q header", p.cfg.ClientKeysHeaderName)
}
