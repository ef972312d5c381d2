package serverbench

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// BenchmarkToggle turns flags on and off through the admin API; every
// operation changes the flag's state and writes its event in the same
// transaction. It reports changes/s for 1, 4 and 16 concurrent clients (each
// client owns one flag), on SQLite and, with TEST_POSTGRES_URL, PostgreSQL.
func BenchmarkToggle(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			db := servertest.NewSQLite(b)
			if kind == "postgres" {
				db = servertest.NewPostgres(b)
			}
			h := servertest.Start(b, db)
			h.Client.Transport = &http.Transport{MaxIdleConnsPerHost: 64}
			for _, clients := range []int{1, 4, 16} {
				b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
					benchToggle(b, h, clients)
				})
			}
		})
	}
}

// flagSeq keeps flag names unique across the benchmark's repeated runs.
var flagSeq atomic.Int64

func benchToggle(b *testing.B, h *servertest.Harness, clients int) {
	paths := make([]string, clients)
	for i := range paths {
		name := fmt.Sprintf("bench-%d-%d-%d", clients, i, flagSeq.Add(1))
		h.Do(b, "POST", "/api/admin/projects/default/features", h.AdminToken, map[string]any{"name": name}).Want(b, 201)
		paths[i] = "/api/admin/projects/default/features/" + name + "/environments/development/"
		h.Do(b, "POST", paths[i]+"on", h.AdminToken, nil).Want(b, 200) // adds the default strategy once
		h.Do(b, "POST", paths[i]+"off", h.AdminToken, nil).Want(b, 200)
	}
	before := lastEventID(b, h)
	cpuBefore := processCPU()
	var next atomic.Int64
	var failed atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(path string) {
			defer wg.Done()
			on := true
			for next.Add(1) <= int64(b.N) {
				op := "off"
				if on {
					op = "on"
				}
				on = !on
				req, _ := http.NewRequest("POST", h.URL+path+op, nil)
				req.Header.Set("Authorization", h.AdminToken)
				res, err := h.Client.Do(req)
				if err != nil || res.StatusCode != 200 {
					failed.Add(1)
				}
				if res != nil {
					// Drained, so the keep-alive connection is reused as a
					// real client's would be (an unread body closes it).
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
				}
			}
		}(paths[c])
	}
	wg.Wait()
	b.StopTimer()
	if failed.Load() > 0 {
		b.Fatalf("%d toggles failed", failed.Load())
	}
	// Every change wrote exactly one event.
	if got := lastEventID(b, h) - before; got != int64(b.N) {
		b.Fatalf("%d toggles wrote %d events", b.N, got)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "changes/s")
	// CPU used by this process (server and HTTP clients; not PostgreSQL's
	// own processes) per change: on a shared machine this stays meaningful
	// when wall-clock throughput does not.
	b.ReportMetric(float64((processCPU()-cpuBefore).Microseconds())/float64(b.N), "cpu-µs/change")
}

// processCPU is the user+system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func lastEventID(b *testing.B, h *servertest.Harness) int64 {
	var body struct{ Events []struct{ ID int64 } }
	h.Do(b, "POST", "/api/admin/events/search", h.AdminToken, map[string]any{"limit": 1}).Want(b, 200).JSON(b, &body)
	if len(body.Events) == 0 {
		return 0
	}
	return body.Events[0].ID
}
