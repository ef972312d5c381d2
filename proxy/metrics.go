package proxy

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// promMetrics are the proxy's Prometheus metrics, in its own registry.
type promMetrics struct {
	registry    *prometheus.Registry
	handler     http.Handler
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	syncs       *prometheus.CounterVec
	upstreamUp  prometheus.Gauge
	lastSync    prometheus.Gauge
	lastUpdate  prometheus.Gauge
	lastFetchMs prometheus.Gauge
	lastUpdMs   prometheus.Gauge
	flagsLoaded prometheus.Gauge
	ready       prometheus.Gauge
	posts       *prometheus.CounterVec

	// latencyByRoute and requestsBy cache the label sets by route slot
	// (see routeIndex.slots), method and code.
	latencyByRoute []atomic.Pointer[prometheus.Observer]
	requestsBy     [][len(methodNames)][len(cachedCodes)]atomic.Pointer[prometheus.Counter]
}

func newPromMetrics(extra prometheus.Registerer, routes *routeIndex) *promMetrics {
	m := &promMetrics{
		latencyByRoute: make([]atomic.Pointer[prometheus.Observer], routes.slots()),
		requestsBy:     make([][len(methodNames)][len(cachedCodes)]atomic.Pointer[prometheus.Counter], routes.slots()),
		registry:       prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bunting_proxy_http_requests_total", Help: "HTTP requests served, by route, method and status code.",
		}, []string{"route", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "bunting_proxy_http_request_duration_seconds", Help: "Time to serve a request, by route.",
			Buckets: []float64{.00005, .0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .5, 1},
		}, []string{"route"}),
		syncs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bunting_proxy_upstream_syncs_total", Help: "Upstream feature fetches, by result (changed, unchanged, error, unauthorized).",
		}, []string{"result"}),
		upstreamUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "bunting_proxy_upstream_up", Help: "1 when the last upstream fetch succeeded, else 0.",
		}),
		lastSync: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "bunting_proxy_upstream_last_success_timestamp_seconds", Help: "When upstream last answered a fetch with 200 or 304.",
		}),
		lastUpdate: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "bunting_proxy_upstream_last_change_timestamp_seconds", Help: "When the served configuration last changed.",
		}),
		lastFetchMs: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "last_metrics_fetch_epoch_timestamp_ms", Help: "When upstream last answered a fetch with 200 or 304 (reference name).",
		}),
		lastUpdMs: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "last_metrics_update_epoch_timestamp_ms", Help: "When the served configuration last changed (reference name).",
		}),
		flagsLoaded: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "bunting_proxy_flags_loaded", Help: "Flags in the served configuration.",
		}),
		ready: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "bunting_proxy_ready", Help: "1 once the proxy has a configuration to serve.",
		}),
		posts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bunting_proxy_upstream_metrics_posts_total", Help: "Usage metrics posts to upstream, by result.",
		}, []string{"result"}),
	}
	up := prometheus.NewCounter(prometheus.CounterOpts{Name: "unleash_proxy_up", Help: "Always 1 (reference name)."})
	up.Inc()
	cs := []prometheus.Collector{m.requests, m.latency, m.syncs, m.upstreamUp, m.lastSync, m.lastUpdate,
		m.lastFetchMs, m.lastUpdMs, m.flagsLoaded, m.ready, m.posts, up}
	m.registry.MustRegister(cs...)
	if extra != nil {
		for _, c := range cs {
			_ = extra.Register(c)
		}
	}
	m.handler = promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
	return m
}

// observe records one request of the route in slot ri. The common label
// sets are cached in arrays (no map or hashing per request); the rest go
// through the vectors.
func (m *promMetrics) observe(ri int, route, method string, code int, d time.Duration) {
	mi, ci := methodIndex(method), codeIndex(code)
	obs := m.latencyByRoute[ri].Load()
	if obs == nil {
		o := m.latency.WithLabelValues(route)
		obs = &o
		m.latencyByRoute[ri].Store(obs)
	}
	(*obs).Observe(d.Seconds())
	if mi < 0 || ci < 0 {
		m.requests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
		return
	}
	slot := &m.requestsBy[ri][mi][ci]
	c := slot.Load()
	if c == nil {
		cnt := m.requests.WithLabelValues(route, method, strconv.Itoa(code))
		c = &cnt
		slot.Store(c)
	}
	(*c).Inc()
}

var methodNames = [...]string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodOptions}

func methodIndex(m string) int {
	for i, n := range methodNames {
		if n == m {
			return i
		}
	}
	return -1
}

var cachedCodes = [...]int{200, 304, 400, 401, 404, 503}

func codeIndex(code int) int {
	for i, c := range cachedCodes {
		if c == code {
			return i
		}
	}
	return -1
}

func (m *promMetrics) syncResult(result string, ok, changed bool) {
	m.syncs.WithLabelValues(result).Inc()
	now := time.Now()
	if ok {
		m.upstreamUp.Set(1)
		m.lastSync.Set(float64(now.UnixNano()) / 1e9)
		m.lastFetchMs.Set(float64(now.UnixMilli()))
	} else {
		m.upstreamUp.Set(0)
	}
	if changed {
		m.lastUpdate.Set(float64(now.UnixNano()) / 1e9)
		m.lastUpdMs.Set(float64(now.UnixMilli()))
	}
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}

// Unwrap lets http.ResponseController reach the connection.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

var recorderPool = sync.Pool{New: func() any { return new(statusRecorder) }}
