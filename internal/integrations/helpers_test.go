package integrations_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// hit is one request a receiver got.
type hit struct {
	Header http.Header
	Body   []byte
	At     time.Time
}

// receiver is a real HTTP server on loopback that records what it gets
// and answers what answer says (200 by default).
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	hits   []hit
	answer func(n int, r *http.Request) int // n counts from 1
}

func newReceiver(t *testing.T, answer func(n int, r *http.Request) int) *receiver {
	t.Helper()
	rc := &receiver{answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.hits = append(rc.hits, hit{Header: r.Header.Clone(), Body: body, At: time.Now()})
		n := len(rc.hits)
		rc.mu.Unlock()
		status := 200
		if rc.answer != nil {
			status = rc.answer(n, r)
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, "answer %d", status)
	}))
	t.Cleanup(rc.Close)
	return rc
}

// got returns the requests so far.
func (rc *receiver) got() []hit {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]hit(nil), rc.hits...)
}

// waitHits waits until the receiver got n requests and returns them.
func (rc *receiver) waitHits(t *testing.T, n int, within time.Duration) []hit {
	t.Helper()
	testutil.Eventually(t, within, fmt.Sprintf("%d requests at the receiver", n), func() bool { return len(rc.got()) >= n })
	return rc.got()
}

// events decodes each request body as a Bunting event.
func (rc *receiver) events(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, h := range rc.got() {
		var m map[string]any
		if err := json.Unmarshal(h.Body, &m); err != nil {
			t.Fatalf("body %s: %v", h.Body, err)
		}
		out = append(out, m)
	}
	return out
}

// allowLoopback lets deliveries reach receivers on 127.0.0.1, and retries
// come quickly.
func allowLoopback(c *server.Config) {
	c.Integrations.AllowedTargets = []string{"127.0.0.1/32"}
	c.Integrations.RetryBase = 200 * time.Millisecond
	c.Integrations.PollInterval = 200 * time.Millisecond
}

// createAddon creates an integration and returns its answer.
func createAddon(t *testing.T, h *servertest.Harness, body map[string]any) map[string]any {
	t.Helper()
	return h.Do(t, "POST", "/api/admin/addons", h.AdminToken, body).Want(t, 201).Map(t)
}

// webhook is the body of a webhook integration to url for events (all
// when none are given).
func webhook(url string, extra map[string]any, events ...string) map[string]any {
	params := map[string]any{"url": url}
	for k, v := range extra {
		params[k] = v
	}
	if events == nil {
		events = []string{}
	}
	return map[string]any{"provider": "webhook", "enabled": true, "parameters": params, "events": events}
}

// createFlag creates a flag in the default project.
func createFlag(t *testing.T, h *servertest.Harness, project, name string) {
	t.Helper()
	h.Do(t, "POST", "/api/admin/projects/"+project+"/features", h.AdminToken, map[string]any{"name": name}).Want(t, 201)
}

// toggle turns a flag on or off in an environment.
func toggle(t *testing.T, h *servertest.Harness, project, name, env string, on bool) {
	t.Helper()
	op := "off"
	if on {
		op = "on"
	}
	h.Do(t, "POST", "/api/admin/projects/"+project+"/features/"+name+"/environments/"+env+"/"+op, h.AdminToken, nil).Want(t, 200)
}

// addonLog reads an integration's delivery log.
func addonLog(t *testing.T, h *servertest.Harness, id any) []map[string]any {
	t.Helper()
	var body struct {
		IntegrationEvents []map[string]any `json:"integrationEvents"`
	}
	h.Do(t, "GET", fmt.Sprintf("/api/admin/addons/%v/events?limit=100", id), h.AdminToken, nil).Want(t, 200).JSON(t, &body)
	return body.IntegrationEvents
}

// verifier checks Standard Webhooks signatures with the published npm
// library standardwebhooks, run by node (test/node/verify-webhook.js).
type verifier struct {
	in  io.WriteCloser
	out *bufio.Scanner
	mu  sync.Mutex
}

func newVerifier(t *testing.T) *verifier {
	t.Helper()
	testutil.Node(t)
	modules := testutil.NodeModules(t, "standardwebhooks")
	cmd := exec.Command("node", filepath.Join("..", "..", "test", "node", "verify-webhook.js"))
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	cmd.Stderr = os.Stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); _ = cmd.Wait() })
	return &verifier{in: in, out: bufio.NewScanner(out)}
}

// verify returns the library's verdict ("" when it accepts).
func (v *verifier) verify(t *testing.T, secret string, h hit) string {
	t.Helper()
	v.mu.Lock()
	defer v.mu.Unlock()
	headers := map[string]string{}
	for k := range h.Header {
		headers[strings.ToLower(k)] = h.Header.Get(k)
	}
	line, _ := json.Marshal(map[string]any{"secret": secret, "headers": headers, "body": string(h.Body)})
	if _, err := v.in.Write(append(line, '\n')); err != nil {
		t.Fatal(err)
	}
	if !v.out.Scan() {
		t.Fatal("the verifier stopped")
	}
	var res struct {
		OK    bool
		Error string
	}
	if err := json.Unmarshal(v.out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if res.OK {
		return ""
	}
	return res.Error
}

// loopbackListener listens on another loopback address (127.0.0.2 …),
// which the allowed 127.0.0.1/32 does not cover.
func loopbackListener(t *testing.T, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr+":0")
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	return ln
}
