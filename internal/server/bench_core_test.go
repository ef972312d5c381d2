package server_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// benchDatabases runs a benchmark on SQLite and (with TEST_POSTGRES_URL) PostgreSQL.
func benchDatabases(b *testing.B, body func(b *testing.B, h *servertest.Harness)) {
	b.Run("sqlite", func(b *testing.B) { body(b, servertest.Start(b, servertest.NewSQLite(b))) })
	b.Run("postgres", func(b *testing.B) { body(b, servertest.Start(b, servertest.NewPostgres(b))) })
}

// BenchmarkToggle measures flag on/off changes, each with its event,
// from 8 concurrent clients over loopback.
func BenchmarkToggle(b *testing.B) {
	benchDatabases(b, func(b *testing.B, h *servertest.Harness) {
		for i := range 8 {
			h.Do(b, "POST", featuresURL, h.AdminToken, map[string]any{"name": "t" + strconv.Itoa(i)}).Want(b, 201)
		}
		var next atomic.Int64
		b.SetParallelism(4)
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			flag := "t" + strconv.Itoa(int(next.Add(1)-1)%8)
			on := false
			for pb.Next() {
				on = !on
				action := map[bool]string{true: "/on", false: "/off"}[on]
				res := h.Do(b, "POST", envPath(flag, "development")+action, h.AdminToken, nil)
				if res.Status != 200 {
					b.Fatalf("toggle: %s", res)
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "changes/s")
	})
}

// BenchmarkClientFeatures compares GET /api/client/features with 1,000 flags
// (full response and 304) to a baseline server returning the same bytes.
func BenchmarkClientFeatures(b *testing.B) {
	h := servertest.Start(b, servertest.NewSQLite(b))
	seedBenchFlags(b, h, 1000)
	full := h.Do(b, "GET", "/api/client/features", h.ClientToken, nil).Want(b, 200)
	etag := full.Header.Get("ETag")
	baseline := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(full.Body)
	}))
	defer baseline.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	get := func(b *testing.B, url, token, inm string, want int) {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", token)
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
			b.Fatalf("status %d", res.StatusCode)
		}
	}
	cases := []struct {
		name, url, inm string
		want           int
	}{
		{"full/bunting", h.URL + "/api/client/features", "", 200},
		{"full/baseline", baseline.URL, "", 200},
		{"304/bunting", h.URL + "/api/client/features", etag, 304},
		{"304/baseline", baseline.URL, etag, 304},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(full.Body)))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					get(b, c.url, h.ClientToken, c.inm, c.want)
				}
			})
		})
	}
}

// seedBenchFlags creates n flags, each with a rollout strategy with a
// constraint in development.
func seedBenchFlags(b *testing.B, h *servertest.Harness, n int) {
	for i := range n {
		name := "flag-" + strconv.Itoa(i)
		h.Do(b, "POST", featuresURL, h.AdminToken, map[string]any{"name": name}).Want(b, 201)
		h.Do(b, "POST", envPath(name, "development")+"/strategies", h.AdminToken, map[string]any{"name": "flexibleRollout",
			"parameters":  map[string]any{"rollout": "50"},
			"constraints": []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"a", "b"}}}}).Want(b, 200)
	}
}
