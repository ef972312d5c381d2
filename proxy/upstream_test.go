package proxy_test

import (
	"context"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bunting-flags/bunting/internal/testutil"
	"github.com/bunting-flags/bunting/proxy"
)

func TestUpstreamFetchHeadersFiltersAndETag(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	cfg := testConfig(u)
	cfg.ProjectName = "web"
	cfg.NamePrefix = "ena"
	cfg.Tags = []proxy.Tag{{Name: "simple", Value: "proxy"}, {Name: "demo", Value: "test"}}
	cfg.UpstreamAppName = "my-proxy"
	r := startReady(t, cfg)
	testutil.Eventually(t, 5*time.Second, "a second fetch", func() bool { return u.fetchCount() >= 2 })
	req := u.lastFetch()
	assert.Equal(t, "project=web&namePrefix=ena&tag=simple%3Aproxy&tag=demo%3Atest", req.URL.RawQuery)
	h := req.Header
	assert.Equal(t, "upstream-token", h.Get("Authorization"))
	assert.Equal(t, "my-proxy", h.Get("Unleash-Appname"))
	assert.Equal(t, "my-proxy", h.Get("User-Agent"))
	assert.Equal(t, "inst-1", h.Get("Unleash-Instanceid"))
	assert.Equal(t, "5.2.0", h.Get("Unleash-Client-Spec"))
	assert.True(t, strings.HasPrefix(h.Get("Unleash-Sdk"), "bunting-proxy:"), h.Get("Unleash-Sdk"))
	assert.Len(t, h.Get("Unleash-Connection-Id"), 36)
	assert.Equal(t, "50", h.Get("Unleash-Interval"))
	assert.NotEmpty(t, h.Get("If-None-Match"), "the ETag of the last 200 is sent back")
	resp, _ := r.get(t, "/proxy")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestUpstreamChangeIsServed(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	u.setPayload(bootstrapPayload)
	testutil.Eventually(t, 5*time.Second, "the new configuration", func() bool {
		_, body := r.get(t, "/proxy")
		return strings.Contains(body, "from-bootstrap") && !strings.Contains(body, "enabled-simple")
	})
}

func TestKeepsServingThroughUpstreamFaults(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	_, want := r.get(t, "/proxy?userId=u1")
	for _, mode := range []upstreamMode{modeFail, modeGarbage, modeUnauthorized, modeSlow} {
		u.setMode(mode)
		n := u.fetchCount()
		testutil.Eventually(t, 5*time.Second, "a faulty fetch", func() bool { return u.fetchCount() > n })
		resp, body := r.get(t, "/proxy?userId=u1")
		assert.Equal(t, http.StatusOK, resp.StatusCode, mode)
		assert.Equal(t, want, body, mode)
	}
	u.srv.CloseClientConnections()
	u.setMode(modeOK)
	resp, body := r.get(t, "/proxy?userId=u1")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, want, body)

	// Connection refused: a proxy whose upstream is gone keeps serving.
	u2 := newFakeUpstream(t, fixture)
	reg := prometheus.NewRegistry()
	r2 := startReady(t, testConfig(u2), proxy.WithRegistry(reg))
	failed := failedSyncs(t, reg)
	u2.srv.Close()
	testutil.Eventually(t, 5*time.Second, "a refused fetch", func() bool { return failedSyncs(t, reg) > failed })
	resp, _ = r2.get(t, "/proxy")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

// failedSyncs is how many upstream fetches the proxy saw fail
// (bunting_proxy_upstream_syncs_total{result="error"} in reg).
func failedSyncs(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != "bunting_proxy_upstream_syncs_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "result" && l.GetValue() == "error" {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func TestUnauthorizedKeepsPollingAndRecovers(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	u.setMode(modeUnauthorized)
	cfg := testConfig(u)
	cfg.RefreshInterval = 10 * time.Millisecond // slow rate after a 401 is 12x
	r := startProxy(t, cfg)
	testutil.Eventually(t, 5*time.Second, "three refused fetches", func() bool { return u.fetchCount() >= 3 })
	resp, _ := r.get(t, "/proxy")
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	u.setMode(modeOK)
	waitReady(t, r.p)
	resp, _ = r.get(t, "/proxy")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestRegisterAndUsageMetricsUpstream(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	cfg := testConfig(u)
	cfg.MetricsInterval = 150 * time.Millisecond
	cfg.MetricsJitter = 20 * time.Millisecond
	u.metricsFail = 1 // the first post fails: its counts must come with the next
	r := startReady(t, cfg)
	r.get(t, "/proxy?userId=u1")                                               // enabled toggles: yes
	r.post(t, "/proxy", `{"toggles":["disabled-flag","nope","with-variant"]}`) // list: yes/no, unknown not counted
	r.post(t, "/proxy/client/metrics", sdkMetricsBody)                         // SDK counts are added
	testutil.Eventually(t, 5*time.Second, "a metrics post", func() bool { return len(u.metricsPosts()) > 0 })

	regs := u.registrations()
	require.NotEmpty(t, regs)
	assert.Equal(t, "upstream-proxy", regs[0]["appName"])
	assert.Equal(t, "inst-1", regs[0]["instanceId"])
	assert.EqualValues(t, 150, regs[0]["interval"])
	assert.Contains(t, regs[0]["strategies"], "flexibleRollout")

	totals := map[string][3]float64{}
	variants := map[string]float64{}
	testutil.Eventually(t, 5*time.Second, "every count upstream", func() bool {
		totals = map[string][3]float64{}
		variants = map[string]float64{}
		for _, m := range u.metricsPosts() {
			assert.Equal(t, "upstream-proxy", m["appName"], "SDK posts are reported under the proxy's name")
			assert.Equal(t, "inst-1", m["instanceId"])
			b := m["bucket"].(map[string]any)
			assert.NotEmpty(t, b["start"])
			assert.NotEmpty(t, b["stop"])
			for name, v := range b["toggles"].(map[string]any) {
				tc := v.(map[string]any)
				cur := totals[name]
				cur[0] += tc["yes"].(float64)
				cur[1] += tc["no"].(float64)
				totals[name] = cur
				for vn, n := range tc["variants"].(map[string]any) {
					variants[name+"/"+vn] += n.(float64)
				}
			}
		}
		return totals["enabled-simple"][0] == 4
	})
	assert.Equal(t, [3]float64{4, 1, 0}, totals["enabled-simple"], "1 GET + 3 from the SDK")
	assert.Equal(t, [3]float64{0, 2, 0}, totals["disabled-flag"], "GET evaluates it too")
	assert.NotContains(t, totals, "nope", "names the proxy does not serve are not counted")
	assert.Equal(t, [3]float64{2, 0, 0}, totals["with-variant"], "GET and toggle list")
	assert.NotContains(t, totals, "sdk-only", "an SDK's counts of flags the proxy does not serve are dropped")
	assert.Equal(t, float64(2), variants["with-variant/blue"])
	assert.NotContains(t, variants, "enabled-simple/blue", "a variant the flag does not have is dropped")
	assert.Equal(t, float64(1), variants["enabled-simple/disabled"])
	assert.Equal(t, [3]float64{0, 1, 0}, totals["region-eu"], "a flag that is off is counted as evaluated")
}

func TestFailedRegistrationIsRetried(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	u.registerFail = 1
	cfg := testConfig(u)
	cfg.MetricsInterval = 50 * time.Millisecond
	startReady(t, cfg)
	testutil.Eventually(t, 5*time.Second, "a registration after the failed one", func() bool { return len(u.registrations()) == 1 })
}

func TestBootstrapMakesReadyBeforeUpstream(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	u.setMode(modeFail)
	cfg := testConfig(u)
	cfg.ExpBootstrap = proxy.Bootstrap{URL: u.srv.URL + "/bootstrap", Authorization: "boot-secret"}
	r := startReady(t, cfg)
	_, body := r.get(t, "/proxy")
	assert.Equal(t, []string{"from-bootstrap"}, names(toggles(t, body)))
	// Upstream data overrides the bootstrap once it answers.
	u.setMode(modeOK)
	testutil.Eventually(t, 5*time.Second, "upstream data", func() bool {
		_, body := r.get(t, "/proxy")
		return strings.Contains(body, "enabled-simple")
	})
}

func TestBackupServesARestartedProxyWhileUpstreamIsDown(t *testing.T) {
	dir := t.TempDir()
	u := newFakeUpstream(t, fixture)
	store := proxy.FileStorage{Dir: dir}
	r := startReady(t, testConfig(u), proxy.WithStorageProvider(store))
	_, want := r.get(t, "/proxy?userId=u1")
	// The backup is written after the new configuration is served.
	var files []string
	testutil.Eventually(t, 5*time.Second, "the backup file", func() bool {
		files, _ = filepath.Glob(filepath.Join(dir, "*.json"))
		return len(files) == 1
	})

	u.setMode(modeUnauthorized)
	p, err := proxy.New(testConfig(u), proxy.WithStorageProvider(store), proxy.WithLogger(testLogger(t)))
	require.NoError(t, err)
	assert.True(t, p.Ready(), "ready from the backup before Run")
	srv := httptest.NewServer(p)
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/proxy?userId=u1", nil)
	req.Header.Set("Authorization", clientKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	assert.Equal(t, want, string(got))

	// A corrupt backup is ignored, not fatal.
	require.NoError(t, os.WriteFile(files[0], []byte("{garbage"), 0o600))
	p, err = proxy.New(testConfig(u), proxy.WithStorageProvider(store), proxy.WithLogger(testLogger(t)))
	require.NoError(t, err)
	assert.False(t, p.Ready())
}

func TestRejectUnauthorizedTLS(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(u.serve))
	var handshakes testutil.Buffer // the server logs each refused handshake
	tlsSrv.Config.ErrorLog = log.New(&handshakes, "", 0)
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	cfg := testConfig(u)
	cfg.UpstreamURL = tlsSrv.URL + "/api"

	reg := prometheus.NewRegistry()
	r := startProxy(t, cfg, proxy.WithRegistry(reg))
	testutil.Eventually(t, 5*time.Second, "two failed fetches", func() bool { return failedSyncs(t, reg) >= 2 })
	assert.Contains(t, handshakes.String(), "TLS handshake error", "the fetches failed in the TLS handshake")
	assert.Zero(t, u.fetchCount(), "no fetch got past the handshake")
	assert.False(t, r.p.Ready(), "a self-signed upstream is refused by default")

	cfg.HTTPOptions.RejectUnauthorized = false
	r = startReady(t, cfg)
	resp, _ := r.get(t, "/proxy")
	assert.Equal(t, http.StatusOK, resp.StatusCode)
}

func TestRunStopsWithContext(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	p, err := proxy.New(testConfig(u), proxy.WithStorageProvider(nil))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Run(ctx) }()
	waitReady(t, p)
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return")
	}
}
