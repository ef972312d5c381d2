package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/testutil"
)

func TestProxyCommandServesUntilCancelled(t *testing.T) {
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/client/features" {
			_, _ = io.WriteString(w, `{"version":2,"features":[{"name":"f","enabled":true,"strategies":[{"name":"default"}],"variants":[]}]}`)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer upstream.Close()
	port := testutil.FreePort(t)
	env := map[string]string{
		"UPSTREAM_URL": upstream.URL + "/api", "UPSTREAM_API_TOKEN": "t", "PROXY_PORT": "1",
		"JSON_LOGGER": "true", "LOG_LEVEL": "info", "EXP_BACKUP_DIR": t.TempDir(),
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stderr testutil.Buffer
	code := make(chan int, 1)
	go func() {
		code <- Run(ctx, []string{"proxy", "-port", strconv.Itoa(port), "-listen-address", "127.0.0.1", "-client-keys", "k"}, lookup, io.Discard, &stderr)
	}()
	url := "http://127.0.0.1:" + strconv.Itoa(port) + "/proxy"
	deadline := time.Now().Add(10 * time.Second)
	var status int
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Authorization", "k")
		if resp, err := http.DefaultClient.Do(req); err == nil {
			status = resp.StatusCode
			resp.Body.Close()
			if status == http.StatusOK {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if status != http.StatusOK {
		t.Fatalf("GET /proxy: status %d; stderr: %s", status, stderr.String())
	}
	cancel()
	select {
	case c := <-code:
		if c != 0 {
			t.Fatalf("exit code %d; stderr: %s", c, stderr.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the proxy command did not stop")
	}
	if !strings.Contains(stderr.String(), `"msg":"bunting proxy is listening"`) {
		t.Errorf("expected a JSON log line, got %s", stderr.String())
	}
}

func TestProxyCommandBadConfiguration(t *testing.T) {
	lookup := func(k string) (string, bool) {
		v, ok := map[string]string{"UPSTREAM_URL": "http://u/api", "UPSTREAM_API_TOKEN": "t", "UPSTREAM_PROXY_CLIENT_KEYS": "k", "UPSTREAM_FETCH_INTERVAL": "5s"}[k]
		return v, ok
	}
	var stderr bytes.Buffer
	if c := Run(context.Background(), []string{"proxy"}, lookup, io.Discard, &stderr); c != 1 {
		t.Fatalf("exit code %d", c)
	}
	if !strings.Contains(stderr.String(), "refreshInterval (UPSTREAM_FETCH_INTERVAL") {
		t.Errorf("message should name the option: %s", stderr.String())
	}
	stderr.Reset()
	if c := Run(context.Background(), []string{"proxy", "-h"}, lookup, io.Discard, &stderr); c != 2 {
		t.Fatalf("-h exit code %d", c)
	}
	if !strings.Contains(stderr.String(), "-upstream-url") {
		t.Errorf("usage should list the flags: %s", stderr.String())
	}
}
