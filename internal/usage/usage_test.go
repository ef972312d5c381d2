package usage_test

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/usage"
)

// oneFlag is a configuration of one flag, f1, with the variant blue.
type oneFlag struct{}

func (oneFlag) Flag(name string) (string, bool) {
	if name == "f1" {
		return "f1", true
	}
	return "", false
}

func (oneFlag) Variant(flag, v string) (string, bool) {
	if v == "blue" || v == "disabled" {
		return v, true
	}
	return "", false
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
		b := &usage.MetricsBody{AppName: fmt.Sprintf("%s-app-%07d-%s", prefix, i, "padding-to-look-like-a-real-name"),
			InstanceID: fmt.Sprintf("%s-instance-%07d", prefix, i), SDKVersion: "unleash-client-js:3.7.0",
			Bucket: &usage.Bucket{Toggles: map[string]usage.ToggleCounts{
				"f1":                      {Yes: 1, No: 1, Variants: map[string]int64{"blue": 1}},
				fmt.Sprint("made-up-", i): {Yes: 1},
			}}}
		if err := jsonTime(&b.Bucket.Stop, stop); err != nil {
			t.Fatal(err)
		}
		if err := s.AddMetrics(b, src, oneFlag{}); err != nil {
			t.Fatal(err)
		}
		if i%10_000 == 9_999 {
			maxHeap, maxKeys = max(maxHeap, heap()), max(maxKeys, s.PendingKeys())
		}
	}
	return maxHeap, max(maxKeys, s.PendingKeys())
}

func jsonTime(dst *usage.Time, v string) error { return dst.UnmarshalJSON([]byte(`"` + v + `"`)) }

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
