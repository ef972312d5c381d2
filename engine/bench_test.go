package engine_test

import (
	"fmt"
	"testing"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/engine/enginetest"
)

// BenchmarkEvaluateAll evaluates every flag of a generated payload for one
// context, reusing the result slice as the proxy does.
func BenchmarkEvaluateAll(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("flags=%d", n), func(b *testing.B) {
			snap := engine.Compile(enginetest.Generate(n, 1), engine.Options{})
			benchmarkPerFlag(b, n, snap.EvaluateAll)
		})
	}
}

// BenchmarkEvaluate evaluates one flag by name.
func BenchmarkEvaluate(b *testing.B) {
	snap := engine.Compile(enginetest.Generate(1000, 1), engine.Options{})
	ctx := enginetest.Context()
	name := snap.Name(500)
	b.ReportAllocs()
	for b.Loop() {
		snap.Evaluate(name, ctx)
	}
}

// BenchmarkCompile compiles a generated payload.
func BenchmarkCompile(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("flags=%d", n), func(b *testing.B) {
			cf := enginetest.Generate(n, 1)
			b.ReportAllocs()
			for b.Loop() {
				engine.Compile(cf, engine.Options{Hostname: "bench"})
			}
		})
	}
}

// BenchmarkEvaluateAllColdCache is BenchmarkEvaluateAll at 1000 flags with
// the CPU caches flushed before each call (by writing a buffer larger than
// them, not timed), as in a server where the network stack and other
// processes run between requests: it measures how compactly the snapshot
// lies in memory.
func BenchmarkEvaluateAllColdCache(b *testing.B) {
	const n = 1000
	snap := engine.Compile(enginetest.Generate(n, 1), engine.Options{})
	benchmarkCold(b, n, 8<<20, func(ctx *engine.Context, dst []engine.Result) []engine.Result {
		return snap.EvaluateAll(ctx, dst)
	})
}

// BenchmarkEvaluateAllIDsWarmCache is BenchmarkEvaluateAllIDs with 2 MB
// written between calls (not timed): more than the per-core caches hold
// and less than a shared last-level cache, roughly what a proxy answering
// large responses over loopback sees between two requests.
func BenchmarkEvaluateAllIDsWarmCache(b *testing.B) {
	const n = 1000
	snap := engine.Compile(enginetest.Generate(n, 1), engine.Options{})
	benchmarkCold(b, n, 2<<20, func(ctx *engine.Context, dst []engine.VariantID) []engine.VariantID {
		return snap.EvaluateAllIDs(ctx, dst)
	})
}

// benchmarkCold runs evaluate for the 64 generated contexts in turn,
// writing evictBytes of memory before each call (not timed), and reports
// the time per flag.
func benchmarkCold[T any](b *testing.B, n, evictBytes int, evaluate func(*engine.Context, []T) []T) {
	ctxs := enginetest.Contexts(64)
	dst := make([]T, 0, n)
	evict := make([]byte, evictBytes)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		b.StopTimer()
		for j := 0; j < len(evict); j += 64 {
			evict[j]++
		}
		b.StartTimer()
		dst = evaluate(ctxs[i%len(ctxs)], dst[:0])
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/flag")
}

// BenchmarkEvaluateAllIDs is BenchmarkEvaluateAll at 1,000 flags in the
// compact form the proxy uses (one variant ID per flag, not a Result).
func BenchmarkEvaluateAllIDs(b *testing.B) {
	const n = 1000
	snap := engine.Compile(enginetest.Generate(n, 1), engine.Options{})
	benchmarkPerFlag(b, n, func(ctx *engine.Context, dst []engine.VariantID) []engine.VariantID {
		return snap.EvaluateAllIDs(ctx, dst)
	})
}

// benchmarkPerFlag runs evaluate for the 64 generated contexts in turn,
// reusing its output slice, and reports the time per flag.
func benchmarkPerFlag[T any](b *testing.B, n int, evaluate func(*engine.Context, []T) []T) {
	ctxs := enginetest.Contexts(64)
	dst := make([]T, 0, n)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		dst = evaluate(ctxs[i%len(ctxs)], dst[:0])
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/flag")
}
