//go:build unix

// Package docs holds the test of the documentation itself (README.md and
// every page under docs/):
//
//   - every relative link resolves: the file or directory exists and, with
//     a #fragment, the page has that heading (GitHub's anchors) or an
//     explicit id;
//   - every fenced block marked runnable, opened with "```sh run", runs:
//     each block with bash -euo pipefail in a fresh temporary directory,
//     with a bunting built from this checkout first on PATH and $REPO set
//     to the repository's root, and must exit 0 within two minutes;
//   - docs/architecture.md names every Go package of every module of the
//     repository, and its package tables name no package that is gone.
//
// Every problem is reported, each with its file and line, in one run.
// Whatever a block leaves running (a server started in the background) is
// killed with its process group when the block ends.
package docs

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode"
)

// page is one Markdown file, read once.
type page struct {
	path    string // relative to the repository root
	lines   []string
	anchors map[string]bool
	blocks  []block
}

// block is a fenced code block marked runnable.
type block struct {
	line   int
	script string
}

var (
	fenceRE    = regexp.MustCompile("^\\s{0,3}(`{3,}|~{3,})\\s*([^`]*)$")
	headingRE  = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	linkRE     = regexp.MustCompile(`!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	refDefRE   = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$`)
	idRE       = regexp.MustCompile(`(?:id|name)="([^"]+)"`)
	codeSpanRE = regexp.MustCompile("`+[^`]*`+")
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// pages reads README.md and every .md file under docs/.
func pages(t *testing.T, root string) map[string]*page {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, _ := filepath.Rel(root, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*page{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		out[f] = parse(f, string(b))
	}
	return out
}

// parse finds a page's anchors and runnable blocks.
func parse(path, text string) *page {
	p := &page{path: path, lines: strings.Split(text, "\n"), anchors: map[string]bool{}}
	seen := map[string]int{}
	var fence string
	var current *block
	var body strings.Builder
	for i, line := range p.lines {
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			switch {
			case fence == "":
				fence = m[1]
				if strings.Fields(m[2] + " x")[0] == "sh" && strings.Contains(" "+m[2]+" ", " run ") {
					current = &block{line: i + 1}
					body.Reset()
				}
				continue
			case strings.HasPrefix(m[1], fence[:1]) && len(m[1]) >= len(fence) && strings.TrimSpace(m[2]) == "":
				fence = ""
				if current != nil {
					current.script = body.String()
					p.blocks = append(p.blocks, *current)
					current = nil
				}
				continue
			}
		}
		if fence != "" {
			if current != nil {
				body.WriteString(line + "\n")
			}
			continue
		}
		for _, m := range idRE.FindAllStringSubmatch(line, -1) {
			p.anchors[m[1]] = true
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			slug := slugify(m[2])
			if n := seen[slug]; n > 0 {
				p.anchors[fmt.Sprintf("%s-%d", slug, n)] = true
			} else {
				p.anchors[slug] = true
			}
			seen[slug]++
		}
	}
	return p
}

// slugify is GitHub's heading anchor: the heading's text (links and
// emphasis removed) in lower case, without punctuation other than hyphens
// and underscores, spaces turned into hyphens.
func slugify(heading string) string {
	heading = linkRE.ReplaceAllStringFunc(heading, func(s string) string {
		return s[strings.Index(s, "[")+1 : strings.LastIndex(s, "]")]
	})
	heading = regexp.MustCompile(`<[^>]+>`).ReplaceAllString(heading, "")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// links lists a page's link targets with their lines, outside code.
func (p *page) links() []struct {
	line   int
	target string
} {
	var out []struct {
		line   int
		target string
	}
	var fence string
	for i, line := range p.lines {
		if m := fenceRE.FindStringSubmatch(line); m != nil {
			if fence == "" {
				fence = m[1]
				continue
			}
			if strings.HasPrefix(m[1], fence[:1]) && len(m[1]) >= len(fence) && strings.TrimSpace(m[2]) == "" {
				fence = ""
				continue
			}
		}
		if fence != "" {
			continue
		}
		line = codeSpanRE.ReplaceAllString(line, "")
		for _, m := range linkRE.FindAllStringSubmatch(line, -1) {
			out = append(out, struct {
				line   int
				target string
			}{i + 1, m[1]})
		}
		if m := refDefRE.FindStringSubmatch(line); m != nil {
			out = append(out, struct {
				line   int
				target string
			}{i + 1, m[1]})
		}
	}
	return out
}

// Every relative link in README.md and docs/ reaches an existing file or
// directory and, with a fragment, an anchor of that page.
func TestRelativeLinks(t *testing.T) {
	root := repoRoot(t)
	all := pages(t, root)
	checked := 0
	for _, path := range sortedKeys(all) {
		p := all[path]
		for _, l := range p.links() {
			u, err := url.Parse(l.target)
			if err != nil {
				t.Errorf("%s:%d: link %q does not parse: %v", path, l.line, l.target, err)
				continue
			}
			if u.Scheme != "" || u.Host != "" || strings.HasPrefix(l.target, "//") {
				continue // absolute: not this test's business
			}
			checked++
			targetPath := path
			if u.Path != "" {
				if strings.HasPrefix(u.Path, "/") {
					targetPath = strings.TrimPrefix(u.Path, "/")
				} else {
					targetPath = filepath.ToSlash(filepath.Join(filepath.Dir(path), u.Path))
				}
				if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(targetPath))); err != nil {
					t.Errorf("%s:%d: link %q: %s does not exist", path, l.line, l.target, targetPath)
					continue
				}
			}
			if u.Fragment == "" {
				continue
			}
			target, ok := all[targetPath]
			if !ok {
				if strings.HasSuffix(targetPath, ".md") {
					b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(targetPath)))
					if err != nil {
						t.Errorf("%s:%d: link %q: %v", path, l.line, l.target, err)
						continue
					}
					target = parse(targetPath, string(b))
					all[targetPath] = target
				} else {
					continue // a fragment of a non-Markdown file (a line number, say)
				}
			}
			if !target.anchors[strings.ToLower(u.Fragment)] && !target.anchors[u.Fragment] {
				t.Errorf("%s:%d: link %q: %s has no heading or id %q", path, l.line, l.target, targetPath, u.Fragment)
			}
		}
	}
	t.Logf("%d relative links checked in %d pages", checked, len(all))
}

// Every block opened with "```sh run" in README.md and docs/ runs and
// exits 0.
func TestRunnableBlocks(t *testing.T) {
	root := repoRoot(t)
	all := pages(t, root)
	var blocks []struct {
		path string
		block
	}
	for _, path := range sortedKeys(all) {
		for _, b := range all[path].blocks {
			blocks = append(blocks, struct {
				path string
				block
			}{path, b})
		}
	}
	if len(blocks) == 0 {
		t.Skip("no block is marked runnable (```sh run)")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "bunting"), "./cmd/bunting")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build bunting: %v\n%s", err, out)
	}
	var mu sync.Mutex
	for _, b := range blocks {
		t.Run(fmt.Sprintf("%s:%d", b.path, b.line), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", b.script)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "REPO="+root, "HOME="+dir)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			cmd.WaitDelay = 5 * time.Second
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if cmd.Process != nil {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				t.Errorf("%s:%d: the block failed (%v):\n%s\n--- output ---\n%s", b.path, b.line, err, indent(b.script), out.String())
			}
		})
	}
}

func indent(s string) string {
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		b.WriteString("    " + sc.Text() + "\n")
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// goPackages lists the repository's Go packages as paths from its root:
// every directory holding a .go file, as `go list ./...` finds them in
// each module (testdata, node_modules and hidden directories excluded).
func goPackages(t *testing.T, root string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") {
			rel, _ := filepath.Rel(root, filepath.Dir(p))
			out[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// packageRowRE is a row of a package table: its first cell is a package
// path in backticks.
var packageRowRE = regexp.MustCompile("^\\|\\s*`([a-z0-9_./-]+)`\\s*\\|")

// The architecture page lists every package, and only packages that exist.
func TestArchitectureListsEveryPackage(t *testing.T) {
	root := repoRoot(t)
	pkgs := goPackages(t, root)
	b, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, pkg := range sortedKeys(pkgs) {
		if !strings.Contains(text, "`"+pkg+"`") {
			t.Errorf("docs/architecture.md does not list the package %s (as `%s`)", pkg, pkg)
		}
	}
	inPackages := false
	for i, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "## ") {
			inPackages = strings.TrimSpace(line) == "## Packages"
		}
		if m := packageRowRE.FindStringSubmatch(line); inPackages && m != nil && !pkgs[m[1]] {
			t.Errorf("docs/architecture.md:%d lists %s, which is not a package of this repository", i+1, m[1])
		}
	}
	t.Logf("%d packages", len(pkgs))
}
