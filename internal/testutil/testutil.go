// Package testutil holds the small helpers that Bunting's tests in several
// packages share: waiting for a condition, a free loopback port, the
// pinned npm fixtures with the node binary that runs them, a buffer safe
// to share with a running server, and the test binary started again as a
// bunting process (process.go).
package testutil

import (
	"bytes"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Eventually polls cond every 10 ms until it holds and returns how long
// that took; when timeout passes first, it fails the test with what.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("after %v: %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// FreePort returns a TCP port that was free a moment ago on every address.
// It is drawn at random below the kernel's ephemeral range: ports the
// kernel hands out by itself (to the outgoing connections and port-0
// listeners of tests running in parallel) come from that range, so a port
// chosen there could be taken between this call and the caller's listen.
// Ports already returned in this process are not returned again.
func FreePort(t testing.TB) int {
	t.Helper()
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil && n > 20000 {
				low = n
			}
		}
	}
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 1000 {
		port := 15000 + rand.IntN(low-15000)
		if portsGiven[port] {
			continue
		}
		ln, err := net.Listen("tcp", ":"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		ln.Close()
		portsGiven[port] = true
		return port
	}
	t.Fatal("no free TCP port found below the ephemeral range")
	return 0
}

var (
	portsMu    sync.Mutex
	portsGiven = map[int]bool{}
)

// NodeModules returns the pinned npm fixtures directory
// ($BUNTING_NODE_MODULES, else the repository's test/node/node_modules)
// once each of pkgs is installed there. A missing package skips the test,
// or fails it when BUNTING_REQUIRE_FIXTURES=1.
func NodeModules(t testing.TB, pkgs ...string) string {
	t.Helper()
	dir := os.Getenv("BUNTING_NODE_MODULES")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		dir = filepath.Join(filepath.Dir(file), "..", "..", "test", "node", "node_modules")
	}
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(dir, p, "package.json")); err != nil {
			missing(t, "npm package "+p+" is not installed in "+dir+" (run make node-deps)")
		}
	}
	return dir
}

// Node returns the path of the node binary. Without one the test skips,
// or fails when BUNTING_REQUIRE_FIXTURES=1.
func Node(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		missing(t, "node is not installed")
	}
	return node
}

func missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("BUNTING_REQUIRE_FIXTURES") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Buffer is a bytes.Buffer that a running server or command and the test
// can share: writes and reads may come from different goroutines.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
