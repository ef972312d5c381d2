package main

import (
	"bufio"
	"cmp"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // CREATE DATABASE for the PostgreSQL half

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/engine/enginetest"
)

// The usage benchmark (issue 23): SDK usage reports posted to `bunting
// server` next to a baseline that reads the same body and answers the
// same status, on SQLite and (with TEST_POSTGRES_URL) PostgreSQL; then,
// while reports arrive at a fixed rate, an admin toggle's latency and
// GET /api/client/features' rate against its rate without reports.

// Usage goals from the issue.
const (
	usageRateTarget   = 11_000                // accepted reports per second
	usageP99Target    = 10 * time.Millisecond // per report
	mixedReportRate   = 5_000                 // reports per second during the mixed run
	toggleP99Target   = 20 * time.Millisecond // admin toggle while reports arrive
	featuresKeptShare = 0.8                   // of the quiet client-features rate
	serverFrontToken  = "default:development.loadtest-frontend-secret"
	usageReportBodies = 16
	// mixedName selects the mixed run with -only.
	mixedName = "mixed: reports, toggles and client features"
)

// usageRow is one usage scenario measured next to its baseline.
type usageRow struct {
	scenario, database string
	flags, bodyBytes   int
	ours, baseline     loadResult
	roundRatios        []float64
	p50, p99           time.Duration
	baseP99            time.Duration
}

func (r usageRow) ratio() float64 { return row{roundRatios: r.roundRatios}.ratio() }

// mixedResult is the mixed run on one database.
type mixedResult struct {
	database                      string
	reportRate                    float64 // achieved
	quietFeatures, busyFeatures   float64 // requests per second
	kept                          float64 // median of the rounds' busy/quiet ratios
	quietToggleP99, busyToggleP99 time.Duration
	quietToggleP50, busyToggleP50 time.Duration
	toggles                       int
}

// usageReport is what the usage benchmark measured.
type usageReport struct {
	rows  []usageRow
	mixed []mixedResult
	// load is the machine's load average (1, 5, 15 minutes) at the start.
	load string
}

// runUsageBenchmark measures the usage endpoints on each database.
func runUsageBenchmark(cfg config, bin, dir string, rep *report, progress io.Writer) error {
	rep.usage = &usageReport{load: loadAverage()}
	dbs := []string{"sqlite"}
	if os.Getenv("TEST_POSTGRES_URL") != "" {
		dbs = append(dbs, "postgres")
	}
	for _, kind := range dbs {
		if err := usageOn(cfg, bin, dir, kind, rep.usage, progress); err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
	}
	return nil
}

// usageOn starts a server on a fresh database of kind, seeds it and runs
// the usage scenarios.
func usageOn(cfg config, bin, dir, kind string, ur *usageReport, progress io.Writer) error {
	srvDir := filepath.Join(dir, "usage-"+kind)
	if err := mkdir(srvDir); err != nil {
		return err
	}
	extra := []string{"INIT_FRONTEND_API_TOKENS=" + serverFrontToken}
	if kind == "postgres" {
		dbURL, drop, err := createDatabase(os.Getenv("TEST_POSTGRES_URL"))
		if err != nil {
			return err
		}
		defer drop()
		extra = append(extra, "DATABASE_URL="+dbURL)
	}
	srv, err := startServer(bin, srvDir, extra...)
	if err != nil {
		return err
	}
	defer srv.stop()
	cf := serverCompatible(enginetest.Generate(cfg.usageFlags, cfg.seed))
	fmt.Fprintf(progress, "usage, %s: seeding %d flags…\n", kind, cfg.usageFlags)
	if err := seed(srv.addr, cf); err != nil {
		return fmt.Errorf("seeding: %w\n%s", err, srv.logs)
	}
	client, front := usageRequests(cf, "/api/client/metrics", serverClientToken, 202), usageRequests(cf, "/api/frontend/client/metrics", serverFrontToken, 200)
	recordings, _, err := record(srv.addr, []scenario{{requests: client}, {requests: front}})
	if err != nil {
		return err
	}
	recPath := filepath.Join(dir, "recordings-usage-"+kind+".json")
	if err := writeRecordings(recPath, recordings); err != nil {
		return err
	}
	baseline, err := startBaseline(recPath)
	if err != nil {
		return err
	}
	defer baseline.stop()
	for _, sc := range []struct {
		name string
		reqs []request
	}{{"POST /api/client/metrics", client}, {"POST /api/frontend/client/metrics", front}} {
		if !cfg.wants(sc.name) {
			continue
		}
		fmt.Fprintf(progress, "usage, %s: %s…\n", kind, sc.name)
		var lat, baseLat []time.Duration
		ours, base, ratios := measureSideBySide(cfg, side{proc: srv, reqs: sc.reqs, lat: &lat}, side{proc: baseline, reqs: sc.reqs, lat: &baseLat})
		for who, res := range map[string]loadResult{"bunting": ours, "baseline": base} {
			if res.firstErr != nil || res.requests == 0 {
				return fmt.Errorf("%s, %s: %d requests, error %v\n%s", sc.name, who, res.requests, res.firstErr, srv.logs)
			}
		}
		ur.rows = append(ur.rows, usageRow{scenario: sc.name, database: kind, flags: cfg.usageFlags, bodyBytes: len(sc.reqs[0].body),
			ours: ours, baseline: base, roundRatios: ratios, p50: percentile(lat, 0.5), p99: percentile(lat, 0.99), baseP99: percentile(baseLat, 0.99)})
	}
	if !cfg.wants(mixedName) {
		return nil
	}
	fmt.Fprintf(progress, "usage, %s: toggles and client features while reports arrive…\n", kind)
	m, err := mixed(cfg, srv, cf, client)
	if err != nil {
		return fmt.Errorf("mixed: %w\n%s", err, srv.logs)
	}
	m.database = kind
	ur.mixed = append(ur.mixed, m)
	return nil
}

// usageRequests are usageReportBodies metrics reports of every flag of cf
// (yes/no counts and, for flags with variants, variant counts), from four
// applications with four instances each, posted to path with token.
func usageRequests(cf *engine.ClientFeatures, path, token string, status int) []request {
	stop := time.Now().UTC()
	reqs := make([]request, 0, usageReportBodies)
	for i := range usageReportBodies {
		toggles := map[string]any{}
		for j, f := range cf.Features {
			t := map[string]any{"yes": 1 + (i+j)%17, "no": (i * j) % 5}
			variants := map[string]int{}
			for _, v := range f.Variants {
				variants[v.Name] = 1 + (i+j)%3
			}
			for _, s := range f.Strategies {
				for _, v := range s.Variants {
					variants[v.Name] = 1 + (i+j)%3
				}
			}
			if len(variants) > 0 {
				t["variants"] = variants
			}
			toggles[f.Name] = t
		}
		body, _ := json.Marshal(map[string]any{"appName": fmt.Sprintf("loadtest-app-%d", i%4), "instanceId": fmt.Sprintf("instance-%d", i),
			"sdkVersion": "unleash-client-node:6.1.0", "environment": "development",
			"bucket": map[string]any{"start": stop.Add(-time.Minute).Format(time.RFC3339), "stop": stop.Format(time.RFC3339), "toggles": toggles}})
		reqs = append(reqs, request{method: "POST", target: path, body: body, status: status,
			header: map[string]string{"Authorization": token, "Content-Type": "application/json"}})
	}
	return reqs
}

// mixed measures, on a running server, the client-features rate and the
// admin toggle latency with and without reports arriving at
// mixedReportRate. Quiet and busy slices alternate (rounds of each), so
// that other work on the shared machine hits both alike; the features
// figure is the median of the rounds' busy/quiet ratios.
func mixed(cfg config, srv *process, cf *engine.ClientFeatures, reports []request) (mixedResult, error) {
	var m mixedResult
	features := []request{{method: "GET", target: "/api/client/features", header: map[string]string{"Authorization": serverClientToken}}}
	toggle := cf.Features[0].Name
	slice := cfg.duration / rounds
	runLoad(srv.addr, features, cfg.conns, cfg.warmup)
	var (
		quiet, busy               loadResult
		ratios                    []float64
		quietToggles, busyToggles []time.Duration
		sent                      atomic.Int64
		reporting                 time.Duration
	)
	// withReports runs fn while reports arrive.
	withReports := func(fn func() error) error {
		stop, done := make(chan struct{}), make(chan error, 1)
		go func() { done <- paced(srv.addr, reports, mixedReportRate, 32, stop, &sent) }()
		start := time.Now()
		err := fn()
		reporting += time.Since(start)
		close(stop)
		if perr := <-done; err == nil {
			err = perr
		}
		return err
	}
	for i := range rounds {
		var q, b loadResult
		measureQuiet := func() error {
			q = runLoad(srv.addr, features, cfg.conns, slice)
			lat, err := toggleLatencies(srv.addr, toggle, slice)
			quietToggles = append(quietToggles, lat...)
			return cmp.Or(q.firstErr, err)
		}
		measureBusy := func() error {
			return withReports(func() error {
				b = runLoad(srv.addr, features, cfg.conns, slice)
				lat, err := toggleLatencies(srv.addr, toggle, slice)
				busyToggles = append(busyToggles, lat...)
				return cmp.Or(b.firstErr, err)
			})
		}
		first, second := measureQuiet, measureBusy
		if i%2 == 1 {
			first, second = measureBusy, measureQuiet
		}
		if err := cmp.Or(first(), second()); err != nil {
			return m, err
		}
		quiet, busy = quiet.plus(q), busy.plus(b)
		if q.perSecond() > 0 {
			ratios = append(ratios, b.perSecond()/q.perSecond())
		}
	}
	m.quietFeatures, m.busyFeatures, m.kept = quiet.perSecond(), busy.perSecond(), row{roundRatios: ratios}.ratio()
	m.quietToggleP99, m.busyToggleP99, m.toggles = percentile(quietToggles, 0.99), percentile(busyToggles, 0.99), len(busyToggles)
	m.quietToggleP50, m.busyToggleP50 = percentile(quietToggles, 0.5), percentile(busyToggles, 0.5)
	m.reportRate = float64(sent.Load()) / reporting.Seconds()
	return m, nil
}

// toggleLatencies switches a flag on and off in development through the
// admin API, one change every 25 ms for d, and returns each change's
// latency.
func toggleLatencies(addr, flag string, d time.Duration) ([]time.Duration, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	var out []time.Duration
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for end, i := time.Now().Add(d), 0; time.Now().Before(end); i++ {
		<-tick.C
		state := []string{"on", "off"}[i%2]
		wire := request{method: "POST", target: featurePath(flag) + "/environments/" + serverEnvironment + "/" + state,
			header: map[string]string{"Authorization": serverAdminToken, "Content-Type": "application/json"}, body: []byte{}}.wire(addr)
		sent := time.Now()
		if _, err := conn.Write(wire); err != nil {
			return out, err
		}
		status, err := readResponse(br)
		if err != nil {
			return out, err
		}
		if status != 200 {
			return out, fmt.Errorf("toggle %s: status %d", state, status)
		}
		out = append(out, time.Since(sent))
	}
	return out, nil
}

// paced sends reqs round-robin over conns connections at rate requests per
// second in all (open loop: each connection keeps its own schedule and
// does not send faster to catch up after a slow answer) until stop
// closes, counting the answers with the expected status in sent.
func paced(addr string, reqs []request, rate, conns int, stop <-chan struct{}, sent *atomic.Int64) error {
	interval := time.Duration(float64(time.Second) * float64(conns) / float64(rate))
	wires := make([][]byte, len(reqs))
	for i, r := range reqs {
		wires[i] = r.wire(addr)
	}
	var wg sync.WaitGroup
	errs := make(chan error, conns)
	for c := range conns {
		wg.Go(func() {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				errs <- err
				return
			}
			defer conn.Close()
			br := bufio.NewReaderSize(conn, 16<<10)
			timer := time.NewTimer(time.Hour)
			defer timer.Stop()
			next := time.Now().Add(interval * time.Duration(c) / time.Duration(conns))
			for i := c; ; i++ {
				if wait := time.Until(next); wait > 0 {
					timer.Reset(wait)
					select {
					case <-stop:
						return
					case <-timer.C:
					}
				} else {
					select {
					case <-stop:
						return
					default:
					}
					next = time.Now() // behind: do not burst to catch up
				}
				next = next.Add(interval)
				k := i % len(wires)
				if _, err := conn.Write(wires[k]); err != nil {
					errs <- err
					return
				}
				status, err := readResponse(br)
				if err != nil {
					errs <- err
					return
				}
				if status != reqs[k].wantStatus() {
					errs <- fmt.Errorf("report: status %d", status)
					return
				}
				sent.Add(1)
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// percentile is the q-quantile of ds (0 for none).
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(ds))
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

// loadAverage is /proc/loadavg's first three fields.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], ", ")
}

// createDatabase makes a fresh database next to base's and returns its
// URL and a function that drops it.
func createDatabase(base string) (string, func(), error) {
	db, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, err
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "bunting_loadtest_" + hex.EncodeToString(b)
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		db.Close()
		return "", nil, err
	}
	u, err := url.Parse(base)
	if err != nil {
		db.Close()
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), func() {
		_, _ = db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		db.Close()
	}, nil
}

// markdown renders the usage figures.
func (u *usageReport) markdown(cfg config) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nSDK usage reports (%d-flag reports; load average at the start %s):\n\n", cfg.usageFlags, u.load)
	fmt.Fprintf(&b, "| Scenario | Database | Body (bytes) | Bunting req/s | Baseline req/s | Ratio (median of %d rounds) | Server CPU µs/request (Bunting / baseline) | Bunting p50 / p99 | Baseline p99 | ≥ %d/s and p99 < %v |\n", rounds, usageRateTarget, usageP99Target)
	fmt.Fprintf(&b, "|---|---|---:|---:|---:|---:|---:|---:|---:|:---:|\n")
	for _, r := range u.rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %.0f | %.0f | %.0f %% | %.1f / %.1f | %s / %s | %s | %s |\n",
			r.scenario, r.database, r.bodyBytes, r.ours.perSecond(), r.baseline.perSecond(), 100*r.ratio(),
			micros(r.ours.cpuPerRequest()), micros(r.baseline.cpuPerRequest()), ms(r.p50), ms(r.p99), ms(r.baseP99),
			yesNo(r.ours.perSecond() >= usageRateTarget && r.p99 < usageP99Target))
	}
	if len(u.mixed) > 0 {
		fmt.Fprintf(&b, "\nWhile reports arrive at %d/s (open loop, 32 connections; quiet and busy slices alternate, %d rounds; a toggle every 25 ms):\n\n", mixedReportRate, rounds)
		b.WriteString("| Database | Reports/s reached | GET /api/client/features quiet / busy req/s | Kept (median of rounds) | Admin toggle p50 quiet / busy | Admin toggle p99 quiet / busy | Met (≥ 80 %, < 20 ms) |\n")
		b.WriteString("|---|---:|---:|---:|---:|---:|:---:|\n")
		for _, m := range u.mixed {
			kept := m.kept
			fmt.Fprintf(&b, "| %s | %.0f | %.0f / %.0f | %.0f %% | %s / %s | %s / %s (%d changes) | %s |\n", m.database, m.reportRate, m.quietFeatures, m.busyFeatures,
				100*kept, ms(m.quietToggleP50), ms(m.busyToggleP50), ms(m.quietToggleP99), ms(m.busyToggleP99), m.toggles, yesNo(kept >= featuresKeptShare && m.busyToggleP99 < toggleP99Target))
		}
	}
	return b.String()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }
