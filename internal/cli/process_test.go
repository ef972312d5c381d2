package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/testutil"
)

// runAsBunting makes the test binary act as the bunting command when a
// test starts it as a child process (see startBunting): real processes,
// with their own memory and output, without building the binary.
const runAsBunting = "BUNTING_CLI_TEST_RUN_AS_BUNTING"

func TestMain(m *testing.M) {
	if os.Getenv(runAsBunting) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := Run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// buntingProcess is a bunting command running as a child process.
type buntingProcess struct {
	cmd            *exec.Cmd
	stdout, stderr *testutil.Buffer
	done           chan struct{}
}

// startBunting runs `bunting <args>` with exactly env (plus PATH and
// HOME); it is stopped, gracefully, at the end of the test.
func startBunting(t *testing.T, env map[string]string, args ...string) *buntingProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = []string{runAsBunting + "=1", "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &buntingProcess{cmd: cmd, stdout: &testutil.Buffer{}, stderr: &testutil.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop interrupts the process and waits for it to exit.
func (p *buntingProcess) stop(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("bunting %v did not stop on an interrupt", p.cmd.Args[1:])
	}
}

// exited waits up to d for the process to end by itself and returns its
// exit code, or -1 if it is still running.
func (p *buntingProcess) exited(d time.Duration) int {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
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
		case <-p.done:
			t.Fatalf("bunting %v exited: %s", p.cmd.Args[1:], p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never answered %d (last: %v): %s", url, want, err, p.stderr.String())
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
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
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
		t.Fatalf("no VmRSS in /proc/%d/status", p.cmd.Process.Pid)
	}
	return m
}
