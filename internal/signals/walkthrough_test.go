package signals_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
	"github.com/bunting-flags/bunting/proxy"
)

// clientFlagEnabled reads a flag's enabled state through the client API
// (the development client token).
func clientFlagEnabled(t testing.TB, h *servertest.Harness, name string) bool {
	t.Helper()
	var body struct {
		Features []struct {
			Name    string
			Enabled bool
		}
	}
	h.Do(t, "GET", "/api/client/features", h.ClientToken, nil).Want(t, 200).JSON(t, &body)
	for _, f := range body.Features {
		if f.Name == name {
			return f.Enabled
		}
	}
	t.Fatalf("flag %s missing from the client API", name)
	return false
}

// startProxy runs Bunting's proxy against the harness server and returns
// a function that reports whether the proxy lists name as enabled.
func startProxy(t *testing.T, h *servertest.Harness) func(name string) bool {
	t.Helper()
	cfg := proxy.DefaultConfig()
	cfg.UpstreamURL, cfg.UpstreamAPIToken = h.URL+"/api", h.ClientToken
	cfg.ClientKeys = []string{"proxy-key"}
	cfg.RefreshInterval, cfg.MetricsInterval = 100*time.Millisecond, 0
	p, err := proxy.New(cfg, proxy.WithRegistry(prometheus.NewRegistry()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = p.Run(ctx) }()
	srv := httptest.NewServer(p)
	t.Cleanup(func() { srv.Close(); cancel(); <-done })
	select {
	case <-p.ReadyChan():
	case <-time.After(10 * time.Second):
		t.Fatal("proxy never synced")
	}
	return func(name string) bool {
		req, _ := http.NewRequest("GET", srv.URL+"/proxy", nil)
		req.Header.Set("Authorization", "proxy-key")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body struct{ Toggles []struct{ Name string } }
		if res.StatusCode != 200 || json.NewDecoder(res.Body).Decode(&body) != nil {
			t.Fatalf("proxy answered %d", res.StatusCode)
		}
		for _, tg := range body.Toggles {
			if tg.Name == name {
				return true
			}
		}
		return false
	}
}

// TestAlertingWalkthrough is the walkthrough of docs/signals.md, through the API:
// endpoint, token, action set, one signal; the kill switch is then off
// through the client API and through the proxy.
func TestAlertingWalkthrough(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		flag(t, h, "checkout")
		proxyEnabled := startProxy(t, h)
		testutil.Eventually(t, 5*time.Second, "proxy does not show the flag on", func() bool { return proxyEnabled("checkout") })
		if !clientFlagEnabled(t, h, "checkout") {
			t.Fatal("flag should start on")
		}
		source, token := endpoint(t, h, "grafana")
		actor := serviceAccount(t, h, "alert-bot", "Editor")
		h.Do(t, "POST", "/api/admin/projects/default/actions", h.AdminToken,
			actionSet("kill checkout", actor, source, "TOGGLE_FEATURE_OFF", "checkout")).Want(t, 201)

		start := time.Now()
		signal(t, h, "grafana", token, map[string]any{"severity": "critical", "alert": "checkout 5xx"}).Want(t, 200)
		testutil.Eventually(t, 10*time.Second, "client API still shows the flag on", func() bool { return !clientFlagEnabled(t, h, "checkout") })
		toClient := time.Since(start)
		testutil.Eventually(t, 10*time.Second, "proxy still shows the flag on", func() bool { return !proxyEnabled("checkout") })
		t.Logf("signal to flag off: client API %v, proxy %v", toClient, time.Since(start))
		var evs struct {
			Events []struct {
				Type, CreatedBy string
				FeatureName     string
			}
		}
		h.Do(t, "GET", "/api/admin/events", h.AdminToken, nil).Want(t, 200).JSON(t, &evs)
		if len(evs.Events) == 0 || evs.Events[0].Type != "feature-environment-disabled" || evs.Events[0].CreatedBy != "alert-bot" {
			t.Fatalf("latest event: %+v", fmt.Sprint(evs.Events[:min(3, len(evs.Events))]))
		}
	})
}
