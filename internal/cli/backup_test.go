package cli

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/testutil"
)

const backupAdminToken = "*:*.backup-test-admin-secret"

// liveServer is a `bunting server` child process on an SQLite file.
type liveServer struct {
	*buntingProcess
	url string
}

func startSQLiteServer(t *testing.T, dbPath string) liveServer {
	t.Helper()
	port := testutil.FreePort(t)
	p := startBunting(t, map[string]string{
		"DATABASE_PATH": dbPath, "HTTP_HOST": "127.0.0.1", "PORT": strconv.Itoa(port), "LOG_LEVEL": "error",
		"INIT_ADMIN_API_TOKENS": backupAdminToken, "INIT_CLIENT_API_TOKENS": "default:development.backup-test-client",
	}, "server")
	s := liveServer{p, "http://127.0.0.1:" + strconv.Itoa(port)}
	p.waitFor(t, s.url+"/health", nil, 200)
	return s
}

func (s liveServer) do(method, path string, body any) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.url+path, r)
	req.Header.Set("Authorization", backupAdminToken)
	if strings.Contains(path, "/api/client/") {
		req.Header.Set("Authorization", "default:development.backup-test-client")
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, b, err
}

func (s liveServer) get(t *testing.T, path string) []byte {
	t.Helper()
	code, b, err := s.do("GET", path, nil)
	if err != nil || code != 200 {
		t.Fatalf("GET %s: %d %v %s", path, code, err, b)
	}
	return b
}

// events is every event the server answers, by id.
func (s liveServer) events(t *testing.T) map[int64]json.RawMessage {
	t.Helper()
	out := map[int64]json.RawMessage{}
	for offset := 0; ; offset += 100 {
		code, b, err := s.do("POST", "/api/admin/events/search", map[string]int{"limit": 100, "offset": offset})
		if err != nil || code != 200 {
			t.Fatalf("events: %d %v %s", code, err, b)
		}
		var page struct {
			Events []json.RawMessage `json:"events"`
		}
		if err := json.Unmarshal(b, &page); err != nil {
			t.Fatal(err)
		}
		for _, e := range page.Events {
			var id struct{ ID int64 }
			_ = json.Unmarshal(e, &id)
			out[id.ID] = e
		}
		if len(page.Events) < 100 {
			return out
		}
	}
}

// flags is every flag of the default project, by name.
func (s liveServer) flags(t *testing.T) map[string]json.RawMessage {
	t.Helper()
	var list struct {
		Features []json.RawMessage `json:"features"`
	}
	if err := json.Unmarshal(s.get(t, "/api/admin/projects/default/features"), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]json.RawMessage{}
	for _, f := range list.Features {
		var n struct{ Name string }
		_ = json.Unmarshal(f, &n)
		out[n.Name] = f
	}
	return out
}

func runCommand(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), args, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// A backup taken while a server writes is one consistent moment of it: the
// server restored from it answers exactly the events up to some id and
// exactly the flags those events created, and that moment lies inside the
// writes. A backup taken after the writes restores everything. A restore
// onto the database of a running server is refused and changes nothing.
func TestBackupDuringWritesRestores(t *testing.T) {
	dir := t.TempDir()
	live := startSQLiteServer(t, filepath.Join(dir, "live.db"))

	var created atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writeErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			name := fmt.Sprintf("flag-%05d", i)
			code, b, err := live.do("POST", "/api/admin/projects/default/features", map[string]any{"name": name, "description": "written during the backup"})
			if err == nil && code == 201 {
				code, b, err = live.do("POST", "/api/admin/projects/default/features/"+name+"/environments/development/on", nil)
			}
			if err != nil || code >= 300 {
				writeErr = fmt.Errorf("write %s: %d %v %s", name, code, err, b)
				return
			}
			created.Store(int64(i))
		}
	}()
	waitCreated := func(n int64) {
		deadline := time.Now().Add(30 * time.Second)
		for created.Load() < n && writeErr == nil && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitCreated(20)

	online := filepath.Join(dir, "online.backup")
	before := created.Load()
	code, out, errOut := runCommand(t, map[string]string{"DATABASE_PATH": filepath.Join(dir, "live.db")}, "backup", "-to", online)
	after := created.Load()
	if code != 0 {
		t.Fatalf("backup during writes: exit %d: %s%s", code, out, errOut)
	}
	t.Logf("backup: %s", strings.TrimSpace(out))
	waitCreated(after + 10)
	close(stop)
	wg.Wait()
	if writeErr != nil {
		t.Fatal(writeErr)
	}
	total := created.Load()

	restoredDB := filepath.Join(dir, "restored", "bunting.db")
	if code, out, errOut := runCommand(t, map[string]string{"DATABASE_PATH": restoredDB}, "restore", "-from", online); code != 0 {
		t.Fatalf("restore: exit %d: %s%s", code, out, errOut)
	}
	restored := startSQLiteServer(t, restoredDB)

	liveEvents, gotEvents := live.events(t), restored.events(t)
	var cut int64
	for id := range gotEvents {
		cut = max(cut, id)
	}
	for id, e := range liveEvents {
		switch got, ok := gotEvents[id]; {
		case id <= cut && !ok:
			t.Errorf("event %d is missing from the restored server", id)
		case id <= cut && !bytes.Equal(got, e):
			t.Errorf("event %d differs:\nlive     %s\nrestored %s", id, e, got)
		case id > cut && ok:
			t.Errorf("event %d is in the restored server beyond its last event %d", id, cut)
		}
	}
	if len(gotEvents) > len(liveEvents) {
		t.Errorf("the restored server has %d events, the live one %d", len(gotEvents), len(liveEvents))
	}
	// Every flag whose creation event is in the copy is there as it was;
	// no other is.
	liveFlags, gotFlags := live.flags(t), restored.flags(t)
	inCopy := map[string]bool{}
	for _, e := range gotEvents {
		var ev struct {
			Type        string `json:"type"`
			FeatureName string `json:"featureName"`
		}
		_ = json.Unmarshal(e, &ev)
		if ev.Type == "feature-created" {
			inCopy[ev.FeatureName] = true
		}
	}
	for name := range inCopy {
		if _, ok := gotFlags[name]; !ok {
			t.Errorf("flag %s, created by an event in the copy, is missing", name)
		}
	}
	for name, f := range gotFlags {
		if !inCopy[name] {
			t.Errorf("flag %s is in the copy without its creation event", name)
		} else if lastEventOf(gotEvents, name) == lastEventOf(liveEvents, name) && !bytes.Equal(f, liveFlags[name]) {
			t.Errorf("flag %s differs:\nlive     %s\nrestored %s", name, liveFlags[name], f)
		}
	}
	n := int64(len(gotFlags))
	if n < before || n > after+1 || n >= total {
		t.Errorf("the backup holds %d flags; %d existed when it began, %d when it ended, %d in the end", n, before, after, total)
	}
	t.Logf("online backup: %d of %d flags (%d when the backup began, %d when it returned), %d of %d events", n, total, before, after, len(gotEvents), len(liveEvents))

	// The live server's database cannot be restored onto while it runs.
	code, out, errOut = runCommand(t, map[string]string{"DATABASE_PATH": filepath.Join(dir, "live.db")}, "restore", "-from", online)
	if code == 0 || !strings.Contains(errOut, "in use by a running Bunting") {
		t.Fatalf("restore onto a running server's database: exit %d: %s%s", code, out, errOut)
	}
	if got := len(live.flags(t)); int64(got) != total {
		t.Fatalf("after the refused restore the live server has %d flags, want %d", got, total)
	}

	// Quiet: a backup now restores everything.
	quiet := filepath.Join(dir, "quiet.backup")
	if code, out, errOut := runCommand(t, map[string]string{"DATABASE_PATH": filepath.Join(dir, "live.db")}, "backup", "-to", quiet); code != 0 {
		t.Fatalf("backup: exit %d: %s%s", code, out, errOut)
	}
	restored.stop(t)
	if code, out, errOut := runCommand(t, map[string]string{"DATABASE_PATH": restoredDB}, "restore", "-from", quiet); code != 0 {
		t.Fatalf("restore over the stopped server's database: exit %d: %s%s", code, out, errOut)
	}
	again := startSQLiteServer(t, restoredDB)
	if a, b := sortedJSON(live.events(t)), sortedJSON(again.events(t)); a != b {
		t.Errorf("events after a quiet backup differ:\nlive     %.400s\nrestored %.400s", a, b)
	}
	if a, b := sortedJSON(live.flags(t)), sortedJSON(again.flags(t)); a != b {
		t.Errorf("flags after a quiet backup differ:\nlive     %.400s\nrestored %.400s", a, b)
	}
	if a, b := string(live.get(t, "/api/client/features")), string(again.get(t, "/api/client/features")); a != b {
		t.Errorf("client features differ:\nlive     %.400s\nrestored %.400s", a, b)
	}
}

// lastEventOf is the id of the newest event naming the flag.
func lastEventOf(events map[int64]json.RawMessage, flag string) int64 {
	var last int64
	for id, e := range events {
		var ev struct {
			FeatureName string `json:"featureName"`
		}
		_ = json.Unmarshal(e, &ev)
		if ev.FeatureName == flag {
			last = max(last, id)
		}
	}
	return last
}

func sortedJSON[K int64 | string](m map[K]json.RawMessage) string {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%v=%s\n", k, m[k])
	}
	return b.String()
}

// Backup and restore refuse what they cannot do, with a clear message:
// PostgreSQL, a missing database, an existing backup file, a file that is
// not a Bunting database, and a missing file flag.
func TestBackupRestoreRefusals(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "b.db")
	if code, out, errOut := runCommand(t, map[string]string{"DATABASE_PATH": db}, "backup", "-to", filepath.Join(dir, "x")); code == 0 || !strings.Contains(errOut, "no SQLite database") {
		t.Errorf("backup of a missing database: %d %s%s", code, out, errOut)
	}
	if _, err := os.Stat(db); err == nil {
		t.Errorf("backup created the missing database")
	}
	pg := map[string]string{"DATABASE_URL": "postgres://u@127.0.0.1:1/x"}
	for _, args := range [][]string{{"backup", "-to", "f"}, {"restore", "-from", "f"}} {
		if code, _, errOut := runCommand(t, pg, args...); code == 0 || !strings.Contains(errOut, "pg_dump") {
			t.Errorf("%s on PostgreSQL: %d %s", args[0], code, errOut)
		}
	}
	for _, cmd := range []string{"backup", "restore"} {
		if code, _, errOut := runCommand(t, map[string]string{"DATABASE_PATH": db}, cmd); code == 0 || !strings.Contains(errOut, "FILE") {
			t.Errorf("%s without a file: %d %s", cmd, code, errOut)
		}
	}
	runServerOnce(t, db)
	existing := filepath.Join(dir, "exists")
	if err := os.WriteFile(existing, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := runCommand(t, map[string]string{"DATABASE_PATH": db}, "backup", "-to", existing); code == 0 || !strings.Contains(errOut, "exists") {
		t.Errorf("backup over an existing file: %d %s", code, errOut)
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep" {
		t.Errorf("the existing file was changed")
	}
	if code, _, errOut := runCommand(t, map[string]string{"DATABASE_PATH": db}, "restore", "-from", existing); code == 0 || !strings.Contains(errOut, "not an SQLite database") {
		t.Errorf("restore of a file that is not a database: %d %s", code, errOut)
	}

	// A backup a newer Bunting wrote is refused before anything changes.
	newer := filepath.Join(dir, "newer.backup")
	if code, _, errOut := runCommand(t, map[string]string{"DATABASE_PATH": db}, "backup", "-to", newer); code != 0 {
		t.Fatalf("backup: %s", errOut)
	}
	sqldb, err := sql.Open("sqlite", newer)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sqldb.Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES (99999, true)`); err != nil {
		t.Fatal(err)
	}
	sqldb.Close()
	before, _ := os.ReadFile(db)
	if code, _, errOut := runCommand(t, map[string]string{"DATABASE_PATH": db}, "restore", "-from", newer); code == 0 || !strings.Contains(errOut, "newer Bunting") || !strings.Contains(errOut, "99999") {
		t.Errorf("restore of a newer backup: %d %s", code, errOut)
	}
	if after, _ := os.ReadFile(db); !bytes.Equal(before, after) {
		t.Errorf("the refused restore changed the database")
	}
}
