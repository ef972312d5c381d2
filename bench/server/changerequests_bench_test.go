package serverbench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

const crProject = "/api/admin/projects/default"

// loadAverage is the machine's one-minute load average (0 when unknown):
// the figures are reported with it, since the machine is shared.
func loadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return 0
	}
	var l float64
	_, _ = fmt.Sscan(strings.Fields(string(b))[0], &l)
	return l
}

// percentile is the p-th percentile of ds (sorted in place).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	i := int(float64(len(ds)-1) * p)
	return ds[i]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// crSetup turns change requests on in production and makes two editors.
func crSetup(b *testing.B, h *servertest.Harness) (alice, bob string) {
	alice, bob = h.UserToken(b, "alice", "Editor"), h.UserToken(b, "bob", "Editor")
	h.Do(b, "PUT", crProject+"/environments/production/change-requests/config", h.AdminToken,
		map[string]any{"changeRequestsEnabled": true, "requiredApprovals": 1}).Want(b, 204)
	return alice, bob
}

// approved drafts changes as alice, sends them to review and has bob
// approve them; it returns the request's id.
func approved(b *testing.B, h *servertest.Harness, alice, bob string, changes []map[string]any) int64 {
	var v struct{ ID int64 }
	h.Do(b, "POST", crProject+"/environments/production/change-requests", alice, changes).Want(b, 200).JSON(b, &v)
	state := fmt.Sprintf("%s/change-requests/%d/state", crProject, v.ID)
	h.Do(b, "PUT", state, alice, map[string]any{"state": "In review"}).Want(b, 200)
	h.Do(b, "PUT", state, bob, map[string]any{"state": "Approved"}).Want(b, 200)
	return v.ID
}

// BenchmarkApplyChangeRequest applies approved requests of 50 changes (25
// flags switched, 25 flags' variants replaced), each in one transaction,
// and, side by side in alternating rounds, makes the same 50 changes
// directly (50 admin API calls, as the admin, who may skip change
// requests). It reports p50 and p99 of one application (and of the 50
// direct calls together), the CPU this process used for each (server and
// client; not PostgreSQL's processes), on SQLite and PostgreSQL, with the
// load average.
func BenchmarkApplyChangeRequest(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			db := servertest.NewSQLite(b)
			if kind == "postgres" {
				db = servertest.NewPostgres(b)
			}
			h := servertest.Start(b, db)
			alice, bob := crSetup(b, h)
			const flags = 25
			for i := range flags {
				for _, kind := range []string{"sw", "va"} {
					h.Do(b, "POST", crProject+"/features", h.AdminToken, map[string]any{"name": fmt.Sprintf("%s-%02d", kind, i)}).Want(b, 201)
				}
			}
			changes := func(round int) []map[string]any {
				var out []map[string]any
				for i := range flags {
					out = append(out,
						map[string]any{"feature": fmt.Sprintf("sw-%02d", i), "action": "updateEnabled", "payload": map[string]any{"enabled": round%2 == 0}},
						map[string]any{"feature": fmt.Sprintf("va-%02d", i), "action": "patchVariant", "payload": map[string]any{"variants": []any{
							map[string]any{"name": fmt.Sprintf("v%d", round), "weight": 1000, "weightType": "variable", "stickiness": "default"}}}})
				}
				return out
			}
			direct := func(round int) {
				for _, c := range changes(round) {
					path := fmt.Sprintf("%s/features/%s/environments/production", crProject, c["feature"])
					if c["action"] == "updateEnabled" {
						op := "off"
						if c["payload"].(map[string]any)["enabled"] == true {
							op = "on"
						}
						h.Do(b, "POST", path+"/"+op, h.AdminToken, nil).Want(b, 200)
					} else {
						h.Do(b, "PUT", path+"/variants", h.AdminToken, c["payload"].(map[string]any)["variants"]).Want(b, 200)
					}
				}
			}
			load := loadAverage()
			var viaRequest, viaDirect []time.Duration
			var cpuRequest, cpuDirect time.Duration
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				id := approved(b, h, alice, bob, changes(2*i))
				b.StartTimer()
				start, cpu := time.Now(), processCPU()
				h.Do(b, "PUT", fmt.Sprintf("%s/change-requests/%d/state", crProject, id), alice, map[string]any{"state": "Applied"}).Want(b, 200)
				viaRequest = append(viaRequest, time.Since(start))
				cpuRequest += processCPU() - cpu
				b.StopTimer()
				start, cpu = time.Now(), processCPU()
				direct(2*i + 1)
				viaDirect = append(viaDirect, time.Since(start))
				cpuDirect += processCPU() - cpu
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(ms(percentile(viaRequest, .5)), "apply-p50-ms")
			b.ReportMetric(ms(percentile(viaRequest, .99)), "apply-p99-ms")
			b.ReportMetric(ms(percentile(viaDirect, .5)), "direct50-p50-ms")
			b.ReportMetric(ms(percentile(viaDirect, .99)), "direct50-p99-ms")
			b.ReportMetric(ms(cpuRequest)/float64(b.N), "apply-cpu-ms")
			b.ReportMetric(ms(cpuDirect)/float64(b.N), "direct50-cpu-ms")
			b.ReportMetric((load+loadAverage())/2, "load-avg")
		})
	}
}

// BenchmarkScheduledApplication schedules 100 approved requests (one
// change each) a few seconds ahead, 30 ms apart (a burst: more than the
// scheduler applies per second on a loaded machine) or 250 ms apart (one at
// a time), and measures when each
// becomes visible (committed, seen by a watcher woken by every commit)
// after its scheduledAt: p50, p99 and the latest, on SQLite and
// PostgreSQL, with the load average. Every request must apply exactly
// once.
func BenchmarkScheduledApplication(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		for _, gap := range []time.Duration{30 * time.Millisecond, 250 * time.Millisecond} {
			b.Run(fmt.Sprintf("%s/gap=%v", kind, gap), func(b *testing.B) { benchScheduled(b, kind, gap) })
		}
	}
}

func benchScheduled(b *testing.B, kind string, gap time.Duration) {
	{
		{
			db := servertest.NewSQLite(b)
			if kind == "postgres" {
				db = servertest.NewPostgres(b)
			}
			h := servertest.Start(b, db)
			alice, bob := crSetup(b, h)
			const n = 100
			for range b.N {
				b.StopTimer()
				ids := make([]int64, n)
				for i := range n {
					name := fmt.Sprintf("sched-%d-%d", time.Now().UnixNano(), i)
					h.Do(b, "POST", crProject+"/features", h.AdminToken, map[string]any{"name": name}).Want(b, 201)
					ids[i] = approved(b, h, alice, bob, []map[string]any{{"feature": name, "action": "updateEnabled", "payload": map[string]any{"enabled": true}}})
				}
				load := loadAverage()
				first := time.Now().Add(3 * time.Second).Truncate(time.Millisecond)
				at := map[int64]time.Time{}
				for i, id := range ids {
					at[id] = first.Add(time.Duration(i) * gap)
				}
				seen := watchApplied(h, ids)
				for _, id := range ids {
					h.Do(b, "PUT", fmt.Sprintf("%s/change-requests/%d/state", crProject, id), alice,
						map[string]any{"state": "Scheduled", "scheduledAt": at[id].UTC().Format(time.RFC3339Nano)}).Want(b, 200)
				}
				b.StartTimer()
				got := seen(first.Add(n*gap + 10*time.Second))
				b.StopTimer()
				if len(got) != n {
					b.Fatalf("%d of %d scheduled requests applied", len(got), n)
				}
				var late []time.Duration
				for id, t := range got {
					late = append(late, t.Sub(at[id]))
				}
				b.ReportMetric(ms(percentile(late, .5)), "late-p50-ms")
				b.ReportMetric(ms(percentile(late, .99)), "late-p99-ms")
				b.ReportMetric(ms(percentile(late, 1)), "late-max-ms")
				b.ReportMetric((load+loadAverage())/2, "load-avg")
			}
			var count int
			err := h.Store.Tx(context.Background(), func(tx *store.Tx) error {
				var err error
				count, err = tx.CountChangeRequests(store.ChangeRequestFilter{States: []string{store.CRApplied}})
				return err
			})
			if err != nil || count != n*b.N {
				b.Fatalf("%d requests applied (%v), want %d", count, err, n*b.N)
			}
		}
	}
}

// watchApplied records when each of ids is first seen applied, looking
// after every commit (and every 5 ms); the returned function waits until
// all are, or until deadline, and returns the times.
func watchApplied(h *servertest.Harness, ids []int64) func(deadline time.Time) map[int64]time.Time {
	var (
		mu   sync.Mutex
		seen = map[int64]time.Time{}
		done = make(chan struct{})
	)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			changes := h.Store.Changes()
			crs, err := h.Store.Q(ctx).ChangeRequests(store.ChangeRequestFilter{States: []string{store.CRApplied}})
			now := time.Now()
			if err == nil {
				mu.Lock()
				for _, cr := range crs {
					if _, ok := seen[cr.ID]; !ok && slices.Contains(ids, cr.ID) {
						seen[cr.ID] = now
					}
				}
				all := len(seen) == len(ids)
				mu.Unlock()
				if all {
					return
				}
			}
			select {
			case <-ctx.Done():
			case <-changes:
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func(deadline time.Time) map[int64]time.Time {
		select {
		case <-done:
		case <-time.After(time.Until(deadline)):
			cancel()
			<-done
		}
		cancel()
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}
