package engine_test

import (
	"encoding/json"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/engine/enginetest"
)

// TestHugePayload compiles and evaluates 10,000 generated flags, after a
// JSON round trip like a real payload.
func TestHugePayload(t *testing.T) {
	n := 10000
	if raceEnabled {
		n = 1000 // the race pass is about concurrency; the plain pass runs 10,000
	}
	data, err := json.Marshal(enginetest.Generate(n, 7))
	if err != nil {
		t.Fatal(err)
	}
	var cf engine.ClientFeatures
	if err := json.Unmarshal(data, &cf); err != nil {
		t.Fatal(err)
	}
	snap := engine.Compile(&cf, engine.Options{})
	if snap.Len() != n {
		t.Fatalf("Len = %d", snap.Len())
	}
	var dst []engine.Result
	on := 0
	for _, ctx := range enginetest.Contexts(10) {
		dst = snap.EvaluateAll(ctx, dst[:0])
		if len(dst) != n {
			t.Fatalf("EvaluateAll returned %d results", len(dst))
		}
		for i, r := range dst {
			if r.Index != i || r.Name != snap.Name(i) || !r.Found || r.Variant == nil {
				t.Fatalf("result %d: %+v", i, r)
			}
			if r.Variant.FeatureEnabled != r.Enabled || snap.Variant(r.Variant.ID) != r.Variant {
				t.Fatalf("result %d: inconsistent variant %+v", i, *r.Variant)
			}
			if r.Enabled {
				on++
			}
		}
	}
	// A realistic mix is neither all on nor all off.
	if on < n || on > 9*n {
		t.Errorf("%d of %d evaluations enabled", on, 10*n)
	}
}

// TestEvaluateAllMatchesEvaluate: EvaluateAll and EvaluateIndex agree for
// every generated flag when the context has every stickiness field, so no
// result depends on randomness.
func TestEvaluateAllMatchesEvaluate(t *testing.T) {
	snap := engine.Compile(enginetest.Generate(500, 3), engine.Options{})
	for _, ctx := range enginetest.Contexts(20) {
		if ctx.UserID == "" {
			continue // userId stickiness without a userId is random
		}
		all := snap.EvaluateAll(ctx, nil)
		for i, r := range all {
			one := snap.EvaluateIndex(i, ctx)
			if one.Enabled != r.Enabled || one.Variant != r.Variant {
				t.Fatalf("flag %s: EvaluateAll %v/%s, EvaluateIndex %v/%s", r.Name, r.Enabled, r.Variant.Name, one.Enabled, one.Variant.Name)
			}
		}
	}
}

// TestGenerateDeterministic: the same size and seed give the same payload.
func TestGenerateDeterministic(t *testing.T) {
	a, b := enginetest.Generate(200, 9), enginetest.Generate(200, 9)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("Generate is not deterministic")
	}
	if reflect.DeepEqual(a, enginetest.Generate(200, 10)) {
		t.Fatal("Generate ignores the seed")
	}
	if !reflect.DeepEqual(enginetest.Contexts(5), enginetest.Contexts(5)) {
		t.Fatal("Contexts is not deterministic")
	}
	ops := map[string]bool{}
	strategies := map[string]bool{}
	for _, f := range a.Features {
		for _, s := range f.Strategies {
			strategies[s.Name] = true
			for _, c := range s.Constraints {
				ops[c.Operator] = true
			}
		}
	}
	for _, op := range []string{"IN", "NOT_IN", "STR_ENDS_WITH", "STR_STARTS_WITH", "STR_CONTAINS", "NUM_EQ", "NUM_GT",
		"NUM_GTE", "NUM_LT", "NUM_LTE", "DATE_AFTER", "DATE_BEFORE", "SEMVER_EQ", "SEMVER_GT", "SEMVER_GTE",
		"SEMVER_LT", "SEMVER_LTE", "REGEX", "IN_CIDR"} {
		if !ops[op] {
			t.Errorf("Generate(200) has no %s constraint", op)
		}
	}
	for _, s := range []string{"flexibleRollout", "default", "userWithId", "remoteAddress", "gradualRolloutUserId"} {
		if !strategies[s] {
			t.Errorf("Generate(200) has no %s strategy", s)
		}
	}
}

// TestEvaluateAllAllocations: with a reused result slice, EvaluateAll
// allocates nothing, whatever the number of flags (on average at most one
// allocation per call, for when the GC empties the memo pool).
func TestEvaluateAllAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	ctx := enginetest.Context()
	perCall := map[int]float64{}
	for _, n := range []int{10, 1000, 5000} {
		snap := engine.Compile(enginetest.Generate(n, 1), engine.Options{})
		dst := make([]engine.Result, 0, n)
		perCall[n] = testing.AllocsPerRun(20, func() { dst = snap.EvaluateAll(ctx, dst[:0]) })
	}
	for n, allocs := range perCall {
		if allocs > 1 {
			t.Errorf("EvaluateAll over %d flags: %v allocations per call, want 0", n, allocs)
		}
	}
	snap := engine.Compile(enginetest.Generate(1000, 1), engine.Options{})
	if allocs := testing.AllocsPerRun(100, func() { snap.Evaluate(snap.Name(10), ctx) }); allocs != 0 {
		t.Errorf("Evaluate: %v allocations", allocs)
	}
}

// TestConcurrentEvaluationAndSwap evaluates one snapshot from many
// goroutines while new snapshots are swapped in through an atomic pointer,
// the way the proxy serves while it syncs. Run it with -race.
func TestConcurrentEvaluationAndSwap(t *testing.T) {
	var current atomic.Pointer[engine.Snapshot]
	current.Store(engine.Compile(enginetest.Generate(200, 0), engine.Options{}))
	ctxs := enginetest.Contexts(32)
	const swaps = 20
	var done atomic.Bool
	var wg sync.WaitGroup
	workers := 2 * runtime.GOMAXPROCS(0)
	errs := make(chan string, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var dst []engine.Result
			for i := 0; !done.Load() || i < 50; i++ {
				snap := current.Load()
				ctx := ctxs[(w+i)%len(ctxs)]
				dst = snap.EvaluateAll(ctx, dst[:0])
				for _, r := range dst {
					if snap.Variant(r.Variant.ID) != r.Variant || r.Variant.FeatureEnabled != r.Enabled {
						errs <- "result variant does not belong to its snapshot"
						return
					}
				}
				snap.Evaluate(snap.Name(i%snap.Len()), ctx)
			}
		}()
	}
	for seed := range int64(swaps) {
		current.Store(engine.Compile(enginetest.Generate(200+int(seed), seed+1), engine.Options{}))
		runtime.Gosched()
	}
	done.Store(true)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}

// TestEvaluateAllCustomStrategiesAndDependencies: in a payload large enough
// for EvaluateAll to decide flags in rounds, flags with custom strategies
// and dependencies (decided one at a time) agree with EvaluateIndex, and a
// custom strategy is not called for a flag whose dependency fails or after
// an earlier strategy of its flag said yes.
func TestEvaluateAllCustomStrategiesAndDependencies(t *testing.T) {
	calls := map[string]int{}
	opts := engine.Options{CustomStrategies: map[string]engine.CustomStrategy{
		"byPlan": customFunc(func(p map[string]string, ctx *engine.Context) (bool, error) {
			calls[p["flag"]]++
			return ctx.Properties["plan"] == p["plan"], nil
		}),
	}}
	payload := enginetest.Generate(300, 11)
	off := false
	for i := range payload.Features {
		f := &payload.Features[i]
		switch i % 7 {
		case 0: // custom strategy first
			f.Strategies = append([]engine.Strategy{{Name: "byPlan", Parameters: engine.Parameters{"flag": f.Name, "plan": "pro"}}}, f.Strategies...)
		case 1: // custom strategy after one that always says yes: never called
			f.Enabled, f.Dependencies = true, nil
			f.Strategies = []engine.Strategy{{Name: "default"}, {Name: "byPlan", Parameters: engine.Parameters{"flag": f.Name, "plan": "free"}}}
		case 2: // custom strategy behind a dependency that fails: never called
			f.Enabled = true
			f.Dependencies = []engine.Dependency{{Feature: payload.Features[1].Name, Enabled: &off}}
			f.Strategies = []engine.Strategy{{Name: "byPlan", Parameters: engine.Parameters{"flag": f.Name, "plan": "free"}}}
		}
	}
	snap := engine.Compile(payload, opts)
	for _, ctx := range enginetest.Contexts(10) {
		if ctx.UserID == "" {
			continue // userId stickiness without a userId is random
		}
		clear(calls)
		all := snap.EvaluateAll(ctx, nil)
		for name, n := range calls {
			i, _ := snap.Index(name)
			if i%7 != 0 || n != 1 {
				t.Fatalf("custom strategy of flag %d (%s) called %d times", i, name, n)
			}
		}
		for i, r := range all {
			one := snap.EvaluateIndex(i, ctx)
			if one.Enabled != r.Enabled || one.Variant != r.Variant {
				t.Fatalf("flag %s: EvaluateAll %v/%s, EvaluateIndex %v/%s", r.Name, r.Enabled, r.Variant.Name, one.Enabled, one.Variant.Name)
			}
		}
	}
}

// TestEvaluateAllIDsTargetedMatchesEvaluateTargeted: the winners reported
// by the all-flags evaluation for flags on without a variant are the
// one-flag path's, with and without a plan, and the outcomes are
// EvaluateAllIDs'.
func TestEvaluateAllIDsTargetedMatchesEvaluateTargeted(t *testing.T) {
	for _, n := range []int{40, 500} {
		snap := engine.Compile(enginetest.Generate(n, 5), engine.Options{})
		ask := make([]int32, n)
		for i := range ask {
			ask[i] = int32(i)
		}
		seen := [2]int{}
		for _, ctx := range enginetest.Contexts(20) {
			if ctx.UserID == "" {
				continue // userId stickiness without a userId is random
			}
			ids, targeted := snap.EvaluateAllIDsTargeted(ctx, nil, ask[1:], nil)
			if want := snap.EvaluateAllIDs(ctx, nil); !reflect.DeepEqual(ids, want) {
				t.Fatalf("%d flags: outcomes differ from EvaluateAllIDs", n)
			}
			if len(targeted) != n-1 {
				t.Fatalf("%d flags: %d answers for %d flags asked", n, len(targeted), n-1)
			}
			for k, i := range ask[1:] {
				res, want := snap.EvaluateTargeted(int(i), ctx)
				want = want && ids[i] == engine.NoVariantID
				if targeted[k] != want || engine.VariantID(res.Variant.ID) != ids[i] && res.Enabled {
					t.Fatalf("%d flags, flag %d: targeted %v, EvaluateTargeted %v", n, i, targeted[k], want)
				}
				if res.Enabled {
					seen[b2i(want)]++
				}
			}
		}
		if seen[0] == 0 || seen[1] == 0 {
			t.Fatalf("%d flags: the fixture must turn flags on both by targeted and untargeted strategies, got %v", n, seen)
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
