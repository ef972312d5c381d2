// Command largeconfig measures `bunting server` with a large configuration
// (`make bench-large`): 20,000 flags, each with a gradual rollout and two
// constraints in two environments, on SQLite. It seeds them through the
// admin API's state import, restarts the server and reports, as real
// processes measure them:
//
//   - start-up: from the process start to /health and to /ready answering
//     200, and how long the first GET /api/client/features then takes;
//
//   - memory: the resident set after the first reads (the client API with
//     and without gzip and in both segment forms, the frontend API, OFREP
//     and a delta poll), and its peak;
//
//   - a change to one flag: from the admin API's answer to the client API
//     serving the changed configuration (the median and the largest of
//     -changes toggles).
//
//     go run ./largeconfig [-flags 20000] [-changes 20] [-bunting path]
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

const (
	adminToken    = "*:*.largeconfig-admin"
	clientToken   = "default:development.largeconfig-client"
	frontendToken = "default:development.largeconfig-frontend"
)

func main() {
	n := flag.Int("flags", 20000, "flags to seed")
	changes := flag.Int("changes", 20, "one-flag changes measured")
	bin := flag.String("bunting", "", "prebuilt bunting binary (default: build ../cmd/bunting)")
	data := flag.String("data", "", "directory of a database seeded by an earlier run with the same -flags (kept; default: a new one)")
	flag.Parse()
	if err := run(*n, *changes, *bin, *data); err != nil {
		fmt.Fprintln(os.Stderr, "largeconfig:", err)
		os.Exit(1)
	}
}

func run(n, changes int, bin, dir string) error {
	tmp, err := os.MkdirTemp("", "largeconfig")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if bin == "" {
		repo, _ := filepath.Abs("..")
		bin = filepath.Join(tmp, "bunting")
		build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/bunting")
		build.Dir, build.Env = repo, append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("build: %v\n%s", err, out)
		}
	}
	if dir == "" {
		dir = filepath.Join(tmp, "data")
	}
	if _, err := os.Stat(filepath.Join(dir, "bunting.db")); err != nil {
		// Seeding takes large bodies; the measured run uses the defaults.
		srv, err := start(bin, dir, "BODY_LIMIT=100000000")
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "seeding %d flags…\n", n)
		seedStart := time.Now()
		if err := seed(srv.addr, n); err != nil {
			srv.stop()
			return fmt.Errorf("seeding: %w\n%s", err, srv.logs)
		}
		fmt.Fprintf(os.Stderr, "seeded in %v\n", time.Since(seedStart).Round(time.Millisecond))
		srv.stop()
	}

	srv, err := start(bin, dir)
	if err != nil {
		return err
	}
	defer srv.stop()
	health := waitFor(srv.addr, "/health", srv.started)
	ready := waitFor(srv.addr, "/ready", srv.started)
	readyCPU := srv.cpu()
	if os.Getenv("LARGECONFIG_STEPS") != "" {
		r, p := srv.mem()
		fmt.Fprintf(os.Stderr, "ready: RSS %.1f MB (peak %.1f MB)\n", mb(r), mb(p))
	}
	t0 := time.Now()
	first, err := get(srv.addr, "/api/client/features", clientToken, nil)
	if err != nil {
		return err
	}
	firstRead := time.Since(t0)
	if !strings.Contains(string(first.body), `"flag-00000"`) {
		return fmt.Errorf("the client API does not serve the seeded flags: %.200s", first.body)
	}
	reads := []struct {
		path, token string
		header      map[string]string
		body        string
	}{
		{"/api/client/features", clientToken, map[string]string{"Accept-Encoding": "gzip"}, ""},
		{"/api/client/features", clientToken, map[string]string{"Unleash-Client-Spec": "5.2.0"}, ""},
		{"/api/client/features", clientToken, map[string]string{"Unleash-Client-Spec": "5.2.0", "Accept-Encoding": "gzip"}, ""},
		{"/api/frontend?userId=u1&properties[country]=NO", frontendToken, nil, ""},
		{"/ofrep/v1/evaluate/flags", frontendToken, map[string]string{"Content-Type": "application/json"}, `{"context":{"targetingKey":"u1","country":"NO"}}`},
		{"/api/client/delta", clientToken, nil, ""},
	}
	for _, rd := range reads {
		var body io.Reader
		method := http.MethodGet
		if rd.body != "" {
			method, body = http.MethodPost, strings.NewReader(rd.body)
		}
		t := time.Now()
		if _, err := do(srv.addr, method, rd.path, rd.token, rd.header, body); err != nil {
			return err
		}
		if os.Getenv("LARGECONFIG_STEPS") != "" {
			r, p := srv.mem()
			fmt.Fprintf(os.Stderr, "after %s %v (%v): RSS %.1f MB (peak %.1f MB), heap %s\n", rd.path, rd.header, time.Since(t).Round(time.Millisecond), mb(r), mb(p), heapStats(srv.addr))
		}
	}
	rss, peak := srv.mem()

	var lat, frontLat []time.Duration
	for i := range changes {
		state := []string{"off", "on"}[i%2]
		path := fmt.Sprintf("/api/admin/projects/default/features/flag-%05d/environments/development/%s", (i/2)*7919%n, state)
		before, err := get(srv.addr, "/api/client/features", clientToken, nil)
		if err != nil {
			return err
		}
		if _, err := do(srv.addr, http.MethodPost, path, adminToken, nil, nil); err != nil {
			return err
		}
		t := time.Now()
		after, err := get(srv.addr, "/api/client/features", clientToken, nil)
		if err != nil {
			return err
		}
		lat = append(lat, time.Since(t))
		t = time.Now()
		if _, err := get(srv.addr, "/api/frontend?userId=u1", frontendToken, nil); err != nil {
			return err
		}
		frontLat = append(frontLat, time.Since(t))
		if after.header.Get("ETag") == before.header.Get("ETag") {
			return fmt.Errorf("change %d: the client API still serves ETag %s", i, before.header.Get("ETag"))
		}
	}
	slices.Sort(lat)
	slices.Sort(frontLat)
	rssAfter, peakAfter := srv.mem()
	builds, err := buildMetrics(srv.addr)
	if err != nil {
		return err
	}

	fmt.Printf("| Large configuration (%d flags, SQLite) | Figure |\n|---|---:|\n", n)
	fmt.Printf("| start → /health 200 | %v |\n", health.Round(time.Millisecond))
	fmt.Printf("| start → /ready 200 (server CPU time by then) | %v (%v) |\n", ready.Round(time.Millisecond), readyCPU.Round(10*time.Millisecond))
	fmt.Printf("| first GET /api/client/features after /ready (%.1f MB) | %v |\n", float64(len(first.body))/1e6, firstRead.Round(time.Millisecond))
	fmt.Printf("| RSS after the first reads (peak) | %.1f MB (%.1f MB) |\n", mb(rss), mb(peak))
	if len(lat) > 0 {
		fmt.Printf("| one-flag change → client API serves it, median / max of %d | %v / %v |\n", len(lat),
			lat[len(lat)/2].Round(100*time.Microsecond), lat[len(lat)-1].Round(100*time.Microsecond))
		fmt.Printf("| then the frontend API serves it, median / max of %d | %v / %v |\n", len(frontLat),
			frontLat[len(frontLat)/2].Round(100*time.Microsecond), frontLat[len(frontLat)-1].Round(100*time.Microsecond))
	}
	fmt.Printf("| RSS after the changes (peak) | %.1f MB (%.1f MB) |\n", mb(rssAfter), mb(peakAfter))
	for _, kind := range []string{"full", "changed"} {
		if b := builds[kind]; b.count > 0 {
			fmt.Printf("| configuration builds, %s (the server's own timing, loading included): count, mean | %d, %v |\n",
				kind, b.count, time.Duration(b.seconds/float64(b.count)*float64(time.Second)).Round(100*time.Microsecond))
		}
	}
	return nil
}

// heapStats reads the server's live heap and the memory its runtime
// holds, from its Prometheus endpoint, to tell garbage not yet returned to
// the operating system from what the server keeps.
func heapStats(addr string) string {
	res, err := get(addr, "/internal-backstage/prometheus", "", nil)
	if err != nil {
		return err.Error()
	}
	var alloc, released, idle float64
	for line := range strings.SplitSeq(string(res.body), "\n") {
		name, value, _ := strings.Cut(line, " ")
		v, _ := strconv.ParseFloat(value, 64)
		switch name {
		case "go_memstats_heap_alloc_bytes":
			alloc = v
		case "go_memstats_heap_released_bytes":
			released = v
		case "go_memstats_heap_idle_bytes":
			idle = v
		}
	}
	var extra string
	for line := range strings.SplitSeq(string(res.body), "\n") {
		for _, n := range []string{"go_memstats_heap_inuse_bytes", "go_memstats_stack_inuse_bytes", "go_memstats_gc_sys_bytes", "go_memstats_other_sys_bytes", "go_memstats_mspan_inuse_bytes", "go_memstats_sys_bytes", "go_memstats_next_gc_bytes"} {
			if v, ok := strings.CutPrefix(line, n+" "); ok {
				f, _ := strconv.ParseFloat(v, 64)
				extra += fmt.Sprintf(" %s=%.1f", strings.TrimSuffix(strings.TrimPrefix(n, "go_memstats_"), "_bytes"), f/(1<<20))
			}
		}
	}
	return fmt.Sprintf("live %.1f MB, idle not released %.1f MB", alloc/(1<<20), (idle-released)/(1<<20)) + extra
}

// buildStat is one kind of the server's configuration builds.
type buildStat struct {
	count   int
	seconds float64
}

// buildMetrics reads bunting_client_config_build_seconds from the
// server's Prometheus endpoint, by kind (the metric is absent before
// this change: the map is then empty).
func buildMetrics(addr string) (map[string]buildStat, error) {
	res, err := get(addr, "/internal-backstage/prometheus", "", nil)
	if err != nil {
		return nil, err
	}
	out := map[string]buildStat{}
	for line := range strings.SplitSeq(string(res.body), "\n") {
		for suffix, set := range map[string]func(*buildStat, float64){
			"_sum":   func(b *buildStat, v float64) { b.seconds = v },
			"_count": func(b *buildStat, v float64) { b.count = int(v) },
		} {
			rest, ok := strings.CutPrefix(line, "bunting_client_config_build_seconds"+suffix+`{kind="`)
			kind, value, found := strings.Cut(rest, `"} `)
			if !ok || !found {
				continue
			}
			v, _ := strconv.ParseFloat(value, 64)
			b := out[kind]
			set(&b, v)
			out[kind] = b
		}
	}
	return out, nil
}

func mb(n int64) float64 { return float64(n) / (1 << 20) }

// seed imports n flags in batches: each with a 50 % gradual rollout and
// two constraints in development and production, on in development.
func seed(addr string, n int) error {
	const batch = 2000
	for lo := 0; lo < n; lo += batch {
		var features, envs, strategies []map[string]any
		for i := lo; i < min(n, lo+batch); i++ {
			name := fmt.Sprintf("flag-%05d", i)
			features = append(features, map[string]any{"name": name, "project": "default", "type": "release",
				"description": "Large-configuration benchmark flag " + strconv.Itoa(i)})
			for _, env := range []string{"development", "production"} {
				envs = append(envs, map[string]any{"featureName": name, "environment": env, "enabled": env == "development"})
				strategies = append(strategies, map[string]any{
					"featureName": name, "projectId": "default", "environment": env, "name": "flexibleRollout",
					"parameters": map[string]string{"rollout": strconv.Itoa(10 + i%90), "stickiness": "default", "groupId": name},
					"constraints": []map[string]any{
						{"contextName": "country", "operator": "IN", "values": []string{"NO", "SE", "DK", "FI", "IS"}},
						{"contextName": "appVersion", "operator": "SEMVER_GT", "value": fmt.Sprintf("1.%d.0", i%20)},
					},
				})
			}
		}
		doc := map[string]any{"version": 4, "features": features, "featureEnvironments": envs, "featureStrategies": strategies}
		body, _ := json.Marshal(doc)
		if _, err := do(addr, http.MethodPost, "/api/admin/state/import", adminToken,
			map[string]string{"Content-Type": "application/json"}, bytes.NewReader(body)); err != nil {
			return err
		}
	}
	return nil
}

type answer struct {
	header http.Header
	body   []byte
}

var client = &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{DisableCompression: true}}

func get(addr, path, token string, header map[string]string) (answer, error) {
	return do(addr, http.MethodGet, path, token, header, nil)
}

func do(addr, method, path, token string, header map[string]string, body io.Reader) (answer, error) {
	req, err := http.NewRequest(method, "http://"+addr+path, body)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("Authorization", token)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, err
	}
	if resp.StatusCode/100 != 2 {
		return answer{}, fmt.Errorf("%s %s: %d %.300s", method, path, resp.StatusCode, data)
	}
	return answer{resp.Header, data}, nil
}

type process struct {
	cmd     *exec.Cmd
	addr    string
	logs    *strings.Builder
	started time.Time
}

func (p *process) stop() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

// cpu is the process's user and system CPU time so far.
func (p *process) cpu() time.Duration {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(u+st) * 10 * time.Millisecond // USER_HZ is 100
}

// mem reads VmRSS and VmHWM.
func (p *process) mem() (rss, peak int64) {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	for line := range strings.SplitSeq(string(data), "\n") {
		name, value, _ := strings.Cut(line, ":")
		f := strings.Fields(value)
		if len(f) != 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[0], 10, 64)
		switch name {
		case "VmRSS":
			rss = kb << 10
		case "VmHWM":
			peak = kb << 10
		}
	}
	return rss, peak
}

// start runs `bunting server` on SQLite in dir; the start time is taken
// just before the process starts.
func start(bin, dir string, env ...string) (*process, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "server")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"PORT=" + strconv.Itoa(port), "DATABASE_PATH=" + filepath.Join(dir, "bunting.db"),
		"INIT_ADMIN_API_TOKENS=" + adminToken, "INIT_CLIENT_API_TOKENS=" + clientToken,
		"INIT_FRONTEND_API_TOKENS=" + frontendToken, "LOG_LEVEL=error", "TMPDIR=" + dir}, env...)
	for _, name := range []string{"GOMAXPROCS", "GOGC", "GOMEMLIMIT"} {
		if v, ok := os.LookupEnv(name); ok {
			cmd.Env = append(cmd.Env, name+"="+v)
		}
	}
	logs := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = logs, logs
	p := &process{cmd: cmd, addr: fmt.Sprintf("127.0.0.1:%d", port), logs: logs, started: time.Now()}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	if d := waitFor(p.addr, "/health", p.started); d < 0 {
		p.stop()
		return nil, errors.New("bunting server did not become healthy:\n" + logs.String())
	}
	return p, nil
}

// waitFor polls path every 5 ms until it answers 200 and returns the time
// since started (-1 after a minute).
func waitFor(addr, path string, started time.Time) time.Duration {
	c := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		resp, err := c.Get("http://" + addr + path)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(started)
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	return -1
}
