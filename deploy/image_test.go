package deploy

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The image's stamps, passed to make; the test finds them in the labels,
// in `bunting version` and in /api/admin/ui-config.
const (
	imageVersion = "v0.0.0-imagetest"
	imageCommit  = "0123456789abcdef0123456789abcdef01234567"
	imageDate    = "2026-01-02T03:04:05Z"
	// maxImageBytes is the ceiling: 40 MB, uncompressed.
	maxImageBytes = 40_000_000
)

// imageConfig is the part of an OCI image configuration the test reads.
type imageConfig struct {
	Config struct {
		User         string
		Env          []string
		Entrypoint   []string
		Cmd          []string
		WorkingDir   string
		ExposedPorts map[string]struct{}
		Volumes      map[string]struct{}
		Labels       map[string]string
	} `json:"config"`
}

// The image `make image` builds is what the Dockerfile promises: saved and
// unpacked here (containers cannot be started on these machines), its
// entrypoint runs from its own root file system with the image's Env, User
// and WorkingDir, answers /health in each mode, serves the web UI's
// sign-in page, writes only its volume, and reports the version it was
// stamped with.
func TestImage(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	engine := strings.TrimSpace(run(t, exec.Command("make", "-s", "-C", root, "image-engine")))
	if engine == "" {
		t.Skip("neither a Docker daemon, podman nor buildah is here, and `make image-deps` could not install podman: the image cannot be built on this machine")
	}
	tag := fmt.Sprintf("localhost/bunting-imagetest:%d", os.Getpid())
	archive := filepath.Join(t.TempDir(), "image.tar")
	started := time.Now()
	run(t, exec.Command("make", "-s", "-C", root, "image-save", "IMAGE="+tag, "IMAGE_ARCHIVE="+archive, "IMAGE_STAGE="+t.TempDir(),
		"VERSION="+imageVersion, "COMMIT="+imageCommit, "BUILD_DATE="+imageDate))
	t.Cleanup(func() { _ = exec.Command(engine, "rmi", "-f", tag).Run() })
	t.Logf("built and saved %s with %s in %s", tag, engine, time.Since(started).Round(100*time.Millisecond))

	cfg, rootfs, size := unpackImage(t, archive)
	t.Logf("image size: %.1f MB uncompressed (%d bytes), archive %.1f MB", float64(size)/1e6, size, float64(fileSize(t, archive))/1e6)
	if size > maxImageBytes {
		t.Errorf("the image is %d bytes, over %d", size, maxImageBytes)
	}

	c := cfg.Config
	uid, gid := checkUser(t, c.User, rootfs)
	if len(c.Entrypoint) != 1 || c.Entrypoint[0] != "/usr/local/bin/bunting" || len(c.Cmd) != 0 {
		t.Errorf("entrypoint %q, cmd %q: want bunting as the entrypoint and no command", c.Entrypoint, c.Cmd)
	}
	for _, p := range []string{"4242/tcp", "3000/tcp"} {
		if _, ok := c.ExposedPorts[p]; !ok {
			t.Errorf("port %s is not exposed: %v", p, c.ExposedPorts)
		}
	}
	if _, ok := c.Volumes["/data"]; !ok {
		t.Errorf("volumes %v: want /data", c.Volumes)
	}
	for k, want := range map[string]string{
		"org.opencontainers.image.version":  imageVersion,
		"org.opencontainers.image.revision": imageCommit,
		"org.opencontainers.image.created":  imageDate,
		"org.opencontainers.image.source":   "https://github.com/bunting-flags/bunting",
		"org.opencontainers.image.licenses": "",
	} {
		if got, ok := c.Labels[k]; !ok || (want != "" && got != want) || got == "" {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	checkFiles(t, rootfs, uid)

	env := func(extra ...string) []string { return append(append([]string{}, c.Env...), extra...) }
	version := runIn(t, rootfs, cfg, uid, gid, env(), "version")
	if want := "bunting 0.0.0-imagetest (commit 0123456789ab, built " + imageDate + ")"; strings.TrimSpace(version) != want {
		t.Errorf("bunting version printed %q, want %q", version, want)
	}

	// No command: the server and the proxy in one process, as
	// `docker run -e PORT=… -e PROXY_PORT=…` would start it.
	serverPort, proxyPort := freePort(t), freePort(t)
	all := startIn(t, rootfs, cfg, uid, gid, env("PORT="+serverPort, "PROXY_PORT="+proxyPort))
	server := "http://127.0.0.1:" + serverPort
	all.waitFor(t, server+"/health", 200)
	all.waitFor(t, "http://127.0.0.1:"+proxyPort+"/proxy/health", 200)
	// Seen from here, a process in a user namespace has this user's uid.
	if got, want := processUID(t, all.cmd.Process.Pid), map[bool]int{true: uid, false: os.Geteuid()}[os.Geteuid() == 0]; got != want {
		t.Errorf("the entrypoint runs as uid %d, want the image's user %d", got, want)
	}
	res := get(t, server+"/login", "")
	if res.code != 200 || !strings.Contains(res.body, `type="password"`) || !strings.Contains(strings.ToLower(res.body), "sign in") {
		t.Errorf("the sign-in page: %d %.300s", res.code, res.body)
	}
	var tokens struct {
		Admin  string `json:"adminToken"`
		Client string `json:"clientToken"`
	}
	tokenFile := filepath.Join(rootfs, "data", "quickstart-tokens.json")
	if b, err := os.ReadFile(tokenFile); err != nil || json.Unmarshal(b, &tokens) != nil {
		t.Fatalf("the data volume has no quickstart tokens: %v", err)
	}
	var ui struct {
		Version     string `json:"version"`
		VersionInfo struct {
			Current   struct{ OSS string }
			BuildDate string
		}
	}
	res = get(t, server+"/api/admin/ui-config", tokens.Admin)
	if err := json.Unmarshal([]byte(res.body), &ui); err != nil || res.code != 200 {
		t.Fatalf("ui-config: %d %s", res.code, res.body)
	}
	if ui.Version != "0.0.0-imagetest" || ui.VersionInfo.Current.OSS != "0.0.0-imagetest+0123456789ab" || ui.VersionInfo.BuildDate != imageDate {
		t.Errorf("ui-config version %+v", ui)
	}
	for _, f := range []string{"bunting.db", "quickstart-tokens.json"} {
		if st, err := os.Stat(filepath.Join(rootfs, "data", f)); err != nil || st.Sys().(*syscall.Stat_t).Uid != uint32(uid) {
			t.Errorf("/data/%s is not written by the image's user: %v", f, err)
		}
	}
	all.stop(t)

	// `server` and `proxy` select one mode each: the server on the same
	// volume, the proxy following it with the client token kept there.
	serverPort, proxyPort = freePort(t), freePort(t)
	srv := startIn(t, rootfs, cfg, uid, gid, env("PORT="+serverPort), "server")
	srv.waitFor(t, "http://127.0.0.1:"+serverPort+"/ready", 200)
	prx := startIn(t, rootfs, cfg, uid, gid, env("PORT="+proxyPort, "UPSTREAM_URL=http://127.0.0.1:"+serverPort+"/api",
		"UPSTREAM_API_TOKEN="+tokens.Client, "UPSTREAM_PROXY_CLIENT_KEYS=imagetest-key"), "proxy")
	prx.waitFor(t, "http://127.0.0.1:"+proxyPort+"/proxy/health", 200)
	if res := get(t, "http://127.0.0.1:"+serverPort+"/proxy/health", ""); res.code != 404 {
		t.Errorf("`server` also serves the proxy: %d", res.code)
	}
	prx.stop(t)
	srv.stop(t)
}

// checkUser checks the image's User the way the kubelet checks it under
// runAsNonRoot: numeric (a name cannot be verified without the image's
// /etc/passwd) and not 0; and that /etc/passwd names it.
func checkUser(t *testing.T, user, rootfs string) (int, int) {
	t.Helper()
	u, g, _ := strings.Cut(user, ":")
	uid, err1 := strconv.Atoi(u)
	gid, err2 := strconv.Atoi(g)
	if err1 != nil || err2 != nil || uid == 0 || gid == 0 {
		t.Fatalf("the image's user is %q: want numeric non-root uid:gid, which runAsNonRoot can verify", user)
	}
	passwd, err := os.ReadFile(filepath.Join(rootfs, "etc", "passwd"))
	if err != nil || !strings.Contains(string(passwd), fmt.Sprintf(":%d:%d:", uid, gid)) {
		t.Errorf("/etc/passwd does not name uid %d: %v %s", uid, err, passwd)
	}
	return uid, gid
}

// checkFiles checks that the image's files belong to root and only the
// volume and /tmp are writable by its user, and that TLS has CA
// certificates.
func checkFiles(t *testing.T, rootfs string, uid int) {
	t.Helper()
	for p, want := range map[string]func(os.FileInfo, *syscall.Stat_t) bool{
		"usr/local/bin/bunting": func(fi os.FileInfo, st *syscall.Stat_t) bool {
			return st.Uid == 0 && fi.Mode().Perm()&0o022 == 0 && fi.Mode().Perm()&0o111 != 0
		},
		"etc/ssl/certs/ca-certificates.crt": func(fi os.FileInfo, st *syscall.Stat_t) bool { return st.Uid == 0 && fi.Size() > 1000 },
		"data":                              func(fi os.FileInfo, st *syscall.Stat_t) bool { return fi.IsDir() && st.Uid == uint32(uid) },
		"tmp": func(fi os.FileInfo, st *syscall.Stat_t) bool {
			return fi.IsDir() && fi.Mode()&os.ModeSticky != 0 && fi.Mode().Perm() == 0o777
		},
	} {
		fi, err := os.Lstat(filepath.Join(rootfs, p))
		if err != nil {
			t.Errorf("/%s: %v", p, err)
			continue
		}
		if !want(fi, fi.Sys().(*syscall.Stat_t)) {
			t.Errorf("/%s: mode %v, owner %d", p, fi.Mode(), fi.Sys().(*syscall.Stat_t).Uid)
		}
	}
}

// unpackImage reads an image archive (OCI layout, or docker save's),
// applies its layers in order into a directory and returns its
// configuration, the directory and the layers' uncompressed size.
func unpackImage(t *testing.T, archive string) (imageConfig, string, int64) {
	t.Helper()
	dir := t.TempDir()
	layout := filepath.Join(dir, "layout")
	if err := extract(archive, layout, false); err != nil {
		t.Fatalf("unpack %s: %v", archive, err)
	}
	read := func(p string, v any) {
		b, err := os.ReadFile(filepath.Join(layout, filepath.FromSlash(p)))
		if err == nil {
			err = json.Unmarshal(b, v)
		}
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	blob := func(digest string) string { return "blobs/" + strings.Replace(digest, ":", "/", 1) }
	var configPath string
	var layers []string
	if _, err := os.Stat(filepath.Join(layout, "manifest.json")); err == nil {
		var m []struct {
			Config string
			Layers []string
		}
		read("manifest.json", &m)
		if len(m) != 1 {
			t.Fatalf("manifest.json lists %d images", len(m))
		}
		configPath, layers = m[0].Config, m[0].Layers
	} else {
		type descriptor struct{ MediaType, Digest string }
		var index struct{ Manifests []descriptor }
		read("index.json", &index)
		for len(index.Manifests) == 1 && strings.Contains(index.Manifests[0].MediaType, "index") {
			read(blob(index.Manifests[0].Digest), &index)
		}
		if len(index.Manifests) != 1 {
			t.Fatalf("index.json lists %d manifests", len(index.Manifests))
		}
		var manifest struct {
			Config descriptor
			Layers []descriptor
		}
		read(blob(index.Manifests[0].Digest), &manifest)
		configPath = blob(manifest.Config.Digest)
		for _, l := range manifest.Layers {
			layers = append(layers, blob(l.Digest))
		}
	}
	var cfg imageConfig
	read(configPath, &cfg)
	rootfs := filepath.Join(dir, "rootfs")
	var size int64
	for _, l := range layers {
		n, err := applyLayer(filepath.Join(layout, filepath.FromSlash(l)), rootfs)
		if err != nil {
			t.Fatalf("layer %s: %v", l, err)
		}
		size += n
	}
	return cfg, rootfs, size
}

// applyLayer applies one layer (tar, gzip-compressed or not) onto rootfs,
// with its whiteouts, and returns its uncompressed size.
func applyLayer(file, rootfs string) (int64, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, _ := br.Peek(2); bytes.Equal(magic, []byte{0x1f, 0x8b}) {
		gz, err := gzip.NewReader(br)
		if err != nil {
			return 0, err
		}
		r = gz
	}
	counter := &countingReader{r: r}
	return counter.n, applyTar(counter, rootfs, true)
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func extract(archive, dir string, owners bool) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	return applyTar(f, dir, owners)
}

// applyTar writes a tar stream under dir: files, directories, links, with
// their modes (and owners when owners is set and this is root); OCI
// whiteouts remove what lower layers had.
func applyTar(r io.Reader, dir string, owners bool) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean("/" + h.Name)
		target := filepath.Join(dir, filepath.FromSlash(name))
		base := path.Base(name)
		if base == ".wh..wh..opq" {
			entries, _ := os.ReadDir(filepath.Dir(target))
			for _, e := range entries {
				_ = os.RemoveAll(filepath.Join(filepath.Dir(target), e.Name()))
			}
			continue
		}
		if strings.HasPrefix(base, ".wh.") {
			_ = os.RemoveAll(filepath.Join(filepath.Dir(target), strings.TrimPrefix(base, ".wh.")))
			continue
		}
		if name == "/" {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		mode := h.FileInfo().Mode()
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			_ = os.RemoveAll(target)
			out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return err
			}
			_, err = io.Copy(out, tr)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		case tar.TypeSymlink:
			_ = os.RemoveAll(target)
			if err := os.Symlink(h.Linkname, target); err != nil {
				return err
			}
			continue
		case tar.TypeLink:
			_ = os.RemoveAll(target)
			if err := os.Link(filepath.Join(dir, filepath.FromSlash(path.Clean("/"+h.Linkname))), target); err != nil {
				return err
			}
			continue
		default:
			continue // devices and the like: an image of Bunting has none
		}
		if owners && os.Geteuid() == 0 {
			if err := os.Lchown(target, h.Uid, h.Gid); err != nil {
				return err
			}
		}
		if err := os.Chmod(target, mode&(os.ModePerm|os.ModeSticky|os.ModeSetuid|os.ModeSetgid)); err != nil {
			return err
		}
	}
}

// imageProcess is the entrypoint running from the unpacked image.
type imageProcess struct {
	cmd    *exec.Cmd
	output *bytes.Buffer
	done   chan struct{}
}

// command prepares the image's entrypoint with args, chrooted into rootfs,
// as the image's user, in its working directory, with exactly env. As
// root it switches user directly; otherwise it maps the image's user onto
// this one in a new user namespace.
func command(rootfs string, c imageConfig, uid, gid int, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(c.Config.Entrypoint[0], append(append(append([]string{}, c.Config.Entrypoint[1:]...), c.Config.Cmd...), args...)...)
	cmd.Env = env
	cmd.Dir = c.Config.WorkingDir
	if cmd.Dir == "" {
		cmd.Dir = "/"
	}
	attr := &syscall.SysProcAttr{Chroot: rootfs, Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}}
	if os.Geteuid() != 0 {
		attr.Cloneflags = syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: os.Geteuid(), Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: os.Getegid(), Size: 1}}
	}
	cmd.SysProcAttr = attr
	return cmd
}

func runIn(t *testing.T, rootfs string, c imageConfig, uid, gid int, env []string, args ...string) string {
	t.Helper()
	out, err := command(rootfs, c, uid, gid, env, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("bunting %v in the image: %v\n%s", args, err, out)
	}
	return string(out)
}

func startIn(t *testing.T, rootfs string, c imageConfig, uid, gid int, env []string, args ...string) *imageProcess {
	t.Helper()
	p := &imageProcess{cmd: command(rootfs, c, uid, gid, env, args...), output: &bytes.Buffer{}, done: make(chan struct{})}
	w := &lockedWriter{w: p.output}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start bunting %v from the image: %v", args, err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop sends SIGTERM, as a container runtime does, and expects a clean exit.
func (p *imageProcess) stop(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
		if code := p.cmd.ProcessState.ExitCode(); code != 0 {
			t.Errorf("bunting %v exited %d on SIGTERM: %s", p.cmd.Args[1:], code, p.output)
		}
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		t.Errorf("bunting %v did not stop on SIGTERM", p.cmd.Args[1:])
	}
}

func (p *imageProcess) waitFor(t *testing.T, url string, want int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(url)
		if err == nil {
			res.Body.Close()
			if want == 0 || res.StatusCode == want {
				return
			}
		}
		select {
		case <-p.done:
			t.Fatalf("bunting %v exited: %s", p.cmd.Args[1:], p.output)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never answered %d (%v): %s", url, want, err, p.output)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type lockedWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type answer struct {
	code int
	body string
}

func get(t *testing.T, url, token string) answer {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{res.StatusCode, string(b)}
}

// processUID reads a process's real uid from /proc.
func processUID(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "Uid:"); ok {
			uid, _ := strconv.Atoi(strings.Fields(rest)[0])
			return uid
		}
	}
	t.Fatalf("no Uid line in /proc/%d/status", pid)
	return 0
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

func run(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s%s", cmd.Args, err, out.String(), errOut.String())
	}
	return out.String()
}
