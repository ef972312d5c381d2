package proxy_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// TestBuntingServerAsUpstream runs the proxy against Bunting's own server
// (real HTTP, SQLite): flags, segments and changes made through the admin
// API reach front-end clients, and the proxy's registration and metrics are
// accepted.
func TestBuntingServerAsUpstream(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	const features = "/api/admin/projects/default/features"
	env := func(name string) string { return features + "/" + name + "/environments/development" }
	for _, name := range []string{"everyone", "segment-users"} {
		h.Do(t, "POST", features, h.AdminToken, map[string]any{"name": name}).Want(t, 201)
	}
	seg := h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "vip",
		"constraints": []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"u1"}}}}).Want(t, 201).Map(t)
	h.Do(t, "POST", env("everyone")+"/strategies", h.AdminToken, map[string]any{"name": "default"}).Want(t, 200)
	h.Do(t, "POST", env("segment-users")+"/strategies", h.AdminToken, map[string]any{"name": "default", "segments": []any{seg["id"]}}).Want(t, 200)
	for _, name := range []string{"everyone", "segment-users"} {
		h.Do(t, "POST", env(name)+"/on", h.AdminToken, nil).Want(t, 200)
	}

	cfg := testConfig(nil)
	cfg.UpstreamURL = h.URL + "/api"
	cfg.UpstreamAPIToken = h.ClientToken
	cfg.MetricsInterval = 100 * time.Millisecond
	r := startReady(t, cfg)

	_, body := r.get(t, "/proxy?userId=u1")
	assert.ElementsMatch(t, []string{"everyone", "segment-users"}, names(toggles(t, body)))
	_, body = r.get(t, "/proxy?userId=u2")
	assert.Equal(t, []string{"everyone"}, names(toggles(t, body)))

	resp, body := r.do(t, http.MethodGet, "/proxy/client/features", "", "Authorization", "server-token")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, `"segments":[`, "segments are passed on to server-side SDKs")

	h.Do(t, "POST", env("everyone")+"/off", h.AdminToken, nil).Want(t, 200)
	testutil.Eventually(t, 5*time.Second, "the change through the proxy", func() bool {
		_, body := r.get(t, "/proxy?userId=u2")
		return !strings.Contains(body, "everyone")
	})
	resp, _ = r.do(t, http.MethodGet, "/proxy/internal-backstage/prometheus", "")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	testutil.Eventually(t, 5*time.Second, "an accepted metrics post", func() bool {
		_, prom := r.do(t, http.MethodGet, "/proxy/internal-backstage/prometheus", "")
		return strings.Contains(prom, `bunting_proxy_upstream_metrics_posts_total{result="ok"}`)
	})
}
