package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// TestBrowserSDKOnFrontendAPI runs unleash-proxy-client 3.8.2 against the
// server's frontend API, with GET and with POST requests.
func TestBrowserSDKOnFrontendAPI(t *testing.T) {
	t.Parallel()
	testutil.Node(t)
	modules := testutil.NodeModules(t, "unleash-proxy-client")
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		seedSDKFlags(t, h)
		for _, post := range []string{"0", "1"} {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			cmd := nodeCommand(ctx, modules, "frontend.js", h.URL+"/api/frontend", h.FrontendToken)
			cmd.Env = append(cmd.Env, "USE_POST="+post)
			out, err := cmd.CombinedOutput()
			cancel()
			if err != nil {
				t.Fatalf("node frontend (USE_POST=%s): %v\n%s", post, err, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			var got map[string]any
			if err := json.Unmarshal([]byte(lines[0]), &got); err != nil || lines[len(lines)-1] != "SENT" {
				t.Fatalf("output: %s", out)
			}
			want := map[string]any{"flagOn": true, "variant": "blue", "segment": true, "child": false, "off": false}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("USE_POST=%s %s = %v, want %v", post, k, got[k], v)
				}
			}
		}
		h.FlushUsage(t)
		usage := h.Do(t, "GET", "/api/admin/client-metrics/features/flag-on", h.AdminToken, nil).Want(t, 200)
		if !strings.Contains(string(usage.Body), "frontend-sdk-test") {
			t.Fatalf("the SDK's metrics were not stored: %s", usage.Body)
		}
	})
}
