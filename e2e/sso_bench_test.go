package e2e

import (
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// BenchmarkOIDCCallback measures GET /auth/oidc/callback with the
// provider's discovery document and key set cached: the state lookup, the
// code exchange, the ID token's verification, userinfo, the person's
// lookup and the new session. The provider (in this process, on loopback)
// signs in before each iteration, outside the timer. ms/callback is the
// whole request as the browser sees it; bunting-ms/callback subtracts the
// time the provider's token and userinfo endpoints took to answer.
func BenchmarkOIDCCallback(b *testing.B) {
	dbs := map[string]func(testing.TB) servertest.Database{"sqlite": servertest.NewSQLite}
	if os.Getenv("TEST_POSTGRES_URL") != "" {
		dbs["postgres"] = servertest.NewPostgres
	}
	for name, newDB := range dbs {
		b.Run(name, func(b *testing.B) {
			s := startSSO(b, newDB(b), map[string]any{"autoCreate": true, "emailDomains": "example.com"})
			warm := s.newFlow(b)
			if res, body := warm.callback(warm.toCallback("alice", "alice-pass")); res.StatusCode != http.StatusSeeOther {
				b.Fatalf("warm-up sign-in: %s %v", res.Status, body)
			}
			keys := s.p.keyCalls.Load()
			var total, provider time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				f := s.newFlow(b)
				cb := f.toCallback("alice", "alice-pass")
				before := s.p.providerTime.Load()
				b.StartTimer()
				start := time.Now()
				res, body := f.callback(cb)
				total += time.Since(start)
				b.StopTimer()
				provider += time.Duration(s.p.providerTime.Load() - before)
				if res.StatusCode != http.StatusSeeOther {
					b.Fatalf("sign-in: %s %v", res.Status, body)
				}
				b.StartTimer()
			}
			b.StopTimer()
			if n := s.p.keyCalls.Load() - keys; n != 0 {
				b.Fatalf("the key set was fetched %d times; want it cached", n)
			}
			b.ReportMetric(float64(total)/float64(b.N)/1e6, "ms/callback")
			b.ReportMetric(float64(total-provider)/float64(b.N)/1e6, "bunting-ms/callback")
		})
	}
}
