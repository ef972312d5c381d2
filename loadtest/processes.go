package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bunting-flags/bunting/engine"
)

// Credentials the benchmark configures on both sides.
const (
	upstreamToken = "loadtest-upstream-token"
	clientKey     = "loadtest-client-key"
)

// buildBunting compiles ./cmd/bunting of the repository at repo into dir,
// the way `make build` does (pure Go, no libc mapped into the process).
func buildBunting(repo, dir string) (string, error) {
	bin := filepath.Join(dir, "bunting")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, "./cmd/bunting")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building bunting in %s: %v\n%s", repo, err, out)
	}
	return bin, nil
}

// fakeUpstream serves a fixed client-features payload the way a flag
// server does (with an ETag and 304s) and accepts register and metrics
// posts. It only sees the proxy's polls, so it costs nothing measurable.
func fakeUpstream(cf *engine.ClientFeatures) (addr string, stop func(), err error) {
	payload, err := json.Marshal(cf)
	if err != nil {
		return "", nil, err
	}
	etag := fmt.Sprintf(`W/"%x"`, len(payload))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/client/features", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != upstreamToken {
			http.Error(w, `{"message":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write(payload)
	})
	accept := func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusAccepted)
	}
	mux.HandleFunc("POST /api/client/register", accept)
	mux.HandleFunc("POST /api/client/metrics", accept)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	return ln.Addr().String(), func() { _ = srv.Close() }, nil
}

// process is a child process serving HTTP on addr.
type process struct {
	cmd  *exec.Cmd
	addr string
	logs *strings.Builder
}

// stop ends the process and waits for it.
func (p *process) stop() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

// cpuTime is the CPU time the process's threads have run so far, summed
// from /proc/PID/task/*/schedstat (nanoseconds; Go rarely ends threads,
// so none is lost in practice); 0 when unreadable.
func (p *process) cpuTime() time.Duration {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", p.cmd.Process.Pid))
	var total time.Duration
	for _, path := range tasks {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		if fields := strings.Fields(string(data)); len(fields) > 0 {
			ns, _ := strconv.ParseInt(fields[0], 10, 64)
			total += time.Duration(ns)
		}
	}
	return total
}

// memStats is a process's resident memory from /proc, in bytes.
type memStats struct {
	rss, peak   int64 // VmRSS, VmHWM
	anon, files int64 // RssAnon (heap, stacks), RssFile (mapped binary pages)
}

// mem reads the process's resident memory from /proc/PID/status.
func (p *process) mem() (memStats, error) {
	var m memStats
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return m, err
	}
	fields := map[string]*int64{"VmRSS": &m.rss, "VmHWM": &m.peak, "RssAnon": &m.anon, "RssFile": &m.files}
	for line := range strings.SplitSeq(string(data), "\n") {
		name, value, ok := strings.Cut(line, ":")
		parts := strings.Fields(value)
		if !ok || len(parts) != 2 || parts[1] != "kB" || fields[name] == nil {
			continue
		}
		kb, _ := strconv.ParseInt(parts[0], 10, 64)
		*fields[name] = kb << 10
	}
	if m.rss == 0 {
		return m, errors.New("no VmRSS in /proc status")
	}
	return m, nil
}

// freePort finds a loopback port that is free right now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startProxy runs `bunting proxy` against the upstream and waits until its
// health endpoint answers 200 (it has synced). The proxy's temporary
// directory (where it keeps its backup of the last payload) is tmp, fresh
// for each run, so it cannot start from an earlier run's flags.
func startProxy(bin, upstreamAddr, tmp string) (*process, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "proxy")
	cmd.Env = append(minimalEnv(),
		"UPSTREAM_URL=http://"+upstreamAddr+"/api",
		"UPSTREAM_API_TOKEN="+upstreamToken,
		"UPSTREAM_PROXY_CLIENT_KEYS="+clientKey,
		"PROXY_PORT="+strconv.Itoa(port),
		"LOG_LEVEL=error",
		"TMPDIR="+tmp,
	)
	logs := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, addr: fmt.Sprintf("127.0.0.1:%d", port), logs: logs}
	if err := waitHealthy(p.addr, 20*time.Second); err != nil {
		p.stop()
		return nil, fmt.Errorf("bunting proxy did not become ready: %w\n%s", err, logs.String())
	}
	return p, nil
}

// minimalEnv passes on only what a Go program needs to run, so the
// developer's own proxy settings cannot leak into the measured process.
func minimalEnv() []string {
	var env []string
	for _, name := range []string{"PATH", "HOME", "GOMAXPROCS", "GOGC", "GOMEMLIMIT"} {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

// waitHealthy polls /proxy/health until it answers 200.
func waitHealthy(addr string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	last := errors.New("no answer")
	for ctx.Err() == nil {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/proxy/health", nil)
		req.Header.Set("Authorization", clientKey)
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Errorf("status %d", resp.StatusCode)
		} else {
			last = err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return last
}

// startBaseline re-runs this program as the baseline server over the
// recordings file and waits for the address it prints.
func startBaseline(recordingsPath string) (*process, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Env = append(minimalEnv(), baselineEnv+"="+recordingsPath)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	logs := &strings.Builder{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &process{cmd: cmd, logs: logs}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	addr, found := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !found {
		p.stop()
		return nil, fmt.Errorf("baseline did not start (%v): %q %s", err, line, logs.String())
	}
	p.addr = addr
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return p, nil
}

// clockTick is the unit of /proc's utime and stime (USER_HZ, 100 on
// Linux).
const clockTick = 10 * time.Millisecond

// userSys is the process's user and system CPU time from /proc/PID/stat
// (in clock ticks, coarser than cpuTime); zeros when unreadable.
func (p *process) userSys() (user, sys time.Duration) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	// utime and stime are the 14th and 15th fields of the line, counted
	// after the command name (which may hold spaces) as the 2nd.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 13 {
		return 0, 0
	}
	u, _ := strconv.ParseInt(fields[11], 10, 64)
	st, _ := strconv.ParseInt(fields[12], 10, 64)
	return time.Duration(u) * clockTick, time.Duration(st) * clockTick
}

// selfCPU is the load generator's own CPU time (user and system).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
