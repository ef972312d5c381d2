// Command streambench measures how fast a change reaches clients through
// Bunting's streaming (`make bench-stream`): change → visible at the real
// Node SDK in streaming mode and at GET /proxy of a proxy left at its
// defaults, on SQLite and on PostgreSQL (written on one instance, read
// from another); and the fan-out of one change to 10,000 open streams with
// the server's memory per idle stream. Every part runs as a real process
// (`bunting server`, `bunting proxy`, node); the changes are made through
// the admin API.
//
//	go run ./streambench [-changes 200] [-streams 10000] [-fanout-changes 20]
//
// PostgreSQL comes from TEST_POSTGRES_URL (a database named
// streaming_bench_<random> is created and dropped); the Node SDK from
// BUNTING_NODE_MODULES (default ../test/node/node_modules).
package main

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"
)

const (
	adminToken  = "*:*.streambench-admin"
	clientToken = "default:development.streambench-client"
	proxyKey    = "streambench-proxy-key"
	flagName    = "bench-live"
)

func main() {
	changes := flag.Int("changes", 200, "changes measured per latency scenario")
	streams := flag.Int("streams", 10000, "concurrent streams of the fan-out")
	fanChanges := flag.Int("fanout-changes", 20, "changes measured by the fan-out")
	only := flag.String("only", "sqlite,postgres,fanout", "the parts to run")
	flag.Parse()
	for _, part := range strings.Split(*only, ",") {
		parts[strings.TrimSpace(part)] = true
	}
	if err := run(*changes, *streams, *fanChanges); err != nil {
		fmt.Fprintln(os.Stderr, "streambench:", err)
		os.Exit(1)
	}
}

// parts are the parts of the benchmark to run (-only).
var parts = map[string]bool{}

func run(changes, streams, fanChanges int) error {
	repo, _ := filepath.Abs("..")
	tmp, err := os.MkdirTemp("", "streambench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "bunting")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/bunting")
	build.Dir, build.Env = repo, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v\n%s", err, out)
	}
	raiseFileLimit()
	fmt.Printf("change → visible, %d changes each (milliseconds)\n", changes)
	fmt.Printf("%-46s %8s %8s %8s\n", "", "p50", "p99", "max")

	// SQLite: one instance.
	if parts["sqlite"] {
		srv, err := startServer(bin, filepath.Join(tmp, "sqlite"), "")
		if err != nil {
			return err
		}
		if err := latencies("SQLite", srv, srv, bin, tmp, changes); err != nil {
			srv.stop()
			return err
		}
		srv.stop()
	}

	// PostgreSQL: written on one instance, read from another.
	if base := os.Getenv("TEST_POSTGRES_URL"); !parts["postgres"] {
	} else if base != "" {
		dbURL, drop, err := createDatabase(base)
		if err != nil {
			return err
		}
		a, err := startServer(bin, filepath.Join(tmp, "pg-a"), dbURL)
		if err != nil {
			drop()
			return err
		}
		b, err := startServer(bin, filepath.Join(tmp, "pg-b"), dbURL)
		if err != nil {
			a.stop()
			drop()
			return err
		}
		err = latencies("PostgreSQL, written on A, read from B", a, b, bin, tmp, changes)
		a.stop()
		b.stop()
		drop()
		if err != nil {
			return err
		}
	} else {
		fmt.Println("(TEST_POSTGRES_URL not set: no PostgreSQL rows)")
	}

	if !parts["fanout"] {
		return nil
	}
	srv, err := startServer(bin, filepath.Join(tmp, "fanout"), "")
	if err != nil {
		return err
	}
	defer srv.stop()
	return fanOut(srv, streams, fanChanges)
}

// latencies measures the Node SDK (streaming) on reader and a default
// proxy following reader, for changes made on writer.
func latencies(label string, writer, reader *process, bin, tmp string, n int) error {
	if err := ensureFlag(writer); err != nil {
		return err
	}
	sdk, err := startNodeSDK(reader.url)
	if err != nil {
		return err
	}
	on := false
	var sdkTimes []time.Duration
	for i := 0; i < n+5; i++ {
		on = !on
		start := time.Now()
		if err := toggle(writer, on); err != nil {
			sdk.stop()
			return err
		}
		if err := sdk.waitFor(on, 10*time.Second); err != nil {
			sdk.stop()
			return fmt.Errorf("%s, Node SDK: %w", label, err)
		}
		if i >= 5 { // the first few warm up
			sdkTimes = append(sdkTimes, time.Since(start))
		}
	}
	sdk.stop()
	printRow(label+": Node SDK, streaming", sdkTimes)

	proxy, err := startProxy(bin, reader.url, filepath.Join(tmp, "proxy-"+strconv.Itoa(reader.port)))
	if err != nil {
		return err
	}
	defer proxy.stop()
	var proxyTimes []time.Duration
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	for i := 0; i < n+5; i++ {
		on = !on
		start := time.Now()
		if err := toggle(writer, on); err != nil {
			return err
		}
		for {
			visible, err := proxySees(client, proxy.url)
			if err != nil {
				return err
			}
			if visible == on {
				break
			}
			if time.Since(start) > 10*time.Second {
				return fmt.Errorf("%s: the proxy never saw change %d", label, i)
			}
			time.Sleep(200 * time.Microsecond)
		}
		if i >= 5 {
			proxyTimes = append(proxyTimes, time.Since(start))
		}
	}
	printRow(label+": GET /proxy, default proxy", proxyTimes)
	return nil
}

// fanOut opens n streams, measures the server's memory per idle stream,
// then the time from each change to the last stream receiving it.
func fanOut(srv *process, n, changes int) error {
	if err := ensureFlag(srv); err != nil {
		return err
	}
	time.Sleep(time.Second)
	before, err := rss(srv.cmd.Process.Pid)
	if err != nil {
		return err
	}
	var got atomic.Int64 // streams that have seen the current change
	var round atomic.Int64
	conns := make([]net.Conn, 0, n)
	var mu sync.Mutex
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	var failed atomic.Value
	for i := 0; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			c, br, err := openStream(srv.addr)
			if err != nil {
				failed.Store(err)
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				for {
					line, err := br.ReadSlice('\n')
					if err != nil {
						return
					}
					if bytes.HasPrefix(line, []byte("event: unleash-updated")) && round.Load() > 0 {
						got.Add(1)
					}
				}
			}()
		}()
	}
	wg.Wait()
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	if err, _ := failed.Load().(error); err != nil {
		return fmt.Errorf("opening %d streams: %w", n, err)
	}
	time.Sleep(3 * time.Second) // settle
	after, err := rss(srv.cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Printf("\nfan-out: %d concurrent streams on one server (SQLite)\n", len(conns))
	fmt.Printf("server memory per idle stream: %.1f kB (RSS %.0f MB → %.0f MB)\n",
		float64(after-before)/float64(len(conns))/1024, float64(before)/(1<<20), float64(after)/(1<<20))
	on := false
	var times []time.Duration
	for i := 0; i < changes; i++ {
		on = !on
		got.Store(0)
		round.Store(int64(i + 1))
		start := time.Now()
		if err := toggle(srv, on); err != nil {
			return err
		}
		for got.Load() < int64(len(conns)) {
			if time.Since(start) > 30*time.Second {
				return fmt.Errorf("change %d reached %d of %d streams in 30 s", i, got.Load(), len(conns))
			}
			time.Sleep(100 * time.Microsecond)
		}
		times = append(times, time.Since(start))
		time.Sleep(200 * time.Millisecond)
	}
	fmt.Printf("%-46s %8s %8s %8s\n", "", "p50", "p99", "max")
	printRow(fmt.Sprintf("change → last of %d streams", len(conns)), times)
	return nil
}

func openStream(addr string) (net.Conn, *bufio.Reader, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, nil, err
	}
	fmt.Fprintf(c, "GET /api/client/streaming HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nUnleash-Appname: streambench\r\n\r\n", addr, clientToken)
	br := bufio.NewReaderSize(c, 1024)
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	status, err := br.ReadString('\n')
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	if !strings.Contains(status, " 200 ") {
		c.Close()
		return nil, nil, fmt.Errorf("stream answered %q", strings.TrimSpace(status))
	}
	// Read up to the end of the first event (the hydration).
	for blank := 0; blank < 2; {
		line, err := br.ReadSlice('\n')
		if err != nil {
			c.Close()
			return nil, nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			blank++
		}
	}
	_ = c.SetReadDeadline(time.Time{})
	return c, br, nil
}

func printRow(label string, ds []time.Duration) {
	slices.Sort(ds)
	q := func(p float64) float64 {
		i := int(p*float64(len(ds))+0.5) - 1
		i = max(0, min(i, len(ds)-1))
		return float64(ds[i].Microseconds()) / 1000
	}
	fmt.Printf("%-46s %8.1f %8.1f %8.1f\n", label, q(0.50), q(0.99), q(1))
}

type process struct {
	cmd  *exec.Cmd
	addr string
	url  string
	port int
	logs *bytes.Buffer
}

func (p *process) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

func freePort() int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func startServer(bin, dir, dbURL string) (*process, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port := freePort()
	cmd := exec.Command(bin, "server")
	cmd.Env = append(baseEnv(), "HTTP_HOST=127.0.0.1", "HTTP_PORT="+strconv.Itoa(port), "DATABASE_PATH="+filepath.Join(dir, "bunting.db"),
		"INIT_ADMIN_API_TOKENS="+adminToken, "INIT_CLIENT_API_TOKENS="+clientToken, "LOG_LEVEL=warn",
		"STREAMING_MAX_CONNECTIONS=100000", "TMPDIR="+dir)
	if dbURL != "" {
		cmd.Env = append(cmd.Env, "DATABASE_URL="+dbURL)
	}
	return start(cmd, port, "/health")
}

func startProxy(bin, upstream, dir string) (*process, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	port := freePort()
	cmd := exec.Command(bin, "proxy")
	cmd.Env = append(baseEnv(), "UPSTREAM_URL="+upstream+"/api", "UPSTREAM_API_TOKEN="+clientToken,
		"UPSTREAM_PROXY_CLIENT_KEYS="+proxyKey, "PROXY_PORT="+strconv.Itoa(port), "LISTEN_ADDRESS=127.0.0.1", "LOG_LEVEL=error", "TMPDIR="+dir)
	return start(cmd, port, "/proxy/health")
}

func start(cmd *exec.Cmd, port int, health string) (*process, error) {
	logs := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, port: port, addr: fmt.Sprintf("127.0.0.1:%d", port), logs: logs}
	p.url = "http://" + p.addr
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest("GET", p.url+health, nil)
		req.Header.Set("Authorization", proxyKey)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return p, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.stop()
	return nil, fmt.Errorf("%s did not become ready:\n%s", cmd.Args, logs)
}

func baseEnv() []string {
	var env []string
	for _, name := range []string{"PATH", "HOME", "GOMAXPROCS", "GOGC", "GOMEMLIMIT"} {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

func admin(p *process, method, path string, body any) (int, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, p.url+path, rd)
	req.Header.Set("Authorization", adminToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode, nil
}

const featurePath = "/api/admin/projects/default/features/" + flagName

// ensureFlag creates the measured flag with a default strategy, off.
func ensureFlag(p *process) error {
	if status, err := admin(p, "GET", featurePath, nil); err != nil || status == 200 {
		return err
	}
	if status, err := admin(p, "POST", "/api/admin/projects/default/features", map[string]any{"name": flagName}); err != nil || status != 201 {
		return fmt.Errorf("create flag: %d %v", status, err)
	}
	if status, err := admin(p, "POST", featurePath+"/environments/development/strategies", map[string]any{"name": "default"}); err != nil || status != 200 {
		return fmt.Errorf("add strategy: %d %v", status, err)
	}
	return nil
}

func toggle(p *process, on bool) error {
	action := "off"
	if on {
		action = "on"
	}
	status, err := admin(p, "POST", featurePath+"/environments/development/"+action, nil)
	if err == nil && status != 200 {
		err = fmt.Errorf("toggle %s: %d", action, status)
	}
	return err
}

// proxySees reports whether GET /proxy lists the flag (enabled).
func proxySees(client *http.Client, base string) (bool, error) {
	req, _ := http.NewRequest("GET", base+"/proxy", nil)
	req.Header.Set("Authorization", proxyKey)
	res, err := client.Do(req)
	if err != nil {
		return false, err
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	return bytes.Contains(b, []byte(`"`+flagName+`"`)), err
}

// nodeSDK is test/node/stream-sdk.js in streaming mode.
type nodeSDK struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan map[string]any
}

func startNodeSDK(base string) (*nodeSDK, error) {
	mods := os.Getenv("BUNTING_NODE_MODULES")
	if mods == "" {
		mods, _ = filepath.Abs(filepath.Join("..", "test", "node", "node_modules"))
	}
	cmd := exec.Command("node", filepath.Join("..", "test", "node", "stream-sdk.js"), base+"/api/", clientToken, "streaming")
	cmd.Env = append(os.Environ(), "NODE_PATH="+mods)
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &nodeSDK{cmd: cmd, stdin: stdin, lines: make(chan map[string]any, 1000)}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				s.lines <- m
			}
		}
		close(s.lines)
	}()
	return s, nil
}

func (s *nodeSDK) waitFor(on bool, limit time.Duration) error {
	timeout := time.After(limit)
	for {
		select {
		case m, ok := <-s.lines:
			if !ok {
				return errors.New("the SDK exited")
			}
			if m["mode"] != "streaming" {
				return fmt.Errorf("the SDK is in %v mode", m["mode"])
			}
			f, _ := m["flags"].(map[string]any)[flagName].(map[string]any)
			if f != nil && f["enabled"] == on {
				return nil
			}
		case <-timeout:
			return errors.New("timed out")
		}
	}
}

func (s *nodeSDK) stop() {
	s.stdin.Close()
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
}

func createDatabase(base string) (string, func(), error) {
	db, err := sql.Open("pgx", base)
	if err != nil {
		return "", nil, err
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "streaming_bench_" + hex.EncodeToString(b)
	if _, err := db.Exec("CREATE DATABASE " + name); err != nil {
		db.Close()
		return "", nil, err
	}
	u, _ := url.Parse(base)
	u.Path = "/" + name
	return u.String(), func() {
		_, _ = db.Exec("DROP DATABASE IF EXISTS " + name + " WITH (FORCE)")
		db.Close()
	}, nil
}

func rss(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, nil
		}
	}
	return 0, errors.New("no VmRSS")
}

// raiseFileLimit lifts the soft limit on open files to the hard one: the
// fan-out holds one socket per stream here, and the server (a child, which
// inherits the limit) one more.
func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}
