// Package opsapi is the operations surface: health and readiness,
// Prometheus metrics, and the admin API's OpenAPI document with its
// interactive page. None of it needs credentials.
package opsapi

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5emb"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// Ops serves the operations surface: the server's own Prometheus registry,
// the OpenAPI document and the docs page.
type Ops struct {
	store    *store.Store
	registry *prometheus.Registry
	// FrontendRequests counts frontend API evaluations by endpoint.
	FrontendRequests *prometheus.CounterVec
	// OpenAPI is the admin API's OpenAPI document, set once the route
	// table is complete (before the server serves).
	OpenAPI []byte
	// Ready, when set, says whether the instance can serve SDKs yet (the
	// client configuration is built); /ready answers 503 until it does.
	Ready func() bool
	docs  http.Handler
}

// New builds the operations surface on st.
func New(st *store.Store) *Ops {
	reg := prometheus.NewRegistry()
	m := &Ops{
		store:    st,
		registry: reg,
		docs:     newDocsPage(),
		FrontendRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bunting_frontend_api_requests_total", Help: "Frontend API requests answered, by endpoint.",
		}, []string{"endpoint"}),
	}
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.FrontendRequests,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "bunting_revision_id", Help: "Highest committed event id this instance knows."},
			func() float64 { return float64(st.Revision()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "feature_toggles_total", Help: "Number of live (not archived) flags."},
			func() float64 { return float64(m.countLiveFeatures()) }),
	)
	return m
}

// MustRegister adds collectors of other surfaces to the server's registry.
func (o *Ops) MustRegister(cs ...prometheus.Collector) { o.registry.MustRegister(cs...) }

// countLiveFeatures counts the live flags for the gauge (-1 on error).
func (o *Ops) countLiveFeatures() int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	stats, err := o.store.Q(ctx).ProjectStats()
	if err != nil {
		return -1
	}
	n := 0
	for _, st := range stats {
		n += st.FeatureCount
	}
	return n
}

// health answers whether this instance serves SDKs: 503 while it starts
// (until the configuration SDKs are served from is built, about a second
// for 20,000 flags), then 200, also while the database is away, since
// SDKs are then served from memory.
func (o *Ops) health(w http.ResponseWriter, r *http.Request) error {
	if err := o.starting(); err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]string{"health": "GOOD"})
}

// ready answers whether this instance is ready for traffic and for
// changes: 503 while it starts (health's answer), then whether changes
// can be saved now (store.Ready): 200, or the named storage error (503
// DatabaseUnavailable or DatabaseReadOnly, 507 DatabaseFull) with
// Retry-After.
func (o *Ops) ready(w http.ResponseWriter, r *http.Request) error {
	if err := o.starting(); err != nil {
		return err
	}
	if err := o.store.Ready(r.Context()); err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]string{"health": "GOOD"})
}

// starting is the 503 of an instance whose flag configuration is not
// built yet (nil once it is).
func (o *Ops) starting() error {
	if o.Ready != nil && !o.Ready() {
		return errNotReady
	}
	return nil
}

var errNotReady = apierr.Unavailable("Bunting is starting: the flag configuration is still being loaded.")

func (o *Ops) prometheusMetrics(w http.ResponseWriter, r *http.Request) error {
	promhttp.HandlerFor(o.registry, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	return nil
}

// openAPIJSON serves the admin API's OpenAPI document.
func (o *Ops) openAPIJSON(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(o.OpenAPI)
	return nil
}

// newDocsPage serves the interactive page and its assets from the binary.
func newDocsPage() http.Handler {
	return v5emb.NewWithConfig(swgui.Config{SettingsUI: map[string]string{"validatorUrl": "null"}})(
		"Bunting admin API", "/docs/openapi.json", "/docs/openapi/")
}

func (o *Ops) docsPage(w http.ResponseWriter, r *http.Request) error {
	o.docs.ServeHTTP(w, r)
	return nil
}
