package cli

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/testutil"
)

// TestMain lets the tests start the test binary as the bunting command
// (startBunting): real processes, with their own memory and output.
func TestMain(m *testing.M) { testutil.Main(m, Run) }

// buntingProcess is a bunting command running as a child process.
type buntingProcess struct{ *testutil.Process }

// startBunting runs `bunting <args>` with exactly env (plus PATH and
// HOME); it is stopped, gracefully, at the end of the test.
func startBunting(t *testing.T, env map[string]string, args ...string) *buntingProcess {
	t.Helper()
	p := &buntingProcess{testutil.StartBunting(t, env, args...)}
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop interrupts the process and waits for it to exit.
func (p *buntingProcess) stop(t *testing.T) {
	t.Helper()
	select {
	case <-p.Done:
		return
	default:
	}
	_ = p.Cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.Done:
	case <-time.After(15 * time.Second):
		_ = p.Cmd.Process.Kill()
		<-p.Done
		t.Errorf("bunting %v did not stop on an interrupt", p.Cmd.Args[1:])
	}
}

// exited waits up to d for the process to end by itself and returns its
// exit code, or -1 if it is still running.
func (p *buntingProcess) exited(d time.Duration) int {
	select {
	case <-p.Done:
		return p.Cmd.ProcessState.ExitCode()
	case <-time.After(d):
		return -1
	}
}

// waitFor polls url until it answers want (any status when want is 0).
func (p *buntingProcess) waitFor(t *testing.T, url string, header http.Header, want int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header = header.Clone()
		resp, err := client.Do(req)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if want == 0 || resp.StatusCode == want {
				return
			}
		}
		select {
		case <-p.Done:
			t.Fatalf("bunting %v exited: %s", p.Cmd.Args[1:], p.Stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never answered %d (last: %v): %s", url, want, err, p.Stderr.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// memory is a process's resident memory from /proc, in bytes.
type memory struct{ rss, peak int64 }

func (m memory) String() string {
	return fmt.Sprintf("RSS %.1f MB (peak %.1f MB)", float64(m.rss)/(1<<20), float64(m.peak)/(1<<20))
}

// memory reads VmRSS and VmHWM from /proc/PID/status.
func (p *buntingProcess) memory(t *testing.T) memory {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	var m memory
	for line := range strings.SplitSeq(string(data), "\n") {
		name, value, _ := strings.Cut(line, ":")
		fields := strings.Fields(value)
		if len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		kb, _ := strconv.ParseInt(fields[0], 10, 64)
		switch name {
		case "VmRSS":
			m.rss = kb << 10
		case "VmHWM":
			m.peak = kb << 10
		}
	}
	if m.rss == 0 {
		t.Fatalf("no VmRSS in /proc/%d/status", p.Cmd.Process.Pid)
	}
	return m
}
