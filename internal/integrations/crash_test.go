package integrations_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/cli"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// runAsBunting makes the test binary act as the bunting command in a
// child process, so that a test can kill a real server with SIGKILL.
const runAsBunting = "BUNTING_INTEGRATIONS_TEST_RUN_AS_BUNTING"

func TestMain(m *testing.M) {
	if os.Getenv(runAsBunting) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := cli.Run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// child is `bunting server` in a process of its own.
type child struct {
	cmd    *exec.Cmd
	stderr *testutil.Buffer
	done   chan struct{}
}

func startChild(t *testing.T, env map[string]string) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "server")
	cmd.Env = []string{runAsBunting + "=1", "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	c := &child{cmd: cmd, stderr: &testutil.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = io.Discard, c.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(c.done) }()
	t.Cleanup(func() { c.kill() })
	return c
}

func (c *child) kill() {
	_ = c.cmd.Process.Signal(syscall.SIGKILL)
	<-c.done
}

func call(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	req.Header.Set("Authorization", token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// kill -9 of the server with deliveries pending: after a restart every
// one is delivered, none lost, and a delivery that came twice came with
// the same id.
func TestDeliveriesSurviveKill9(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		rc := newReceiver(t, func(int, *http.Request) int {
			time.Sleep(20 * time.Millisecond) // slow enough that some are pending when the server dies
			return 200
		})
		const admin = "*:*.kill9-admin"
		port := testutil.FreePort(t)
		base := "http://127.0.0.1:" + strconv.Itoa(port)
		env := map[string]string{"PORT": strconv.Itoa(port), "HTTP_HOST": "127.0.0.1", "INIT_ADMIN_API_TOKENS": admin,
			"LOG_LEVEL": "warn", "INTEGRATION_ALLOWED_TARGETS": "127.0.0.1/32"}
		if db.Kind == "postgres" {
			env["DATABASE_URL"] = db.URL
		} else {
			env["DATABASE_PATH"] = db.Path
		}
		srv := startChild(t, env)
		testutil.Eventually(t, 20*time.Second, "the server answers", func() bool {
			code, _ := call(t, "GET", base+"/health", "", "")
			return code == 200
		})
		if code, body := call(t, "POST", base+"/api/admin/addons", admin,
			`{"provider":"webhook","events":["feature-created"],"parameters":{"url":"`+rc.URL+`"}}`); code != 201 {
			t.Fatalf("create addon: %d %s", code, body)
		}
		const n = 40
		for i := range n {
			if code, body := call(t, "POST", base+"/api/admin/projects/default/features", admin, fmt.Sprintf(`{"name":"k9-%02d"}`, i)); code != 201 {
				t.Fatalf("create flag: %d %s", code, body)
			}
		}
		testutil.Eventually(t, 10*time.Second, "a few deliveries", func() bool { return len(rc.got()) >= 3 })
		srv.kill()
		before := len(rc.got())
		if before >= n {
			t.Fatalf("everything was delivered (%d) before the kill; the test needs pending deliveries", before)
		}
		t.Logf("%d of %d requests received before kill -9", before, n)

		startChild(t, env)
		testutil.Eventually(t, 60*time.Second, "every delivery after the restart", func() bool {
			seen := map[string]bool{}
			for _, h := range rc.got() {
				var ev struct{ FeatureName string }
				_ = json.Unmarshal(h.Body, &ev)
				seen[ev.FeatureName] = true
			}
			return len(seen) >= n
		})
		idOf := map[string]string{} // flag → webhook-id
		for _, h := range rc.got() {
			var ev struct{ FeatureName string }
			if err := json.Unmarshal(h.Body, &ev); err != nil || !strings.HasPrefix(ev.FeatureName, "k9-") {
				t.Fatalf("unexpected delivery %s", h.Body)
			}
			id := h.Header.Get("webhook-id")
			if prev, ok := idOf[ev.FeatureName]; ok && prev != id {
				t.Fatalf("%s was delivered twice with different ids: %s and %s", ev.FeatureName, prev, id)
			}
			idOf[ev.FeatureName] = id
		}
		if len(idOf) != n {
			t.Fatalf("%d of %d events delivered", len(idOf), n)
		}
		t.Logf("%d requests for %d events (%d sent again after the restart)", len(rc.got()), n, len(rc.got())-n)
	})
}
