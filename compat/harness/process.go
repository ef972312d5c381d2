package harness

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopGrace is how long a process gets to exit after SIGTERM before SIGKILL.
const stopGrace = 10 * time.Second

// Process is a child program whose output goes to a log file and which is
// stopped, with its whole process group, when the test that started it ends.
type Process struct {
	Name    string
	LogPath string
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
}

// StartProcess runs argv[0] with the current environment plus env, in dir
// (empty: the current directory), and registers its stop with t.Cleanup. On a
// failed test the tail of its log is printed. Should the test binary die
// without cleaning up (a -timeout panic), the kernel kills the child
// (Pdeathsig).
func StartProcess(t testing.TB, name, dir string, env map[string]string, argv ...string) *Process {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatalf("%s: create log: %v", name, err)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), EnvList(env)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("%s: start %v: %v", name, argv, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		logFile.Close()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Stop()
		if t.Failed() {
			t.Logf("--- last lines of %s log (%s):\n%s", name, logPath, p.LogTail(40))
		}
	})
	return p
}

// Exited reports whether the process has ended, and how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// Stop sends SIGTERM to the process group, waits up to stopGrace, then
// sends SIGKILL. It is safe to call more than once.
func (p *Process) Stop() {
	if exited, _ := p.Exited(); exited {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-p.done:
		return
	case <-time.After(stopGrace):
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// LogTail returns the last n lines the process wrote.
func (p *Process) LogTail(n int) string {
	data, err := os.ReadFile(p.LogPath)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(string(bytes.TrimRight(data, "\n")), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// errExited is returned by waits that notice the process died.
var errExited = errors.New("process exited")

// checkAlive returns an error naming the process when it has exited.
func (p *Process) checkAlive() error {
	if exited, err := p.Exited(); exited {
		return fmt.Errorf("%s: %w (%v); log tail:\n%s", p.Name, errExited, err, p.LogTail(20))
	}
	return nil
}
