// Package buildinfo says which build of Bunting is running: the version,
// the commit and the build date. Release builds stamp them with the linker
// (make build and make image do):
//
//	-ldflags "-X github.com/bunting-flags/bunting/internal/buildinfo.version=v1.2.3
//	          -X github.com/bunting-flags/bunting/internal/buildinfo.commit=abc1234…
//	          -X github.com/bunting-flags/bunting/internal/buildinfo.date=2026-11-25T10:00:00Z"
//
// A plain `go build` in a git checkout still knows its commit and its
// commit time from the VCS stamps the go command records, and `go install
// …@v1.2.3` knows its module version; only what neither gives stays empty.
package buildinfo

import (
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Set by the linker (-X); see the package comment.
var (
	version string
	commit  string
	date    string
)

// Info describes the running build.
type Info struct {
	// Version is the release version without a leading "v" ("1.2.3"), as
	// Unleash reports its own; "dev" for an unreleased build.
	Version string
	// Commit is the full commit hash, with "-dirty" when the work tree had
	// changes; empty when unknown.
	Commit string
	// Date is when the binary was built (or, without a stamp, the commit's
	// time); zero when unknown.
	Date time.Time
}

var (
	once   sync.Once
	cached Info
)

// Get returns the running build's information.
func Get() Info {
	once.Do(func() {
		bi, _ := debug.ReadBuildInfo()
		cached = resolve(version, commit, date, bi)
	})
	return cached
}

// resolve prefers the linker's stamps and falls back to the go command's
// module version and VCS stamps.
func resolve(version, commit, date string, bi *debug.BuildInfo) Info {
	var info Info
	var vcsRev, vcsTime string
	var dirty bool
	if bi != nil {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				vcsRev = s.Value
			case "vcs.time":
				vcsTime = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			version = bi.Main.Version
		}
	}
	if commit == "" && vcsRev != "" {
		commit = vcsRev
		if dirty {
			commit += "-dirty"
		}
	}
	if date == "" {
		date = vcsTime
	}
	info.Version = strings.TrimPrefix(version, "v")
	if info.Version == "" {
		info.Version = "dev"
	}
	info.Commit = commit
	if t, err := time.Parse(time.RFC3339, date); err == nil {
		info.Date = t.UTC()
	}
	return info
}

// ShortCommit is the commit's first 12 characters (and "-dirty").
func (i Info) ShortCommit() string {
	c, dirty := strings.CutSuffix(i.Commit, "-dirty")
	if len(c) > 12 {
		c = c[:12]
	}
	if dirty {
		c += "-dirty"
	}
	return c
}

// String is the one-line form `bunting version` prints:
// "1.2.3 (commit 0123456789ab, built 2026-11-25T10:00:00Z)".
func (i Info) String() string {
	var extra []string
	if i.Commit != "" {
		extra = append(extra, "commit "+i.ShortCommit())
	}
	if !i.Date.IsZero() {
		extra = append(extra, "built "+i.Date.Format(time.RFC3339))
	}
	if len(extra) == 0 {
		return i.Version
	}
	return i.Version + " (" + strings.Join(extra, ", ") + ")"
}
