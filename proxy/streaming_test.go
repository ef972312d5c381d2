package proxy_test

import (
	"bufio"
	"context"
	"encoding/json"
	"github.com/bunting-flags/bunting/internal/testutil"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestProxyFollowsBuntingStream: against Bunting the proxy follows the
// stream, so a change reaches GET /proxy at once although refreshInterval
// is an hour, on both databases; the proxy's ETag changes with it.
func TestProxyFollowsBuntingStream(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		const features = "/api/admin/projects/default/features"
		env := features + "/live/environments/development"
		h.Do(t, "POST", features, h.AdminToken, map[string]any{"name": "live"}).Want(t, 201)
		h.Do(t, "POST", env+"/strategies", h.AdminToken, map[string]any{"name": "default"}).Want(t, 200)

		cfg := testConfig(nil)
		cfg.UpstreamURL = h.URL + "/api"
		cfg.UpstreamAPIToken = h.ClientToken
		cfg.RefreshInterval = time.Hour
		r := startReady(t, cfg)
		resp, body := r.get(t, "/proxy")
		etag := resp.Header.Get("ETag")
		assert.NotContains(t, body, `"live"`)
		for i, path := range []string{"/on", "/off", "/on"} {
			start := time.Now()
			h.Do(t, "POST", env+path, h.AdminToken, nil).Want(t, 200)
			testutil.Eventually(t, 5*time.Second, "change "+path, func() bool {
				_, body := r.get(t, "/proxy")
				return strings.Contains(body, `"live"`) == (path == "/on")
			})
			t.Logf("change %d reached /proxy in %v", i, time.Since(start))
		}
		resp, _ = r.get(t, "/proxy")
		assert.NotEqual(t, etag, resp.Header.Get("ETag"))
	})
}

// TestProxyRelaysStreamToNodeSDK: the real Node SDK in streaming mode
// against the proxy's Edge path /api/client/streaming sees upstream's
// changes, and the relay's delta endpoint answers with ETags.
func TestProxyRelaysStreamToNodeSDK(t *testing.T) {
	node, mods := testutil.Node(t), testutil.NodeModules(t, "unleash-client")
	h := servertest.Start(t, servertest.NewSQLite(t))
	const features = "/api/admin/projects/default/features"
	h.Do(t, "POST", features, h.AdminToken, map[string]any{"name": "relayed"}).Want(t, 201)

	cfg := testConfig(nil)
	cfg.UpstreamURL = h.URL + "/api"
	cfg.UpstreamAPIToken = h.ClientToken
	cfg.RefreshInterval = time.Hour
	r := startReady(t, cfg)

	// Only the server-side SDK tokens may stream.
	resp, _ := r.do(t, http.MethodGet, "/api/client/delta", "", "Authorization", clientKey)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	resp, body := r.do(t, http.MethodGet, "/api/client/delta", "", "Authorization", "server-token")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, body, `"type":"hydration"`)
	resp, _ = r.do(t, http.MethodGet, "/api/client/delta", "", "Authorization", "server-token", "If-None-Match", resp.Header.Get("ETag"))
	require.Equal(t, http.StatusNotModified, resp.StatusCode)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("..", "test", "node", "stream-sdk.js"), r.srv.URL+"/api/", "server-token", "streaming")
	cmd.Env = append(cmd.Environ(), "NODE_PATH="+mods)
	cmd.Stderr = testWriter{t}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	require.NoError(t, cmd.Start())
	defer func() { stdin.Close(); _ = cmd.Wait() }()
	states := make(chan map[string]any, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				states <- m
			}
		}
	}()
	waitState := func(what string, ok func(flags map[string]any) bool) {
		t.Helper()
		timeout := time.After(10 * time.Second)
		for {
			select {
			case m := <-states:
				require.Equal(t, "streaming", m["mode"], "the SDK left streaming mode")
				if ok(m["flags"].(map[string]any)) {
					return
				}
			case <-timeout:
				t.Fatalf("the SDK behind the proxy never saw %s", what)
			}
		}
	}
	waitState("the hydration", func(f map[string]any) bool { _, ok := f["relayed"]; return ok })
	h.Do(t, "POST", features, h.AdminToken, map[string]any{"name": "relayed-2"}).Want(t, 201)
	waitState("a new flag", func(f map[string]any) bool { _, ok := f["relayed-2"]; return ok })
	h.Do(t, "DELETE", features+"/relayed", h.AdminToken, nil).Want(t, 202)
	waitState("an archived flag", func(f map[string]any) bool { _, ok := f["relayed"]; return !ok })
}

// TestProxyFollowsOtherInstance: two server instances on one PostgreSQL
// database, the proxy following B (refreshInterval an hour, B's revision
// poll an hour): a change written on A reaches GET /proxy through B.
func TestProxyFollowsOtherInstance(t *testing.T) {
	db := servertest.NewPostgres(t)
	a := servertest.Start(t, db)
	b := servertest.Start(t, db, func(c *server.Config) { c.RevisionPollInterval = time.Hour })
	const features = "/api/admin/projects/default/features"
	env := features + "/across/environments/development"
	a.Do(t, "POST", features, a.AdminToken, map[string]any{"name": "across"}).Want(t, 201)
	a.Do(t, "POST", env+"/strategies", a.AdminToken, map[string]any{"name": "default"}).Want(t, 200)

	cfg := testConfig(nil)
	cfg.UpstreamURL = b.URL + "/api"
	cfg.UpstreamAPIToken = b.ClientToken
	cfg.RefreshInterval = time.Hour
	r := startReady(t, cfg)
	for _, path := range []string{"/on", "/off", "/on"} {
		a.Do(t, "POST", env+path, a.AdminToken, nil).Want(t, 200)
		testutil.Eventually(t, 5*time.Second, "change "+path+" written on A, through B", func() bool {
			_, body := r.get(t, "/proxy")
			return strings.Contains(body, `"across"`) == (path == "/on")
		})
	}
}
