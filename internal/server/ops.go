package server

import (
	"context"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5emb"
)

// serverMetrics is the server's own Prometheus registry.
type serverMetrics struct {
	registry *prometheus.Registry
	// frontendRequests counts frontend API evaluations by endpoint.
	frontendRequests *prometheus.CounterVec
}

func newServerMetrics(s *Server) *serverMetrics {
	reg := prometheus.NewRegistry()
	m := &serverMetrics{
		registry: reg,
		frontendRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bunting_frontend_api_requests_total", Help: "Frontend API requests answered, by endpoint.",
		}, []string{"endpoint"}),
	}
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.frontendRequests,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "bunting_revision_id", Help: "Highest committed event id this instance knows."},
			func() float64 { return float64(s.store.Revision()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "feature_toggles_total", Help: "Number of live (not archived) flags."},
			func() float64 { return float64(s.countLiveFeatures()) }),
	)
	return m
}

// countLiveFeatures counts the live flags for the gauge (-1 on error).
func (s *Server) countLiveFeatures() int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	stats, err := s.store.Q(ctx).ProjectStats()
	if err != nil {
		return -1
	}
	n := 0
	for _, st := range stats {
		n += st.FeatureCount
	}
	return n
}

func (s *Server) prometheusMetrics(w http.ResponseWriter, r *http.Request) error {
	promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	return nil
}

// openAPIJSON serves the admin API's OpenAPI document.
func (s *Server) openAPIJSON(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(s.openAPI)
	return nil
}

// newDocsPage serves the interactive page and its assets from the binary.
func newDocsPage() http.Handler {
	return v5emb.NewWithConfig(swgui.Config{SettingsUI: map[string]string{"validatorUrl": "null"}})(
		"Bunting admin API", "/docs/openapi.json", "/docs/openapi/")
}

func (s *Server) docsPage(w http.ResponseWriter, r *http.Request) error {
	s.docs.ServeHTTP(w, r)
	return nil
}
