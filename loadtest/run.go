package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/engine/enginetest"
)

// row is one measured scenario.
type row struct {
	scenario  string
	flags     int
	bodyBytes int
	ours      loadResult
	baseline  loadResult
	// roundRatios are ours/baseline of each pair of alternating slices.
	roundRatios []float64
	target      float64
}

// ratio is the median of the per-round ratios: a burst of other work on the
// shared machine spoils one round, not the figure.
func (r row) ratio() float64 {
	if len(r.roundRatios) == 0 {
		return 0
	}
	sorted := slices.Sorted(slices.Values(r.roundRatios))
	mid := len(sorted) / 2
	if len(sorted)%2 == 1 {
		return sorted[mid]
	}
	return (sorted[mid-1] + sorted[mid]) / 2
}

// memory is the proxy's resident memory after the load at one flag count.
type memory struct {
	flags      int
	idle       int64 // after the first sync, before any load
	after      memStats
	afterGzip  memStats // after the compressed scenarios too
	targetRSS  int64
	measuredOK bool
}

// report is everything one run measured.
type report struct {
	cfg    config
	rows   []row
	memory []memory
	usage  *usageReport
}

// rssTarget is the resident-memory goal with 1,000 flags.
const rssTarget = 30 << 20

// run measures the proxy at every flag count and then, unless disabled,
// the server's client-features endpoint. Progress goes to progress.
func run(cfg config, progress io.Writer) (*report, error) {
	dir, err := os.MkdirTemp("", "bunting-loadtest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := cfg.bunting
	if bin == "" {
		fmt.Fprintln(progress, "building bunting…")
		if bin, err = buildBunting(cfg.repo, dir); err != nil {
			return nil, err
		}
	}
	rep := &report{cfg: cfg}
	for _, n := range cfg.flagCounts {
		if err := runFlagCount(cfg, bin, dir, n, rep, progress); err != nil {
			return nil, fmt.Errorf("%d flags: %w", n, err)
		}
	}
	if cfg.serverFlags > 0 {
		if err := runServerBenchmark(cfg, bin, dir, cfg.serverFlags, rep, progress); err != nil {
			return nil, fmt.Errorf("server, %d flags: %w", cfg.serverFlags, err)
		}
	}
	if cfg.usageFlags > 0 {
		if err := runUsageBenchmark(cfg, bin, dir, rep, progress); err != nil {
			return nil, fmt.Errorf("usage, %d flags: %w", cfg.usageFlags, err)
		}
	}
	return rep, nil
}

// runFlagCount starts the fake upstream with n generated flags and the
// proxy against it, compares the proxy with its baseline and records the
// proxy's memory.
func runFlagCount(cfg config, bin, dir string, n int, rep *report, progress io.Writer) error {
	cf := enginetest.Generate(n, cfg.seed)
	upstream, stopUpstream, err := fakeUpstream(cf)
	if err != nil {
		return err
	}
	defer stopUpstream()
	proxyTmp, err := os.MkdirTemp(dir, fmt.Sprintf("proxy-%d-", n))
	if err != nil {
		return err
	}
	proxy, err := startProxy(bin, upstream, proxyTmp)
	if err != nil {
		return err
	}
	defer proxy.stop()
	idle, _ := proxy.mem()
	// Memory is read after the plain scenarios (the figure the target is
	// about, comparable with earlier runs) and again after the compressed
	// ones, which load the same process once more.
	all := slices.DeleteFunc(scenarios(cf), func(sc scenario) bool { return !cfg.wants(sc.name) })
	if len(all) == 0 {
		return fmt.Errorf("-only %q matches no scenario", strings.Join(cfg.only, ","))
	}
	plain := slices.DeleteFunc(slices.Clone(all), func(sc scenario) bool { return sc.against != nil })
	compressed := slices.DeleteFunc(all, func(sc scenario) bool { return sc.against == nil })
	if len(plain) > 0 {
		if err := compare(cfg, dir, fmt.Sprintf("proxy-%d", n), n, proxy, plain, rep, progress); err != nil {
			return err
		}
	}
	after, err := proxy.mem()
	m := memory{flags: n, idle: idle.rss, after: after, targetRSS: rssTarget, measuredOK: err == nil}
	if len(compressed) > 0 {
		if err := compare(cfg, dir, fmt.Sprintf("proxy-%d-gzip", n), n, proxy, compressed, rep, progress); err != nil {
			return err
		}
	}
	m.afterGzip, err = proxy.mem()
	m.measuredOK = m.measuredOK && err == nil
	rep.memory = append(rep.memory, m)
	return nil
}

// wants reports whether the scenario named name is to be measured (see
// -only).
func (cfg config) wants(name string) bool {
	if len(cfg.only) == 0 {
		return true
	}
	return slices.ContainsFunc(cfg.only, func(s string) bool { return strings.Contains(name, s) })
}

// rounds splits each measurement into alternating slices, so that a burst
// of other work on the shared machine hits both servers alike.
const rounds = 8

// compare records ours' answers to the scenarios' requests, starts a
// baseline replaying them, and measures both side by side.
func compare(cfg config, dir, label string, n int, ours *process, scs []scenario, rep *report, progress io.Writer) error {
	recordings, sizes, err := record(ours.addr, scs)
	if err != nil {
		return err
	}
	recPath := filepath.Join(dir, "recordings-"+label+".json")
	if err := writeRecordings(recPath, recordings); err != nil {
		return err
	}
	var baseline *process
	if slices.ContainsFunc(scs, func(sc scenario) bool { return sc.against == nil }) {
		if baseline, err = startBaseline(recPath); err != nil {
			return err
		}
		defer baseline.stop()
	}
	for i, sc := range scs {
		fmt.Fprintf(progress, "%d flags: %s…\n", n, sc.name)
		against := side{proc: baseline, reqs: sc.requests}
		if sc.against != nil {
			against = side{proc: ours, reqs: sc.against}
		}
		oursRes, base, ratios := measureSideBySide(cfg, side{proc: ours, reqs: sc.requests}, against)
		for who, res := range map[string]loadResult{"bunting": oursRes, "baseline": base} {
			if res.firstErr != nil || res.requests == 0 {
				return fmt.Errorf("%s, %s: %d requests, error %v\n%s", sc.name, who, res.requests, res.firstErr, ours.logs)
			}
		}
		rep.rows = append(rep.rows, row{scenario: sc.name, flags: n, bodyBytes: sizes[i], ours: oursRes, baseline: base,
			roundRatios: ratios, target: sc.target})
	}
	return nil
}

// side is one half of a comparison: a server and the requests it answers,
// and where to put each answer's latency (nil: not measured).
type side struct {
	proc *process
	reqs []request
	lat  *[]time.Duration
}

// measureSideBySide warms both sides up, then loads them in turns of
// duration/rounds each. It returns the totals and the ratio of each round.
func measureSideBySide(cfg config, oursSide, baseSide side) (ours, base loadResult, ratios []float64) {
	if cfg.warmup > 0 {
		runLoad(oursSide.proc.addr, oursSide.reqs, cfg.conns, cfg.warmup)
		runLoad(baseSide.proc.addr, baseSide.reqs, cfg.conns, cfg.warmup)
	}
	// measured runs one side's load and charges it the CPU time its
	// server used meanwhile.
	measured := func(s side, d time.Duration) loadResult {
		before := s.proc.cpuTime()
		ub, sb := s.proc.userSys()
		cb := selfCPU()
		res := runLoadTimed(s.proc.addr, s.reqs, cfg.conns, d, s.lat)
		res.serverCPU = s.proc.cpuTime() - before
		ua, sa := s.proc.userSys()
		res.serverUser, res.serverSys, res.clientCPU = ua-ub, sa-sb, selfCPU()-cb
		return res
	}
	slice := cfg.duration / rounds
	for i := range rounds {
		// Alternate who goes first, so neither always follows the other.
		var o, b loadResult
		if i%2 == 0 {
			o = measured(oursSide, slice)
			b = measured(baseSide, slice)
		} else {
			b = measured(baseSide, slice)
			o = measured(oursSide, slice)
		}
		ours, base = ours.plus(o), base.plus(b)
		if b.perSecond() > 0 {
			ratios = append(ratios, o.perSecond()/b.perSecond())
		}
	}
	return ours, base, ratios
}

// record fetches the proxy's answer to every request once; the baseline
// replays them. It also returns the mean body size per scenario.
func record(addr string, scs []scenario) (map[string]*recorded, []int, error) {
	recordings := make(map[string]*recorded)
	sizes := make([]int, len(scs))
	for i, sc := range scs {
		total := 0
		for _, r := range sc.requests {
			rec, err := fetch(addr, r)
			if err != nil {
				return nil, nil, err
			}
			if rec.Status != r.wantStatus() {
				return nil, nil, fmt.Errorf("%s %s: status %d, want %d: %s", r.method, r.target, rec.Status, r.wantStatus(), rec.Body)
			}
			recordings[recordingKey(r.method, r.target, r.header["If-None-Match"], r.header["Accept-Encoding"], r.body)] = rec
			total += len(rec.Body)
		}
		sizes[i] = total / len(sc.requests)
	}
	return recordings, sizes, nil
}

// markdown renders the report as the table of docs/benchmarks.md.
func (r *report) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "| Scenario | Flags | Body (bytes) | Bunting req/s | Baseline req/s | Ratio (median of %d rounds) | Target | Met | Server CPU µs/request (Bunting / baseline) |\n", rounds)
	fmt.Fprintf(&b, "|---|---:|---:|---:|---:|---:|---:|:---:|---:|\n")
	for _, row := range r.rows {
		fmt.Fprintf(&b, "| %s | %d | %d | %.0f | %.0f | %.0f %% | ≥ %.0f %% | %s | %.1f / %.1f |\n",
			row.scenario, row.flags, row.bodyBytes, row.ours.perSecond(), row.baseline.perSecond(),
			100*row.ratio(), 100*row.target, yesNo(row.ratio() >= row.target),
			micros(row.ours.cpuPerRequest()), micros(row.baseline.cpuPerRequest()))
	}
	b.WriteString("\n")
	for _, row := range r.rows {
		fmt.Fprintf(&b, "- %s, %d flags: server user/sys CPU µs/request %.1f/%.1f (baseline %.1f/%.1f); load generator CPU µs/request %.1f (baseline %.1f)\n",
			row.scenario, row.flags, perRequest(row.ours.serverUser, row.ours), perRequest(row.ours.serverSys, row.ours),
			perRequest(row.baseline.serverUser, row.baseline), perRequest(row.baseline.serverSys, row.baseline),
			perRequest(row.ours.clientCPU, row.ours), perRequest(row.baseline.clientCPU, row.baseline))
	}
	for _, m := range r.memory {
		if !m.measuredOK {
			fmt.Fprintf(&b, "- Proxy resident memory with %d flags: not measured\n", m.flags)
			continue
		}
		fmt.Fprintf(&b, "- Proxy resident memory with %d flags: %.1f MB idle after the first sync, %.1f MB after the load (peak %.1f MB; %.1f MB anonymous, %.1f MB mapped from the binary)",
			m.flags, mb(m.idle), mb(m.after.rss), mb(m.after.peak), mb(m.after.anon), mb(m.after.files))
		if m.flags >= 1000 {
			fmt.Fprintf(&b, "; target ≤ %.0f MB: %s", mb(m.targetRSS), yesNo(m.after.rss <= m.targetRSS))
		}
		fmt.Fprintf(&b, "; after the gzip scenario too: %.1f MB (%.1f MB anonymous)", mb(m.afterGzip.rss), mb(m.afterGzip.anon))
		b.WriteString("\n")
	}
	if r.usage != nil {
		b.WriteString(r.usage.markdown(r.cfg))
	}
	fmt.Fprintf(&b, "\n%d keep-alive connections, %v per scenario and server after %v warm-up; generator, server under test and baseline share the machine's cores.\n",
		r.cfg.conns, r.cfg.duration, r.cfg.warmup)
	return b.String()
}

// perRequest is d per successful request of res, in µs.
func perRequest(d time.Duration, res loadResult) float64 {
	if res.requests == 0 {
		return 0
	}
	return micros(d / time.Duration(res.requests))
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func mb(n int64) float64 { return float64(n) / (1 << 20) }

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

func mkdir(path string) error { return os.MkdirAll(path, 0o700) }
