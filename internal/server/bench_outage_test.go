package server_test

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// BenchmarkClientFeaturesDuringOutage compares GET /api/client/features
// with 1,000 flags (full response and 304) on PostgreSQL while the
// database is there and while it is away (connections refused, sessions
// ended: servertest.CutPostgres), side by side in one run: each answer
// comes from memory either way, so the outage rate should match the
// normal one.
func BenchmarkClientFeaturesDuringOutage(b *testing.B) {
	db := servertest.NewPostgres(b)
	h := servertest.Start(b, db)
	seedBenchFlags(b, h, 1000)
	full := h.Do(b, "GET", "/api/client/features", h.ClientToken, nil).Want(b, 200)
	etag := full.Header.Get("ETag")
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	get := func(b *testing.B, inm string, want int) {
		req, _ := http.NewRequest("GET", h.URL+"/api/client/features", nil)
		req.Header.Set("Authorization", h.ClientToken)
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != want {
			b.Fatalf("status %d, want %d", res.StatusCode, want)
		}
	}
	run := func(name, inm string, want int) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(full.Body)))
			cpu := processCPU()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					get(b, inm, want)
				}
			})
			// The CPU time of the whole process (server, its background
			// work during the outage, and the client) per request: steadier
			// than the rate on a shared machine.
			b.ReportMetric(float64((processCPU()-cpu).Nanoseconds())/float64(b.N)/1000, "cpu-µs/op")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
	outage := func(name string, fn func()) {
		restore := servertest.CutPostgres(b, db)
		// A refused change makes the server notice, as in a real outage.
		h.Do(b, "POST", featuresURL, h.AdminToken, map[string]any{"name": "during-outage"}).Want(b, 503)
		fn()
		restore()
		for deadline := time.Now().Add(10 * time.Second); h.Store.Unavailable() != nil; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				b.Fatalf("%s: the server did not find its database again within 10 s", name)
			}
		}
	}
	// Interleaved rounds, so that a busy moment of the machine does not
	// fall on one side only.
	for range benchOutageRounds {
		for _, c := range []struct {
			name, inm string
			want      int
		}{{"full", "", 200}, {"304", etag, 304}} {
			run(c.name+"/normal", c.inm, c.want)
			outage(c.name, func() { run(c.name+"/outage", c.inm, c.want) })
		}
	}
}

// benchOutageRounds is how many times BenchmarkClientFeaturesDuringOutage
// alternates between the database there and away.
const benchOutageRounds = 3
