package signals_test

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// benchServer starts a server on SQLite, or on PostgreSQL when
// TEST_POSTGRES_URL is set and BENCH_POSTGRES=1, with the rate limit
// raised out of the way.
func benchServer(b *testing.B) *servertest.Harness {
	db := servertest.NewSQLite(b)
	if getenv("BENCH_POSTGRES") == "1" {
		db = servertest.NewPostgres(b)
	}
	return servertest.Start(b, db, func(c *server.Config) { c.Signals.RatePerSecond = 1 << 30 })
}

// BenchmarkIngest measures how many signals per second one server accepts
// on loopback (rate limit disabled), from parallel senders.
func BenchmarkIngest(b *testing.B) {
	h := benchServer(b)
	_, token := endpoint(b, h, "bench")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest("POST", h.URL+"/api/signal-endpoint/bench", strings.NewReader(`{"severity":"critical","value":3}`))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Content-Type", "application/json")
			res, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			res.Body.Close()
			if res.StatusCode != 200 {
				b.Errorf("status %d", res.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "signals/s")
}

// BenchmarkSignalToFlagOff measures the time from posting a matching
// signal to the client API serving the flag as off.
func BenchmarkSignalToFlagOff(b *testing.B) {
	h := benchServer(b)
	source, token := endpoint(b, h, "alerts")
	actor := serviceAccount(b, h, "bot", "Editor")
	flag(b, h, "checkout")
	h.Do(b, "POST", "/api/admin/projects/default/actions", h.AdminToken,
		actionSet("kill", actor, source, "TOGGLE_FEATURE_OFF", "checkout")).Want(b, 201)
	on := "/api/admin/projects/default/features/checkout/environments/development/on"
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		h.Do(b, "POST", on, h.AdminToken, nil).Want(b, 200)
		b.StartTimer()
		signal(b, h, "alerts", token, map[string]any{"severity": "critical"}).Want(b, 200)
		for clientFlagEnabled(b, h, "checkout") {
			time.Sleep(time.Millisecond)
		}
	}
}

func getenv(k string) string { return os.Getenv(k) }
