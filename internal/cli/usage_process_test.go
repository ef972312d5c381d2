package cli

import (
	"context"
	"net/http"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// What a `bunting server` process counted of SDK usage survives an
// interrupt (the shutdown writes it), and a kill -9 loses at most what
// arrived within the last flush interval.
func TestUsageAcrossInterruptAndKill(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "bunting.db")
	const admin, client = "*:*.usage-admin", "default:development.usage-client"
	start := func(interval string) (*buntingProcess, string) {
		port := testutil.FreePort(t)
		url := "http://127.0.0.1:" + strconv.Itoa(port)
		p := startBunting(t, map[string]string{"PORT": strconv.Itoa(port), "HTTP_HOST": "127.0.0.1", "DATABASE_PATH": db,
			"INIT_ADMIN_API_TOKENS": admin, "INIT_CLIENT_API_TOKENS": client, "LOG_LEVEL": "warn", "USAGE_FLUSH_INTERVAL": interval}, "server")
		p.waitFor(t, url+"/health", nil, http.StatusOK)
		return p, url
	}
	report := func(url string, n int) {
		for range n {
			body := `{"appName":"usage-app","instanceId":"i1","bucket":{"start":"` + time.Now().UTC().Format(time.RFC3339) +
				`","stop":"` + time.Now().UTC().Format(time.RFC3339) + `","toggles":{"counted":{"yes":1,"no":0}}}}`
			if code, resp := testutil.Call(t, http.MethodPost, url+"/api/client/metrics", client, body); code != http.StatusAccepted {
				t.Fatalf("report: %d %s", code, resp)
			}
		}
	}
	stored := func() int64 {
		st := servertest.OpenStore(t, servertest.Database{Kind: "sqlite", Path: db})
		defer st.Close()
		var yes int64
		if err := st.DB().QueryRowContext(context.Background(), `SELECT COALESCE(SUM(yes), 0) FROM client_metrics_hourly WHERE feature_name = 'counted'`).Scan(&yes); err != nil {
			t.Fatal(err)
		}
		return yes
	}

	// An interrupt, long before the hour-long flush interval.
	p, url := start("1h")
	if code, body := testutil.Call(t, http.MethodPost, url+"/api/admin/projects/default/features", admin, `{"name":"counted"}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	report(url, 10)
	p.stop(t)
	if got := stored(); got != 10 {
		t.Fatalf("after an interrupt %d yes stored, want the 10 reported", got)
	}

	// A kill -9: what was reported more than a flush interval before is
	// stored; of what came just before, none or all (one flush) may be lost.
	p, url = start("300ms")
	report(url, 10)
	time.Sleep(time.Second)
	report(url, 5)
	_ = p.Cmd.Process.Kill()
	<-p.Done
	if got := stored(); got < 20 || got > 25 {
		t.Fatalf("after a kill -9 %d yes stored, want the 20 reported more than a flush interval before, and at most the 5 reported just before", got)
	}
}
