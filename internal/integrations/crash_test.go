package integrations_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/cli"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// TestMain lets a test start the test binary as the bunting command, so
// that it can kill a real server with SIGKILL.
func TestMain(m *testing.M) { testutil.Main(m, cli.Run) }

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
		srv := testutil.StartBunting(t, env, "server")
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
		srv.Kill()
		before := len(rc.got())
		if before >= n {
			t.Fatalf("everything was delivered (%d) before the kill; the test needs pending deliveries", before)
		}
		t.Logf("%d of %d requests received before kill -9", before, n)

		testutil.StartBunting(t, env, "server")
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
