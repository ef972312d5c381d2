package testutil

import (
	"context"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
)

// runAsBunting, set to 1 in a child process's environment, makes a test
// binary act as the bunting command (see Main and StartBunting): tests get
// real processes, with their own memory, output and death by SIGKILL,
// without building the binary.
const runAsBunting = "BUNTING_TEST_RUN_AS_BUNTING"

// Main is the body of a TestMain for tests that start bunting processes:
// in a child started by StartBunting it runs the command, run (cli.Run,
// passed in because cli's own tests use this package), until SIGINT or
// SIGTERM, and exits with its code; otherwise it runs the tests.
func Main[E ~func(string) (string, bool)](m *testing.M, run func(ctx context.Context, args []string, env E, stdout, stderr io.Writer) int) {
	if os.Getenv(runAsBunting) == "1" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := run(ctx, os.Args[1:], os.LookupEnv, os.Stdout, os.Stderr)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// Process is a bunting command running as a child process of a test.
type Process struct {
	Cmd            *exec.Cmd
	Stdout, Stderr *Buffer
	// Done is closed once the process has exited.
	Done chan struct{}
}

// StartBunting runs `bunting <args>` (the test binary, whose TestMain
// calls Main) with exactly env plus PATH and HOME. A process still running
// at the end of the test is killed; a test that wants it stopped some
// other way registers its own cleanup, which runs first.
func StartBunting(t testing.TB, env map[string]string, args ...string) *Process {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = []string{runAsBunting + "=1", "PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &Process{Cmd: cmd, Stdout: &Buffer{}, Stderr: &Buffer{}, Done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.Stdout, p.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.Done) }()
	t.Cleanup(p.Kill)
	return p
}

// Kill ends the process at once with SIGKILL, as a crash would, and waits
// for it to exit.
func (p *Process) Kill() {
	_ = p.Cmd.Process.Signal(syscall.SIGKILL)
	<-p.Done
}
