package buildinfo

import (
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestResolve(t *testing.T) {
	vcs := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
		{Key: "vcs.time", Value: "2026-11-20T08:00:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	cases := []struct {
		name                  string
		version, commit, date string
		bi                    *debug.BuildInfo
		want                  string
	}{
		{"stamped", "v1.2.3", "fedcba9876543210", "2026-11-25T10:00:00Z", vcs, "1.2.3 (commit fedcba987654, built 2026-11-25T10:00:00Z)"},
		{"vcs fallback", "", "", "", vcs, "dev (commit 0123456789ab-dirty, built 2026-11-20T08:00:00Z)"},
		{"module version", "", "", "", &debug.BuildInfo{Main: debug.Module{Version: "v0.4.0"}}, "0.4.0"},
		{"nothing", "", "", "", nil, "dev"},
		{"bad date", "1.0.0", "", "yesterday", nil, "1.0.0"},
	}
	for _, c := range cases {
		if got := resolve(c.version, c.commit, c.date, c.bi).String(); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// The variables the Makefile sets with -X exist under the names it uses:
// a program built with those flags reports them.
func TestLinkerStamps(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	dir := t.TempDir()
	const pkg = "github.com/bunting-flags/bunting/internal/buildinfo"
	ldflags := "-X " + pkg + ".version=v9.8.7 -X " + pkg + ".commit=abcdef0123456789 -X " + pkg + ".date=2026-11-25T10:00:00Z"
	bin := filepath.Join(dir, "stamped")
	if out, err := exec.Command("go", "build", "-ldflags", ldflags, "-o", bin, "./testdata/stamped").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "9.8.7 (commit abcdef012345, built 2026-11-25T10:00:00Z)"; strings.TrimSpace(string(out)) != want {
		t.Fatalf("stamped program says %q, want %q", out, want)
	}
}
