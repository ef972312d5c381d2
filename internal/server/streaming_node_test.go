package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"github.com/bunting-flags/bunting/internal/testutil"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// nodeState is one line of test/node/stream-sdk.js.
type nodeState struct {
	Why   string
	Mode  string
	Flags map[string]struct{ Enabled, U1 bool }
}

// nodeStreamSDK is the real Node SDK in a streaming or delta mode.
type nodeStreamSDK struct {
	states chan nodeState
	stdin  io.WriteCloser
	mu     sync.Mutex
	stderr strings.Builder
	seen   []nodeState
}

func startNodeStreamSDK(t *testing.T, url, token, mode string) *nodeStreamSDK {
	t.Helper()
	testutil.Node(t)
	modules := testutil.NodeModules(t, "unleash-client")
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, "node", filepath.Join("..", "..", "test", "node", "stream-sdk.js"), url+"/api/", token, mode)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	n := &nodeStreamSDK{states: make(chan nodeState, 1000)}
	stdout, _ := cmd.StdoutPipe()
	stderr, _ := cmd.StderrPipe()
	n.stdin, _ = cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var s nodeState
			if err := json.Unmarshal(sc.Bytes(), &s); err == nil {
				n.states <- s
			}
		}
	}()
	go func() {
		b, _ := io.ReadAll(stderr)
		n.mu.Lock()
		n.stderr.Write(b)
		n.mu.Unlock()
	}()
	t.Cleanup(func() {
		n.stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cancel()
			<-done
		}
		cancel()
		n.mu.Lock()
		defer n.mu.Unlock()
		if s := n.stderr.String(); s != "" {
			t.Logf("node stderr:\n%s", s)
		}
	})
	return n
}

// waitFor reads the SDK's states until ok holds; every state read must be
// in mode.
func (n *nodeStreamSDK) waitFor(t *testing.T, mode, what string, ok func(s nodeState) bool) {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case s := <-n.states:
			n.seen = append(n.seen, s)
			if mode != "" && s.Mode != mode {
				t.Fatalf("waiting for %s: the SDK is in %s mode (%s), want %s", what, s.Mode, s.Why, mode)
			}
			if ok(s) {
				return
			}
		case <-timeout:
			t.Fatalf("the SDK never saw %s; its last states: %+v", what, n.seen[max(0, len(n.seen)-3):])
		}
	}
}

// TestNodeSDKStreamingAndDelta runs a scripted sequence of changes past the
// real Node SDK in streaming mode and in delta polling mode: it sees each
// change, stays in its mode, and catches up after a server restart.
func TestNodeSDKStreamingAndDelta(t *testing.T) {
	for _, mode := range []string{"streaming", "delta"} {
		t.Run(mode, func(t *testing.T) {
			servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
				sdkMode := map[string]string{"streaming": "streaming", "delta": "polling"}[mode]
				h := servertest.Start(t, db)
				createFlag(t, h, "n-a")
				sdk := startNodeStreamSDK(t, h.URL, h.ClientToken, mode)
				sdk.waitFor(t, sdkMode, "n-a off", func(s nodeState) bool { f, ok := s.Flags["n-a"]; return ok && !f.Enabled })

				createFlag(t, h, "n-b")
				sdk.waitFor(t, sdkMode, "n-b created", func(s nodeState) bool { _, ok := s.Flags["n-b"]; return ok })

				st := h.Do(t, "POST", envPath("n-a", "development")+"/strategies", h.AdminToken, map[string]any{"name": "flexibleRollout",
					"parameters": map[string]any{"rollout": "0", "stickiness": "default", "groupId": "n-a"}}).Want(t, 200).Map(t)
				h.Do(t, "POST", envPath("n-a", "development")+"/on", h.AdminToken, nil).Want(t, 200)
				sdk.waitFor(t, sdkMode, "n-a on at 0%", func(s nodeState) bool { f := s.Flags["n-a"]; return f.Enabled && !f.U1 })
				h.Do(t, "PUT", envPath("n-a", "development")+"/strategies/"+st["id"].(string), h.AdminToken, map[string]any{"name": "flexibleRollout",
					"parameters": map[string]any{"rollout": "100", "stickiness": "default", "groupId": "n-a"}}).Want(t, 200)
				sdk.waitFor(t, sdkMode, "n-a at 100%", func(s nodeState) bool { return s.Flags["n-a"].U1 })

				seg := h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "n-seg",
					"constraints": []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"u2"}}}}).Want(t, 201).Map(t)
				h.Do(t, "POST", envPath("n-b", "development")+"/strategies", h.AdminToken, map[string]any{"name": "default", "segments": []any{seg["id"]}}).Want(t, 200)
				h.Do(t, "POST", envPath("n-b", "development")+"/on", h.AdminToken, nil).Want(t, 200)
				sdk.waitFor(t, sdkMode, "n-b on for u2 only", func(s nodeState) bool { f := s.Flags["n-b"]; return f.Enabled && !f.U1 })
				h.Do(t, "PUT", "/api/admin/segments/"+jsonNumber(seg["id"]), h.AdminToken, map[string]any{"name": "n-seg",
					"constraints": []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"u1", "u2"}}}}).Want(t, 204)
				sdk.waitFor(t, sdkMode, "the segment edit", func(s nodeState) bool { return s.Flags["n-b"].U1 })

				h.Do(t, "DELETE", featurePath("n-b"), h.AdminToken, nil).Want(t, 202)
				sdk.waitFor(t, sdkMode, "n-b archived", func(s nodeState) bool { _, ok := s.Flags["n-b"]; return !ok })

				// Restart: the SDK reconnects to a new server on the same
				// database and address and sees the change made meanwhile.
				addr := strings.TrimPrefix(h.URL, "http://")
				h.Stop()
				h = servertest.Start(t, db, servertest.At(addr))
				h.Do(t, "POST", envPath("n-a", "development")+"/off", h.AdminToken, nil).Want(t, 200)
				sdk.waitFor(t, sdkMode, "n-a off after the restart", func(s nodeState) bool { return !s.Flags["n-a"].Enabled })
				createFlag(t, h, "n-c")
				sdk.waitFor(t, sdkMode, "n-c created after the restart", func(s nodeState) bool { _, ok := s.Flags["n-c"]; return ok })
			})
		})
	}
}

// TestNodeSDKStreamingFallsBackOn429: over the stream limit, the Node SDK
// switches to polling and keeps up with changes.
func TestNodeSDKStreamingFallsBackOn429(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "f-a")
		sdk := startNodeStreamSDK(t, h.URL, h.ClientToken, "streaming")
		sdk.waitFor(t, "", "polling mode with f-a", func(s nodeState) bool { _, ok := s.Flags["f-a"]; return ok && s.Mode == "polling" })
		createFlag(t, h, "f-b")
		sdk.waitFor(t, "polling", "f-b by polling", func(s nodeState) bool { _, ok := s.Flags["f-b"]; return ok })
	}, func(c *server.Config) { c.Streaming.MaxConnections = 0 })
}

func jsonNumber(v any) string { b, _ := json.Marshal(v); return string(b) }

// TestNodeSDKStreamingAcrossInstances: writes on one PostgreSQL instance,
// the Node SDK streaming from another (whose revision poll is an hour).
func TestNodeSDKStreamingAcrossInstances(t *testing.T) {
	db := servertest.NewPostgres(t)
	a := servertest.Start(t, db)
	b := servertest.Start(t, db, func(c *server.Config) { c.RevisionPollInterval = time.Hour })
	createFlag(t, a, "x-a")
	sdk := startNodeStreamSDK(t, b.URL, b.ClientToken, "streaming")
	sdk.waitFor(t, "streaming", "x-a", func(s nodeState) bool { _, ok := s.Flags["x-a"]; return ok })
	for _, on := range []bool{true, false, true} {
		a.Do(t, "POST", envPath("x-a", "development")+map[bool]string{true: "/on", false: "/off"}[on], a.AdminToken, nil).Want(t, 200)
		sdk.waitFor(t, "streaming", "x-a switched", func(s nodeState) bool { return s.Flags["x-a"].Enabled == on })
	}
	createFlag(t, a, "x-b")
	sdk.waitFor(t, "streaming", "x-b", func(s nodeState) bool { _, ok := s.Flags["x-b"]; return ok })
}
