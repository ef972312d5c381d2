package serverbench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// loadSeconds is how long BenchmarkIntegrationDelivery runs its load
// (BUNTING_INTEGRATION_LOAD_SECONDS, default 60).
func loadSeconds() int {
	if n, err := strconv.Atoi(os.Getenv("BUNTING_INTEGRATION_LOAD_SECONDS")); err == nil && n > 0 {
		return n
	}
	return 60
}

// latencyReceiver is a webhook receiver on loopback that records, per
// event id, how long after the event's timestamp it arrived.
type latencyReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	arrived map[int64]time.Duration
	dups    int
	// byFlag are the arrival times of each flag's events with their ids,
	// in arrival order (which is event order: one lane per integration).
	byFlag map[string][]arrival
}

type arrival struct {
	id int64
	at time.Time
}

func newLatencyReceiver(b *testing.B) *latencyReceiver {
	rc := &latencyReceiver{arrived: map[int64]time.Duration{}, byFlag: map[string][]arrival{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		var ev struct {
			ID          int64
			CreatedAt   time.Time
			FeatureName string
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &ev)
		rc.mu.Lock()
		if _, seen := rc.arrived[ev.ID]; seen {
			rc.dups++
		} else {
			rc.arrived[ev.ID] = now.Sub(ev.CreatedAt)
			rc.byFlag[ev.FeatureName] = append(rc.byFlag[ev.FeatureName], arrival{ev.ID, now})
		}
		rc.mu.Unlock()
		w.WriteHeader(204)
	}))
	b.Cleanup(rc.Close)
	return rc
}

// count is how many events with an id in (after, upTo] arrived.
func (rc *latencyReceiver) count(after, upTo int64) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for id := range rc.arrived {
		if id > after && id <= upTo {
			n++
		}
	}
	return n
}

// allowLoopback lets the integrations deliver to receivers on 127.0.0.1.
func allowLoopback(c *server.Config) { c.Integrations.AllowedTargets = []string{"127.0.0.1/32"} }

// addWebhooks configures n webhook integrations for the toggles' events,
// each to a receiver of its own.
func addWebhooks(b *testing.B, h *servertest.Harness, n int) []*latencyReceiver {
	var out []*latencyReceiver
	for range n {
		rc := newLatencyReceiver(b)
		h.Do(b, "POST", "/api/admin/addons", h.AdminToken, map[string]any{"provider": "webhook", "enabled": true,
			"events":     []string{"feature-environment-enabled", "feature-environment-disabled"},
			"parameters": map[string]any{"url": rc.URL}}).Want(b, 201)
		out = append(out, rc)
	}
	return out
}

// BenchmarkIntegrationDelivery turns flags on and off at 500 changes/s
// for BUNTING_INTEGRATION_LOAD_SECONDS (60) with three webhook
// integrations on loopback, then reports the latency from each event's
// timestamp (taken in its transaction, before the commit, so the figure
// is an upper bound of commit → delivery) to its arrival, per delivery
// (p50, p99, max), and how many deliveries were lost (none may be).
// Run it with -benchtime=1x.
func BenchmarkIntegrationDelivery(b *testing.B) {
	const rate = 500
	seconds := loadSeconds()
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			db := servertest.NewSQLite(b)
			if kind == "postgres" {
				db = servertest.NewPostgres(b)
			}
			h := servertest.Start(b, db, allowLoopback)
			h.Client.Transport = &http.Transport{MaxIdleConnsPerHost: 64}
			receivers := addWebhooks(b, h, 3)
			const clients = 16
			paths := make([]string, clients)
			names := make([]string, clients)
			acks := make([][]time.Time, clients) // each client's acknowledged changes, in order
			for i := range paths {
				name := fmt.Sprintf("load-%d-%d", i, flagSeq.Add(1))
				names[i] = name
				h.Do(b, "POST", "/api/admin/projects/default/features", h.AdminToken, map[string]any{"name": name}).Want(b, 201)
				paths[i] = "/api/admin/projects/default/features/" + name + "/environments/development/"
				h.Do(b, "POST", paths[i]+"on", h.AdminToken, nil).Want(b, 200) // adds the default strategy once
				h.Do(b, "POST", paths[i]+"off", h.AdminToken, nil).Want(b, 200)
			}
			before := lastEventID(b, h)
			total := rate * seconds
			var next, failed atomic.Int64
			start := time.Now()
			b.ResetTimer()
			var wg sync.WaitGroup
			for c := range clients {
				wg.Add(1)
				go func(c int, path string) {
					defer wg.Done()
					on := true
					for {
						i := next.Add(1)
						if i > int64(total) {
							return
						}
						// The i-th change is due at start + i/rate.
						if d := time.Until(start.Add(time.Duration(i) * time.Second / rate)); d > 0 {
							time.Sleep(d)
						}
						op := map[bool]string{true: "on", false: "off"}[on]
						on = !on
						req, _ := http.NewRequest("POST", h.URL+path+op, nil)
						req.Header.Set("Authorization", h.AdminToken)
						res, err := h.Client.Do(req)
						if err != nil || res.StatusCode != 200 {
							failed.Add(1)
						} else {
							acks[c] = append(acks[c], time.Now())
						}
						if res != nil {
							_, _ = io.Copy(io.Discard, res.Body)
							res.Body.Close()
						}
					}
				}(c, paths[c])
			}
			wg.Wait()
			sent := time.Since(start)
			last := lastEventID(b, h)
			events := int(last - before)
			deadline := time.Now().Add(60 * time.Second)
			for time.Now().Before(deadline) {
				done := true
				for _, rc := range receivers {
					if rc.count(before, last) < events {
						done = false
					}
				}
				if done {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			b.StopTimer()
			var all []time.Duration
			lost, dups := 0, 0
			for _, rc := range receivers {
				rc.mu.Lock()
				dups += rc.dups
				for id, d := range rc.arrived {
					if id > before && id <= last {
						all = append(all, d)
					}
				}
				rc.mu.Unlock()
			}
			lost = 3*events - len(all)
			// From the acknowledgement of each change (after its commit) to
			// its arrival: the k-th event of a flag is its k-th change.
			var fromAck []time.Duration
			for _, rc := range receivers {
				rc.mu.Lock()
				for c, name := range names {
					var got []arrival
					for _, a := range rc.byFlag[name] {
						if a.id > before && a.id <= last {
							got = append(got, a)
						}
					}
					for k := 0; k < len(got) && k < len(acks[c]); k++ {
						fromAck = append(fromAck, max(0, got[k].at.Sub(acks[c][k])))
					}
				}
				rc.mu.Unlock()
			}
			slices.Sort(fromAck)
			ackPct := func(p float64) float64 {
				if len(fromAck) == 0 {
					return 0
				}
				return float64(fromAck[min(len(fromAck)-1, int(p*float64(len(fromAck))))].Microseconds()) / 1000
			}
			b.ReportMetric(ackPct(0.50), "ack-p50-ms")
			b.ReportMetric(ackPct(0.99), "ack-p99-ms")
			slices.Sort(all)
			pct := func(p float64) float64 {
				if len(all) == 0 {
					return 0
				}
				return float64(all[min(len(all)-1, int(p*float64(len(all))))].Microseconds()) / 1000
			}
			b.ReportMetric(float64(events)/sent.Seconds(), "changes/s")
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
			b.ReportMetric(pct(1.0), "max-ms")
			b.ReportMetric(float64(lost), "lost")
			b.ReportMetric(float64(dups), "duplicates")
			b.Logf("%d changes in %s (%d failed), %d deliveries to 3 receivers, %d lost, %d duplicates; from the event's timestamp p50 %.1f ms, p99 %.1f ms, max %.1f ms; from the change's acknowledgement p50 %.1f ms, p99 %.1f ms",
				events, sent.Round(time.Millisecond), failed.Load(), len(all), lost, dups, pct(0.5), pct(0.99), pct(1), ackPct(0.5), ackPct(0.99))
			if lost > 0 || failed.Load() > 0 {
				b.Errorf("%d deliveries lost, %d changes failed", lost, failed.Load())
			}
		})
	}
}

// BenchmarkToggleIntegrations measures the toggles of BenchmarkToggle on a
// server without integrations, with five configured for other events (the
// write path: the outbox trigger finds no match), and with five that every
// toggle goes to (delivered to receivers on loopback while the toggles
// run, on the same cores), side by side: the variants alternate round by
// round, each on a fresh server. One client toggling is a person or a
// script at a time; sixteen saturate the machine, where the deliveries'
// requests and their receivers take CPU from the toggles.
func BenchmarkToggleIntegrations(b *testing.B) {
	variants := []struct {
		name   string
		n      int
		events []string
	}{
		{"none", 0, nil},
		{"five-other-events", 5, []string{"feature-archived"}},
		{"five-delivering", 5, []string{"feature-environment-enabled", "feature-environment-disabled"}},
	}
	for _, kind := range []string{"sqlite", "postgres"} {
		for round := range 3 {
			for _, clients := range []int{1, 16} {
				for _, v := range variants {
					b.Run(fmt.Sprintf("%s/round=%d/clients=%d/%s", kind, round, clients, v.name), func(b *testing.B) {
						db := servertest.NewSQLite(b)
						if kind == "postgres" {
							db = servertest.NewPostgres(b)
						}
						h := servertest.Start(b, db, allowLoopback)
						h.Client.Transport = &http.Transport{MaxIdleConnsPerHost: 64}
						for range v.n {
							rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
								_, _ = io.Copy(io.Discard, r.Body)
								w.WriteHeader(204)
							}))
							b.Cleanup(rc.Close)
							h.Do(b, "POST", "/api/admin/addons", h.AdminToken, map[string]any{"provider": "webhook", "events": v.events,
								"parameters": map[string]any{"url": rc.URL}}).Want(b, 201)
						}
						benchToggle(b, h, clients)
					})
				}
			}
		}
	}
}

// BenchmarkDeliveryHTTP is the floor of what delivering a toggle to five
// webhooks costs on this machine whatever Bunting does around it: the HTTP
// requests alone. It captures one real delivery (body and headers, as a
// toggle's webhook sends them), then posts it b.N times to each of five
// receivers like BenchmarkToggleIntegrations' (one client goroutine per
// receiver with keep-alive, as the lanes), and reports the CPU this
// process used (client and receiver together) per delivery.
func BenchmarkDeliveryHTTP(b *testing.B) {
	h := servertest.Start(b, servertest.NewSQLite(b), allowLoopback)
	got := make(chan *http.Request, 1)
	var body []byte
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		select {
		case got <- r:
			body = data
		default:
		}
		w.WriteHeader(204)
	}))
	b.Cleanup(rc.Close)
	h.Do(b, "POST", "/api/admin/addons", h.AdminToken, map[string]any{"provider": "webhook",
		"events": []string{"feature-environment-enabled"}, "parameters": map[string]any{"url": rc.URL}}).Want(b, 201)
	name := fmt.Sprintf("floor-%d", flagSeq.Add(1))
	h.Do(b, "POST", "/api/admin/projects/default/features", h.AdminToken, map[string]any{"name": name}).Want(b, 201)
	h.Do(b, "POST", "/api/admin/projects/default/features/"+name+"/environments/development/on", h.AdminToken, nil).Want(b, 200)
	var sample *http.Request
	select {
	case sample = <-got:
	case <-time.After(10 * time.Second):
		b.Fatal("no delivery arrived")
	}
	const receivers = 5
	var wg sync.WaitGroup
	cpuBefore := processCPU()
	b.ResetTimer()
	for range receivers {
		rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(204)
		}))
		b.Cleanup(rc.Close)
		client := &http.Client{Transport: &http.Transport{}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range b.N {
				req, _ := http.NewRequest("POST", rc.URL+"/", bytes.NewReader(body))
				req.Header = sample.Header.Clone()
				res, err := client.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	b.ReportMetric(float64((processCPU()-cpuBefore).Microseconds())/float64(receivers*b.N), "cpu-µs/delivery")
	b.ReportMetric(float64(len(body)), "body-bytes")
}
