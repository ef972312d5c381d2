package usage_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/usage"
)

// oneFlag is a configuration of one flag, f1, with the variant blue.
type oneFlag struct{}

var f1 = &usage.KnownFlag{Name: "f1", Variants: []string{"blue"}}

func (oneFlag) Flag(name []byte) (*usage.KnownFlag, bool) {
	if string(name) == "f1" {
		return f1, true
	}
	return nil, false
}

// heap is the live heap after a collection.
func heap() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// flood posts n reports, each from an application name and instance id
// never seen before, of the known flag and of a made-up one, and returns
// the largest live heap and pending key count seen meanwhile.
func flood(t *testing.T, s *usage.Service, prefix string, n int) (maxHeap int64, maxKeys int) {
	t.Helper()
	src := usage.Source{Environment: "development", Projects: []string{"default"}, SDKType: "frontend", ClientIP: "192.0.2.1"}
	stop := time.Now().UTC().Format(time.RFC3339)
	for i := range n {
		b, _ := json.Marshal(map[string]any{"appName": fmt.Sprintf("%s-app-%07d-%s", prefix, i, "padding-to-look-like-a-real-name"),
			"instanceId": fmt.Sprintf("%s-instance-%07d", prefix, i), "sdkVersion": "unleash-client-js:3.7.0",
			"bucket": map[string]any{"start": stop, "stop": stop, "toggles": map[string]any{
				"f1":                      map[string]any{"yes": 1, "no": 1, "variants": map[string]any{"blue": 1}},
				fmt.Sprint("made-up-", i): map[string]any{"yes": 1},
			}}})
		if err := s.AddMetrics(b, src, oneFlag{}); err != nil {
			t.Fatal(err)
		}
		if i%10_000 == 9_999 {
			maxHeap, maxKeys = max(maxHeap, heap()), max(maxKeys, s.PendingKeys())
		}
	}
	return maxHeap, max(maxKeys, s.PendingKeys())
}

// Memory for pending usage stays bounded under a flood of 100,000
// distinct application names and instance ids (what any holder of the
// public frontend token can post): first while nothing drains the pending
// counts (a stalled database), then with the flush loop writing them as
// fast as it can. The pending keys never exceed twice the cap, the live
// heap grows by a bounded amount, and what no longer fits is dropped and
// counted.
func TestPendingMemoryBoundedUnderDistinctNames(t *testing.T) {
	if testing.Short() {
		t.Skip("floods the collector with 200,000 reports")
	}
	st := servertest.OpenStore(t, servertest.NewSQLite(t))
	cfg := usage.DefaultConfig()
	s := usage.New(cfg, st, nil)
	base := heap()
	limit := int64(2*cfg.MaxPendingKeys) * 1024 // 1 kB per key, generously

	// Nothing writes: past twice the cap, new keys are dropped.
	stalledHeap, stalledKeys := flood(t, s, "stalled", 100_000)
	t.Logf("stalled: at most %d pending keys, heap +%.1f MB, %d keys dropped", stalledKeys, mb(stalledHeap-base), s.Dropped())
	if stalledKeys > 2*cfg.MaxPendingKeys {
		t.Errorf("%d keys pending, want at most %d", stalledKeys, 2*cfg.MaxPendingKeys)
	}
	if stalledHeap > base+limit {
		t.Errorf("the heap grew by %.1f MB with nothing written, want at most %.1f MB", mb(stalledHeap-base), mb(limit))
	}
	if s.Dropped() == 0 {
		t.Error("nothing was dropped, though 100,000 applications cannot fit")
	}

	// The flush loop drains while the flood goes on.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	drainingHeap, drainingKeys := flood(t, s, "draining", 100_000)
	cancel()
	<-done
	t.Logf("draining: at most %d pending keys, heap +%.1f MB, %d keys dropped in all", drainingKeys, mb(drainingHeap-base), s.Dropped())
	if drainingKeys > 2*cfg.MaxPendingKeys {
		t.Errorf("%d keys pending, want at most %d", drainingKeys, 2*cfg.MaxPendingKeys)
	}
	if drainingHeap > base+limit {
		t.Errorf("the heap grew by %.1f MB while draining, want at most %.1f MB", mb(drainingHeap-base), mb(limit))
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := s.PendingKeys(); n != 0 {
		t.Errorf("%d keys pending after a flush", n)
	}
	var apps int
	if err := st.DB().QueryRow(`SELECT COUNT(*) FROM applications`).Scan(&apps); err != nil {
		t.Fatal(err)
	}
	if apps == 0 {
		t.Error("no application was written")
	}
	t.Logf("%d applications written", apps)
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// BenchmarkAddMetrics decodes and counts a 50-flag report (yes/no counts
// and two variants each) from one of 16 instances of four applications:
// the work a metrics post does besides HTTP.
func BenchmarkAddMetrics(b *testing.B) {
	st := servertest.OpenStore(b, servertest.NewSQLite(b))
	s := usage.New(usage.DefaultConfig(), st, nil)
	known := map[string]*usage.KnownFlag{}
	var bodies [][]byte
	for i := range 16 {
		toggles := map[string]any{}
		for j := range 50 {
			name := fmt.Sprintf("flag-%03d-of-the-benchmark", j)
			known[name] = &usage.KnownFlag{Name: name, Variants: []string{"blue", "green"}}
			toggles[name] = map[string]any{"yes": 1 + (i+j)%17, "no": (i * j) % 5, "variants": map[string]int{"blue": 1, "green": 2}}
		}
		body, _ := json.Marshal(map[string]any{"appName": fmt.Sprint("app-", i%4), "instanceId": fmt.Sprint("instance-", i), "sdkVersion": "unleash-client-node:6.1.0",
			"bucket": map[string]any{"start": time.Now().UTC().Format(time.RFC3339), "stop": time.Now().UTC().Format(time.RFC3339), "toggles": toggles}})
		bodies = append(bodies, body)
	}
	flags := mapFlags(known)
	src := usage.Source{Environment: "development", Projects: []string{"default"}, SDKType: "backend", ClientIP: "127.0.0.1"}
	b.SetBytes(int64(len(bodies[0])))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := s.AddMetrics(bodies[i%len(bodies)], src, flags); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// mapFlags is a configuration held in a map.
type mapFlags map[string]*usage.KnownFlag

func (m mapFlags) Flag(name []byte) (*usage.KnownFlag, bool) {
	f, ok := m[string(name)]
	return f, ok
}
