package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
)

func nodeCommand(ctx context.Context, modules, script string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join("testdata", "node", script)}, args...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	return cmd
}

// seedSDKFlags creates the flags the Node scripts evaluate.
func seedSDKFlags(t *testing.T, h *servertest.Harness) {
	t.Helper()
	for _, n := range []string{"flag-on", "flag-off", "flag-segment", "flag-child"} {
		createFlag(t, h, n)
	}
	dev := "development"
	h.Do(t, "POST", envPath("flag-on", dev)+"/strategies", h.AdminToken, map[string]any{"name": "flexibleRollout",
		"parameters": map[string]any{"rollout": "100"},
		"variants":   []any{map[string]any{"name": "blue", "weight": 1000, "weightType": "variable", "stickiness": "default"}}}).Want(t, 200)
	h.Do(t, "POST", envPath("flag-on", dev)+"/on", h.AdminToken, nil).Want(t, 200)
	seg := h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "u1-only",
		"constraints": []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"u1"}}}}).Want(t, 201).Map(t)
	h.Do(t, "POST", envPath("flag-segment", dev)+"/strategies", h.AdminToken, map[string]any{"name": "default", "segments": []any{seg["id"]}}).Want(t, 200)
	h.Do(t, "POST", envPath("flag-segment", dev)+"/on", h.AdminToken, nil).Want(t, 200)
	h.Do(t, "POST", envPath("flag-child", dev)+"/on", h.AdminToken, nil).Want(t, 200)
	h.Do(t, "POST", featurePath("flag-child")+"/dependencies", h.AdminToken, map[string]any{"feature": "flag-off"}).Want(t, 200)
}

func TestNodeSDKReadsFlagsAndPostsMetrics(t *testing.T) {
	t.Parallel()
	testutil.Node(t)
	modules := testutil.NodeModules(t, "unleash-client")
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		seedSDKFlags(t, h)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := nodeCommand(ctx, modules, "sdk.js", h.URL+"/api/", h.ClientToken).CombinedOutput()
		if err != nil {
			t.Fatalf("node sdk: %v\n%s", err, out)
		}
		var got map[string]any
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &got); err != nil {
			t.Fatalf("sdk output %q: %v", out, err)
		}
		want := map[string]any{"on": true, "off": false, "segmented": true, "segmentedOther": false, "variant": "blue", "child": false}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s = %v, want %v (output %s)", k, got[k], v, out)
			}
		}
		var usage struct {
			Data []struct {
				AppName  string
				Yes, No  int
				Variants map[string]int
			}
		}
		h.FlushUsage(t)
		h.Do(t, "GET", "/api/admin/client-metrics/features/flag-on", h.AdminToken, nil).Want(t, 200).JSON(t, &usage)
		if len(usage.Data) != 1 || usage.Data[0].AppName != "bunting-node-sdk-test" || usage.Data[0].Yes < 2 || usage.Data[0].Variants["blue"] < 1 {
			t.Fatalf("metrics from the SDK: %+v", usage)
		}
	})
}

func TestReferenceNodeProxyUsesServerAsUpstream(t *testing.T) {
	t.Parallel()
	testutil.Node(t)
	modules := testutil.NodeModules(t, "@unleash/proxy")
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		seedSDKFlags(t, h)
		port := testutil.FreePort(t)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		cmd := nodeCommand(ctx, modules, "proxy.js", h.URL+"/api/", h.ClientToken, strconv.Itoa(port))
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cancel(); _ = cmd.Wait() }()
		ready := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				if strings.Contains(sc.Text(), "listening") {
					close(ready)
				}
			}
		}()
		select {
		case <-ready:
		case <-time.After(20 * time.Second):
			t.Fatal("proxy did not start")
		}
		base := "http://127.0.0.1:" + strconv.Itoa(port)
		var toggles struct {
			Toggles []struct {
				Name    string
				Enabled bool
				Variant struct{ Name string }
			}
		}
		deadline := time.Now().Add(15 * time.Second)
		for {
			req, _ := http.NewRequest("GET", base+"/proxy?userId=u1", nil)
			req.Header.Set("Authorization", "proxy-client-key")
			res, err := http.DefaultClient.Do(req)
			if err == nil && res.StatusCode == 200 {
				err = json.NewDecoder(res.Body).Decode(&toggles)
				res.Body.Close()
				if err == nil && len(toggles.Toggles) > 0 {
					break
				}
			} else if err == nil {
				res.Body.Close()
			}
			if time.Now().After(deadline) {
				t.Fatalf("proxy never served toggles (last error %v)", err)
			}
			time.Sleep(100 * time.Millisecond)
		}
		names := map[string]string{}
		for _, tg := range toggles.Toggles {
			names[tg.Name] = tg.Variant.Name
		}
		if names["flag-on"] != "blue" || names["flag-segment"] != "disabled" || len(names) != 2 {
			t.Fatalf("proxy toggles: %+v", toggles)
		}
		// A change on the server reaches the proxy.
		h.Do(t, "POST", envPath("flag-on", "development")+"/off", h.AdminToken, nil).Want(t, 200)
		deadline = time.Now().Add(10 * time.Second)
		for {
			req, _ := http.NewRequest("GET", base+"/proxy?userId=u1", nil)
			req.Header.Set("Authorization", "proxy-client-key")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			toggles.Toggles = nil
			_ = json.NewDecoder(res.Body).Decode(&toggles)
			res.Body.Close()
			if len(toggles.Toggles) == 1 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("proxy still serves %+v", toggles)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}
