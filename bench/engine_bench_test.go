package bench

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"testing"
	"time"

	unleash "github.com/Unleash/unleash-client-go/v4"
	sdkcontext "github.com/Unleash/unleash-client-go/v4/context"
	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/engine/enginetest"
)

// benchSizes are the payload sizes of the side-by-side benchmark.
var benchSizes = []int{10, 100, 1000}

// benchContexts is how many generated contexts the benchmarks cycle
// through (one context per operation).
const benchContexts = 64

// measurement is the outcome of one run of one benchmark.
type measurement struct {
	flags       int
	nsPerOp     float64
	allocsPerOp float64
	short       bool // from a calibration run
}

func (m measurement) nsPerFlag() float64 { return m.nsPerOp / float64(m.flags) }

// measurements holds, per implementation and size, the fastest full run;
// TestMain prints them side by side.
var measurements = map[string]map[int]measurement{}

// measure runs op b.N times, reports ns/flag and records the run.
func measure(b *testing.B, impl string, flags int, op func(i int)) {
	b.ReportAllocs()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	i := 0
	for b.Loop() {
		op(i)
		i++
	}
	runtime.ReadMemStats(&after)
	m := measurement{
		flags:       flags,
		nsPerOp:     float64(b.Elapsed().Nanoseconds()) / float64(b.N),
		allocsPerOp: float64(after.Mallocs-before.Mallocs) / float64(b.N),
	}
	b.ReportMetric(m.nsPerFlag(), "ns/flag")
	if measurements[impl] == nil {
		measurements[impl] = map[int]measurement{}
	}
	// Keep the fastest full-length run (with -count>1 on a shared machine
	// the fastest is the least disturbed); short calibration runs only
	// fill a gap.
	prev, seen := measurements[impl][flags]
	full := b.Elapsed() >= minFullRun
	if !seen || (full && (prev.short || m.nsPerOp < prev.nsPerOp)) {
		m.short = !full
		measurements[impl][flags] = m
	}
}

// minFullRun separates real runs from go test's calibration runs.
const minFullRun = 300 * time.Millisecond

// BenchmarkEvaluateAll evaluates every flag of a generated payload for one
// context per operation: Bunting with one EvaluateAll into a reused slice,
// the Go SDK with IsEnabled + GetVariant per flag (what a proxy needs per
// flag). Both get the same payload, rewritten to the operators v4.5.0
// supports (see sdkCompatible).
func BenchmarkEvaluateAll(b *testing.B) {
	ctxs := enginetest.Contexts(benchContexts)
	sdkCtxs := make([]sdkcontext.Context, len(ctxs))
	for i, c := range ctxs {
		sdkCtxs[i] = sdkContext(c)
	}
	for _, n := range benchSizes {
		payload := sdkCompatible(enginetest.Generate(n, 1))
		b.Run(fmt.Sprintf("flags=%d/impl=bunting", n), func(b *testing.B) {
			snap := engine.Compile(payload, engine.Options{Hostname: sdkHostname()})
			dst := make([]engine.Result, 0, n)
			measure(b, "bunting", n, func(i int) {
				dst = snap.EvaluateAll(ctxs[i%len(ctxs)], dst[:0])
			})
		})
		b.Run(fmt.Sprintf("flags=%d/impl=sdk", n), func(b *testing.B) {
			client := startSDK(b, payload, &unleash.NoopListener{})
			names := make([]string, len(payload.Features))
			for i, f := range payload.Features {
				names[i] = f.Name
			}
			measure(b, "sdk", n, func(i int) {
				ctx := sdkCtxs[i%len(sdkCtxs)]
				for _, name := range names {
					client.IsEnabled(name, unleash.WithContext(ctx))
					client.GetVariant(name, unleash.WithVariantContext(ctx))
				}
			})
		})
	}
}

// TestMain runs the tests and benchmarks, then prints the side-by-side
// table when benchmarks ran.
func TestMain(m *testing.M) {
	code := m.Run()
	printTable(os.Stdout)
	os.Exit(code)
}

// printTable writes the Markdown table of docs/benchmarks.md's engine
// section from the recorded measurements.
func printTable(w io.Writer) {
	ours, sdk := measurements["bunting"], measurements["sdk"]
	if len(ours) == 0 || len(sdk) == 0 {
		return
	}
	fmt.Fprintf(w, "\nEvaluate all flags for one context: Bunting EvaluateAll vs unleash-client-go v4.5.0 IsEnabled+GetVariant per flag (%s/%s, GOMAXPROCS=%d, fastest run of each)\n\n",
		runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0))
	fmt.Fprintln(w, "| flags | Bunting ns/op | Bunting allocs/op | Bunting ns/flag | Go SDK ns/op | Go SDK allocs/op | Go SDK ns/flag | speed-up per flag |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|")
	sizes := make([]int, 0, len(ours))
	for n := range ours {
		sizes = append(sizes, n)
	}
	slices.Sort(sizes)
	for _, n := range sizes {
		o := ours[n]
		s, ok := sdk[n]
		if !ok {
			continue
		}
		fmt.Fprintf(w, "| %d | %.0f | %.1f | %.1f | %.0f | %.0f | %.1f | %.1f× |\n",
			n, o.nsPerOp, o.allocsPerOp, o.nsPerFlag(), s.nsPerOp, s.allocsPerOp, s.nsPerFlag(), s.nsPerFlag()/o.nsPerFlag())
	}
}
