package harness

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// NodeDriver is an SDK run under Node by a driver script in test/node/compat
// (node-sdk-driver.js for npm unleash-client 6.12.1, browser-sdk-driver.js
// for npm unleash-proxy-client 3.8.2) and driven over its stdin/stdout.
type NodeDriver struct {
	name    string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	logPath string

	mu      sync.Mutex
	nextID  int
	pending map[int]chan driverAnswer
	events  []string
	ready   chan struct{}
	exited  chan struct{}
}

type driverAnswer struct {
	ID      int          `json:"id"`
	Event   string       `json:"event"`
	Message string       `json:"message"`
	Error   string       `json:"error"`
	Results []Evaluation `json:"results"`
}

// driverTimeout bounds one command to a driver, and its readiness.
const driverTimeout = 20 * time.Second

// StartNodeSDK starts the Node SDK against an endpoint (an upstream's client
// API or a proxy's) and waits for its ready event.
func StartNodeSDK(t testing.TB, at Endpoint, appName string) *NodeDriver {
	t.Helper()
	return startDriver(t, "Node SDK", "node-sdk-driver.js", nodeSDKEnv(at, appName))
}

// StartQuietNodeSDK is StartNodeSDK for an SDK that sends no metrics
// (so that stopping it has nothing to flush).
func StartQuietNodeSDK(t testing.TB, at Endpoint, appName string) *NodeDriver {
	t.Helper()
	env := nodeSDKEnv(at, appName)
	env["DISABLE_METRICS"] = "1"
	return startDriver(t, "Node SDK", "node-sdk-driver.js", env)
}

func nodeSDKEnv(at Endpoint, appName string) map[string]string {
	return map[string]string{
		"UNLEASH_URL":       at.URL,
		"UNLEASH_API_TOKEN": at.Token,
		"APP_NAME":          appName,
		"INSTANCE_ID":       appName + "-1",
	}
}

// StartBrowserSDK starts the browser SDK (under Node) against a proxy's
// /proxy endpoint with its client key and waits for its ready event.
func StartBrowserSDK(t testing.TB, proxy *Proxy, appName string) *NodeDriver {
	t.Helper()
	return startDriver(t, "browser SDK", "browser-sdk-driver.js", map[string]string{
		"PROXY_URL":  proxy.BaseURL + "/proxy",
		"CLIENT_KEY": proxy.ClientKey,
		"APP_NAME":   appName,
	})
}

func startDriver(t testing.TB, name, script string, env map[string]string) *NodeDriver {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed: %v", err)
	}
	s := &NodeDriver{name: name, logPath: filepath.Join(t.TempDir(), "driver.log"), pending: map[int]chan driverAnswer{}, ready: make(chan struct{}), exited: make(chan struct{})}
	logFile, err := os.Create(s.logPath)
	if err != nil {
		t.Fatal(err)
	}
	env["NODE_PATH"] = NodeModules(t)
	s.cmd = exec.Command(node, filepath.Join(NodeScripts(), script))
	s.cmd.Env = append(os.Environ(), EnvList(env)...)
	s.cmd.Stderr = logFile
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatalf("start the %s driver: %v", name, err)
	}
	go s.read(stdout, logFile)
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			data, _ := os.ReadFile(s.logPath)
			t.Logf("--- %s driver output:\n%s", name, data)
		}
	})
	select {
	case <-s.ready:
	case <-s.exited:
		t.Fatalf("the %s driver exited before ready; events: %v", name, s.Events())
	case <-time.After(driverTimeout):
		t.Fatalf("the %s was not ready within %s; events: %v", name, driverTimeout, s.Events())
	}
	return s
}

// maxLoggedLine bounds what the driver log keeps of one line (answers to
// large evaluation batches run to megabytes).
const maxLoggedLine = 2000

// read dispatches the driver's lines: answers to their command, events to
// the event list (and the log).
func (s *NodeDriver) read(stdout io.Reader, log *os.File) {
	defer close(s.exited)
	defer log.Close()
	scanner := bufio.NewScanner(stdout)
	scanner.Buffer(make([]byte, 0, 64<<10), 4<<20)
	readyClosed := false
	for scanner.Scan() {
		line := scanner.Text()
		if len(line) > maxLoggedLine {
			fmt.Fprintf(log, "%s… (%d bytes)\n", line[:maxLoggedLine], len(line))
		} else {
			fmt.Fprintln(log, line)
		}
		var msg driverAnswer
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			continue
		}
		s.mu.Lock()
		if msg.Event != "" {
			s.events = append(s.events, strings.TrimSpace(msg.Event+" "+msg.Message))
			if msg.Event == "ready" && !readyClosed {
				close(s.ready)
				readyClosed = true
			}
		} else if ch, ok := s.pending[msg.ID]; ok {
			delete(s.pending, msg.ID)
			ch <- msg
		}
		s.mu.Unlock()
	}
}

// Events lists the SDK events seen so far ("ready", "sent", "error …").
func (s *NodeDriver) Events() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.events...)
}

// HasEvent reports whether the SDK emitted the event.
func (s *NodeDriver) HasEvent(name string) bool {
	for _, e := range s.Events() {
		if e == name || strings.HasPrefix(e, name+" ") {
			return true
		}
	}
	return false
}

func (s *NodeDriver) call(op string, checks []Check) (driverAnswer, error) {
	s.mu.Lock()
	s.nextID++
	id := s.nextID
	ch := make(chan driverAnswer, 1)
	s.pending[id] = ch
	s.mu.Unlock()
	data, err := json.Marshal(map[string]any{"id": id, "op": op, "checks": checks})
	if err != nil {
		return driverAnswer{}, err
	}
	if _, err := s.stdin.Write(append(data, '\n')); err != nil {
		return driverAnswer{}, fmt.Errorf("write to the %s driver: %w", s.name, err)
	}
	select {
	case ans := <-ch:
		if ans.Error != "" {
			return ans, fmt.Errorf("%s driver: %s", s.name, ans.Error)
		}
		return ans, nil
	case <-s.exited:
		return driverAnswer{}, fmt.Errorf("the %s driver exited; events: %v", s.name, s.Events())
	case <-time.After(driverTimeout):
		return driverAnswer{}, fmt.Errorf("the %s driver did not answer %s within %s", s.name, op, driverTimeout)
	}
}

// Evaluate implements SDK.
func (s *NodeDriver) Evaluate(checks []Check) ([]Evaluation, error) {
	ans, err := s.call("evaluate", checks)
	return ans.Results, err
}

// EvaluateSeeded is Evaluate with the SDK's random choices (random
// stickiness, a missing stickiness field) made by a generator seeded with
// each check's position, so that two Node SDKs given the same flags and
// checks answer alike (only the Node SDK driver supports it).
func (s *NodeDriver) EvaluateSeeded(checks []Check) ([]Evaluation, error) {
	ans, err := s.call("evaluate-seeded", checks)
	if err == nil && len(ans.Results) != len(checks) {
		err = fmt.Errorf("%s driver: %d answers for %d checks", s.name, len(ans.Results), len(checks))
	}
	return ans.Results, err
}

// Stop flushes the SDK's metrics and ends the driver (killing it if it does
// not end in time). It is safe to call more than once.
func (s *NodeDriver) Stop() {
	select {
	case <-s.exited:
	default:
		_, _ = s.call("stop", nil)
	}
	select {
	case <-s.exited:
	case <-time.After(stopGrace):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
	_ = s.cmd.Wait()
}
