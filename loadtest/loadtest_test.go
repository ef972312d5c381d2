package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/engine/enginetest"
)

// TestMain lets the test binary act as the baseline server, as the
// command does, when the benchmark starts it as a child process.
func TestMain(m *testing.M) {
	if path, ok := os.LookupEnv(baselineEnv); ok {
		if err := serveBaseline(path); err != nil {
			fmt.Fprintln(os.Stderr, "baseline:", err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// bodies served by testServer: one below net/http's chunking threshold
// (sent with Content-Length) and one above it (sent chunked).
var (
	smallBody = `{"ok":true}`
	largeBody = strings.Repeat(`{"name":"flag","enabled":true},`, 2000)
)

func testServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("ETag", `W/"abc"`)
		switch r.URL.Path {
		case "/small":
			_, _ = io.WriteString(w, smallBody)
		case "/large":
			for i := 0; i < len(largeBody); i += 1000 {
				_, _ = io.WriteString(w, largeBody[i:min(i+1000, len(largeBody))])
			}
		case "/echo":
			_, _ = w.Write(body)
		case "/negotiated": // a different answer per Accept-Encoding
			_, _ = io.WriteString(w, "encoding:"+r.Header.Get("Accept-Encoding"))
		case "/fail":
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestGeneratorReadsLengthAndChunkedResponses(t *testing.T) {
	srv := testServer(t)
	addr := strings.TrimPrefix(srv.URL, "http://")
	reqs := []request{
		{method: "GET", target: "/small"},
		{method: "GET", target: "/large"},
		{method: "POST", target: "/echo", body: []byte(`{"toggles":["a"]}`), header: map[string]string{"Content-Type": "application/json"}},
	}
	res := runLoad(addr, reqs, 3, 300*time.Millisecond)
	if res.firstErr != nil || res.failures != 0 {
		t.Fatalf("load failed: %v (%d failures)", res.firstErr, res.failures)
	}
	if res.requests < 3 || res.perSecond() <= 0 {
		t.Fatalf("implausibly few requests: %d in %v", res.requests, res.elapsed)
	}
}

func TestGeneratorCountsOnlySuccesses(t *testing.T) {
	srv := testServer(t)
	res := runLoad(strings.TrimPrefix(srv.URL, "http://"), []request{{method: "GET", target: "/fail"}}, 2, 100*time.Millisecond)
	if res.requests != 0 || res.failures != 2 || res.firstErr == nil || !strings.Contains(res.firstErr.Error(), "503") {
		t.Fatalf("want 0 successes and 2 failed connections with a 503 error, got %+v", res)
	}
}

func TestBaselineReplaysTheRecordedBytes(t *testing.T) {
	srv := testServer(t)
	addr := strings.TrimPrefix(srv.URL, "http://")
	reqs := []request{
		{method: "GET", target: "/large"},
		{method: "POST", target: "/echo", body: []byte(`{"context":{"userId":"1"}}`)},
		{method: "GET", target: "/negotiated"},
		{method: "GET", target: "/negotiated", header: map[string]string{"Accept-Encoding": "gzip"}},
	}
	recordings := map[string]*recorded{}
	for _, r := range reqs {
		rec, err := fetch(addr, r)
		if err != nil {
			t.Fatal(err)
		}
		recordings[recordingKey(r.method, r.target, r.header["If-None-Match"], r.header["Accept-Encoding"], r.body)] = rec
	}
	path := t.TempDir() + "/rec.json"
	if err := writeRecordings(path, recordings); err != nil {
		t.Fatal(err)
	}
	baseline, err := startBaseline(path)
	if err != nil {
		t.Fatal(err)
	}
	defer baseline.stop()
	for _, r := range reqs {
		want, _ := fetch(addr, r)
		got, err := fetch(baseline.addr, r)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != want.Status || string(got.Body) != string(want.Body) ||
			got.Header.Get("ETag") != want.Header.Get("ETag") || got.Header.Get("Content-Type") != want.Header.Get("Content-Type") {
			t.Fatalf("%s %s: baseline answered %d %v (%d bytes), want %d %v (%d bytes)",
				r.method, r.target, got.Status, got.Header, len(got.Body), want.Status, want.Header, len(want.Body))
		}
	}
	unknown, err := fetch(baseline.addr, request{method: "GET", target: "/not-recorded"})
	if err != nil || unknown.Status != http.StatusNotFound {
		t.Fatalf("an unrecorded request must get 404, got %+v, %v", unknown, err)
	}
	if res := runLoad(baseline.addr, reqs, 2, 100*time.Millisecond); res.firstErr != nil || res.requests == 0 {
		t.Fatalf("baseline under load: %+v", res)
	}
}

func TestParseConfigRejectsBadValues(t *testing.T) {
	for _, args := range [][]string{{"-flags", "x"}, {"-flags", "2"}, {"-duration", "0s"}, {"-conns", "0"}, {"-nope"}} {
		if _, err := parseConfig(args); err == nil {
			t.Errorf("%v: want an error", args)
		}
	}
	cfg, err := parseConfig(nil)
	if err != nil || len(cfg.flagCounts) != 2 || cfg.flagCounts[1] != 1000 {
		t.Fatalf("defaults: %+v, %v", cfg, err)
	}
}

func TestOnlyKeepsTheNamedScenarios(t *testing.T) {
	cfg, err := parseConfig([]string{"-only", "ofrep, health"})
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, sc := range scenarios(enginetest.Generate(10, 1)) {
		if cfg.wants(sc.name) {
			kept = append(kept, sc.name)
		}
	}
	if len(kept) != 2 || !strings.Contains(kept[0], "health") || !strings.Contains(kept[1], "ofrep") {
		t.Fatalf("-only ofrep,health kept %q", kept)
	}
	if all, _ := parseConfig(nil); !all.wants("anything") {
		t.Fatal("without -only every scenario must be kept")
	}
}

// TestSmokeAgainstBuntingProxy runs the whole benchmark briefly: it builds
// bunting, starts the proxy against the fake upstream and a seeded server,
// records, starts the baselines and loads everything. Figures are not checked here (the benchmark is
// for that), only that every part works and measures something.
func TestSmokeAgainstBuntingProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the bunting binary")
	}
	cfg, err := parseConfig([]string{"-flags", "100", "-server-flags", "60", "-duration", "300ms", "-warmup", "100ms", "-conns", "4"})
	if err != nil {
		t.Fatal(err)
	}
	var progress strings.Builder
	rep, err := run(cfg, &progress)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if len(rep.rows) != 8 || len(rep.memory) != 1 || !rep.memory[0].measuredOK {
		t.Fatalf("incomplete report: %+v", rep)
	}
	for _, r := range rep.rows {
		if r.ours.requests == 0 || r.baseline.requests == 0 || (r.bodyBytes == 0) != strings.Contains(r.scenario, "304") {
			t.Errorf("%s: nothing measured: %+v", r.scenario, r)
		}
		if r.ours.serverCPU <= 0 || r.baseline.serverCPU <= 0 {
			t.Errorf("%s: no server CPU time measured: %+v", r.scenario, r)
		}
		if r.ours.serverUser+r.ours.serverSys <= 0 || r.ours.clientCPU <= 0 {
			t.Errorf("%s: no user/system or load-generator CPU time measured: %+v", r.scenario, r)
		}
	}
	// The gzip rows load compressed answers: their recorded bodies are a
	// fraction of the plain ones.
	sizes := map[string]int{}
	for _, r := range rep.rows {
		sizes[r.scenario] = r.bodyBytes
	}
	if g, p := sizes["GET /proxy, gzip (baseline: the same proxy, uncompressed)"], sizes["GET /proxy (context in query)"]; g == 0 || g*2 > p {
		t.Errorf("GET /proxy: %d bytes gzipped, %d plain", g, p)
	}
	if g, p := sizes["server: GET /api/client/features (full, gzip)"], sizes["server: GET /api/client/features (full)"]; g == 0 || g*2 > p {
		t.Errorf("client features: %d bytes gzipped, %d plain", g, p)
	}
	table := rep.markdown()
	for _, want := range []string{"| GET /proxy (context in query) | 100 |", "POST /proxy (5 toggles)", "GET /proxy/health", "resident memory with 100 flags",
		"| server: GET /api/client/features (full) | 60 |", "server: GET /api/client/features (304)", "GET /proxy, gzip", "server: GET /api/client/features (full, gzip)"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	t.Log("\n" + table)
}

func TestServerCompatiblePayloadUsesOnlyServerStrategiesAndOperators(t *testing.T) {
	cf := serverCompatible(enginetest.Generate(300, 1))
	known := map[string]bool{"default": true, "flexibleRollout": true, "remoteAddress": true, "applicationHostname": true}
	for _, f := range cf.Features {
		for _, s := range f.Strategies {
			if !known[s.Name] {
				t.Fatalf("%s: strategy %q is not one the server knows", f.Name, s.Name)
			}
			for _, c := range s.Constraints {
				if c.Operator == "IN_CIDR" {
					t.Fatalf("%s: IN_CIDR left in", f.Name)
				}
			}
			if s.Name == "flexibleRollout" && s.Parameters["rollout"] == "" {
				t.Fatalf("%s: flexibleRollout without rollout: %v", f.Name, s.Parameters)
			}
		}
	}
	for _, s := range cf.Segments {
		for _, c := range s.Constraints {
			if c.Operator == "IN_CIDR" {
				t.Fatalf("segment %d: IN_CIDR left in", s.ID)
			}
		}
	}
}

// The paced sender keeps its rate (open loop: no more than asked for, and
// about that much against a fast server), and the timed load records one
// latency per answer.
func TestPacedRateAndLatencies(t *testing.T) {
	srv := testServer(t)
	addr := strings.TrimPrefix(srv.URL, "http://")
	reqs := []request{{method: "POST", target: "/echo", body: []byte(`{"appName":"a"}`)}}
	stop := make(chan struct{})
	var sent atomic.Int64
	done := make(chan error, 1)
	go func() { done <- paced(addr, reqs, 200, 4, stop, &sent) }()
	time.Sleep(time.Second)
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := sent.Load(); n < 120 || n > 210 {
		t.Errorf("%d reports in a second at 200/s", n)
	}
	var lat []time.Duration
	res := runLoadTimed(addr, reqs, 2, 200*time.Millisecond, &lat)
	if res.firstErr != nil || int64(len(lat)) != res.requests || percentile(lat, 0.99) < percentile(lat, 0.5) || percentile(lat, 0.5) <= 0 {
		t.Errorf("%d requests, %d latencies, p50 %v, p99 %v", res.requests, len(lat), percentile(lat, 0.5), percentile(lat, 0.99))
	}
}
