package server_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// tally counts the answers of one kind of request during an outage and
// keeps the first wrong one, so that a failing test shows how much failed.
type tally struct {
	order []string
	total map[string]int
	bad   map[string]int
	first map[string]string
}

func newTally() *tally {
	return &tally{total: map[string]int{}, bad: map[string]int{}, first: map[string]string{}}
}

// check records one answer of kind what; problem is "" when it was right.
func (ta *tally) check(what, problem string) {
	if _, ok := ta.total[what]; !ok {
		ta.order = append(ta.order, what)
	}
	ta.total[what]++
	if problem != "" {
		if ta.bad[what] == 0 {
			ta.first[what] = problem
		}
		ta.bad[what]++
	}
}

// report fails the test for every kind that had a wrong answer.
func (ta *tally) report(t *testing.T) {
	t.Helper()
	for _, what := range ta.order {
		if ta.bad[what] > 0 {
			t.Errorf("%s: %d of %d answers wrong; the first: %s", what, ta.bad[what], ta.total[what], ta.first[what])
		}
	}
}

// sameJSON reports whether two JSON bodies hold the same value.
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// storageError is what a refused write must answer: the named error, its
// status, Retry-After, and nothing like "Unexpected error".
func storageError(res *servertest.Response, status int, name string, fragments ...string) string {
	var body struct{ ID, Name, Message string }
	if res.Status != status || json.Unmarshal(res.Body, &body) != nil || body.Name != name || body.ID == "" {
		return fmt.Sprintf("want %d %s, got %s", status, name, res)
	}
	if ra, err := strconv.Atoi(res.Header.Get("Retry-After")); err != nil || ra <= 0 {
		return fmt.Sprintf("Retry-After %q on %s", res.Header.Get("Retry-After"), res)
	}
	for _, f := range fragments {
		if !strings.Contains(body.Message, f) {
			return fmt.Sprintf("message %q lacks %q", body.Message, f)
		}
	}
	return ""
}

// wantStatus is "" when res has the status (and, with same, the body
// equals before), or what is wrong.
func wantStatus(res *servertest.Response, status int, before []byte) string {
	if res.Status != status {
		return res.String()
	}
	if before != nil && !sameJSON(res.Body, before) {
		return fmt.Sprintf("the body changed: %s, before: %s", res.Body, before)
	}
	return ""
}

// newAPIToken creates an API token and returns its secret.
func newAPIToken(t *testing.T, h *servertest.Harness, name, typ string) string {
	t.Helper()
	return h.Do(t, "POST", "/api/admin/api-tokens", h.AdminToken, map[string]any{"tokenName": name, "type": typ,
		"environment": "development", "projects": []string{"default"}}).Want(t, 201).Map(t)["secret"].(string)
}

// flagNames lists the flags of the default project, sorted.
func flagNames(t *testing.T, h *servertest.Harness) []string {
	t.Helper()
	var body struct{ Features []struct{ Name string } }
	h.Do(t, "GET", featuresURL, h.AdminToken, nil).Want(t, 200).JSON(t, &body)
	var names []string
	for _, f := range body.Features {
		names = append(names, f.Name)
	}
	sort.Strings(names)
	return names
}

// sdkReads is what SDKs saw before an outage, to compare with what they
// see during it.
type sdkReads struct {
	clientTokens, frontendTokens []string
	features, frontend, ofrep    []byte
	etag                         string
}

var ofrepContext = map[string]any{"context": map[string]any{"targetingKey": "u1"}}

func readSDKs(t *testing.T, h *servertest.Harness, clientTokens, frontendTokens []string) *sdkReads {
	t.Helper()
	full := h.Do(t, "GET", "/api/client/features", clientTokens[0], nil).Want(t, 200)
	return &sdkReads{clientTokens: clientTokens, frontendTokens: frontendTokens, features: full.Body, etag: full.Header.Get("ETag"),
		frontend: h.Do(t, "GET", "/api/frontend", frontendTokens[0], nil).Want(t, 200).Body,
		ofrep:    ofrepFlags(h.Do(t, "POST", "/ofrep/v1/evaluate/flags", frontendTokens[0], ofrepContext).Want(t, 200)).Body}
}

// ofrepFlags is an OFREP bulk answer without its eventStreams, whose
// signed cursor changes every few minutes whatever the database does: the
// answer as a response whose body is only the evaluations.
func ofrepFlags(res *servertest.Response) *servertest.Response {
	var body struct {
		Flags json.RawMessage `json:"flags"`
	}
	if res.Status == 200 && json.Unmarshal(res.Body, &body) == nil {
		res.Body = body.Flags
	}
	return res
}

// check asks every SDK surface once with each token and records whether
// each answered as before.
func (s *sdkReads) check(t *testing.T, h *servertest.Harness, ta *tally) {
	t.Helper()
	for _, tok := range s.clientTokens {
		ta.check("GET /api/client/features", wantStatus(h.Do(t, "GET", "/api/client/features", tok, nil), 200, s.features))
		ta.check("GET /api/client/features (If-None-Match)", wantStatus(h.Do(t, "GET", "/api/client/features", tok, nil, "If-None-Match", s.etag), 304, nil))
		ta.check("GET /api/client/delta", wantStatus(h.Do(t, "GET", "/api/client/delta", tok, nil), 200, nil))
	}
	for _, tok := range s.frontendTokens {
		ta.check("GET /api/frontend", wantStatus(h.Do(t, "GET", "/api/frontend", tok, nil), 200, s.frontend))
		ta.check("POST /ofrep/v1/evaluate/flags", wantStatus(ofrepFlags(h.Do(t, "POST", "/ofrep/v1/evaluate/flags", tok, ofrepContext)), 200, s.ofrep))
	}
}

// followStream waits until the stream brings the update of flag, on the
// same connection or, when it ended meanwhile, after reconnecting from the
// last event id it delivered (as SDKs do).
func followStream(t *testing.T, h *servertest.Harness, st *sseStream, lastID int64, flag string) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-st.events:
			if !ok {
				t.Logf("the stream ended; reconnecting from event %d", lastID)
				st = openStream(t, h, "/api/client/streaming", h.ClientToken, "Last-Event-ID", strconv.FormatInt(lastID, 10))
				continue
			}
			lastID = max(lastID, ev.ID)
			if slices := types(ev); strings.Contains(strings.Join(slices, ","), "feature-updated:"+flag) {
				return
			}
		case <-deadline:
			t.Fatalf("the stream did not bring %s within 20 s of the database's return", flag)
		}
	}
}

// TestPostgresOutage takes PostgreSQL away from a running server for a
// while (connections refused, open sessions ended) and gives it back.
// During the outage SDK reads on every surface keep answering what they
// answered before, for tokens used before and tokens first used during it;
// writes and sign-in answer 503 DatabaseUnavailable with Retry-After, fast;
// /health stays 200 and /ready says 503. Afterwards writes work within a
// second, a stream that was open brings the new change, and every
// acknowledged write is there (and no refused one).
func TestPostgresOutage(t *testing.T) {
	t.Parallel()
	db := servertest.NewPostgres(t)
	h := servertest.Start(t, db, func(c *server.Config) { c.Streaming.Keepalive = 200 * time.Millisecond })
	createFlag(t, h, "before-a")
	h.Do(t, "POST", envPath("before-a", "development")+"/on", h.AdminToken, nil).Want(t, 200)
	createFlag(t, h, "before-b")
	acknowledged := []string{"before-a", "before-b"}
	// Tokens made before the outage and first presented during it.
	freshClient, freshFrontend := newAPIToken(t, h, "fresh-client", "client"), newAPIToken(t, h, "fresh-frontend", "frontend")
	before := readSDKs(t, h, []string{h.ClientToken, freshClient}, []string{h.FrontendToken, freshFrontend})
	st := openStream(t, h, "/api/client/streaming", h.ClientToken)
	connected := st.next(t)
	wantTypes(t, connected, "unleash-connected", "hydration:2")

	restore := servertest.CutPostgres(t, db)
	ta := newTally()
	// Longer than any cache of tokens would keep an entry (5 s).
	outage := time.Now()
	for i := 0; i < 3 || time.Since(outage) < 6*time.Second; i++ {
		before.check(t, h, ta)
		start := time.Now()
		res := h.Do(t, "POST", featuresURL, h.AdminToken, map[string]any{"name": "during-" + strconv.Itoa(i)})
		took := time.Since(start)
		problem := storageError(res, 503, "DatabaseUnavailable", "database")
		if problem == "" && took > time.Second {
			problem = fmt.Sprintf("answered after %v", took)
		}
		ta.check("POST "+featuresURL, problem)
		ta.check("POST /auth/simple/login", storageError(h.Do(t, "POST", "/auth/simple/login", "",
			map[string]string{"username": servertest.AdminUser, "password": servertest.AdminPassword}), 503, "DatabaseUnavailable"))
		ta.check("GET /health", wantStatus(h.Do(t, "GET", "/health", "", nil), 200, nil))
		ta.check("GET /ready", storageError(h.Do(t, "GET", "/ready", "", nil), 503, "DatabaseUnavailable"))
		time.Sleep(100 * time.Millisecond)
	}
	ta.report(t)

	restore()
	back := time.Now()
	for i := 0; ; i++ {
		res := h.Do(t, "POST", featuresURL, h.AdminToken, map[string]any{"name": "after"})
		if res.Status == 201 {
			t.Logf("the first write succeeded %v after the database's return (attempt %d)", time.Since(back), i+1)
			break
		}
		if problem := storageError(res, 503, "DatabaseUnavailable"); problem != "" || time.Since(back) > time.Second {
			t.Fatalf("writes do not work %v after the database's return: %s", time.Since(back), res)
		}
		time.Sleep(50 * time.Millisecond)
	}
	acknowledged = append(acknowledged, "after")
	h.Do(t, "GET", "/ready", "", nil).Want(t, 200)
	followStream(t, h, st, connected.ID, "after")
	sort.Strings(acknowledged)
	if got := flagNames(t, h); !reflect.DeepEqual(got, acknowledged) {
		t.Fatalf("flags after the outage %v, want exactly the acknowledged %v", got, acknowledged)
	}
	var features struct{ Features []struct{ Name string } }
	h.Do(t, "GET", "/api/client/features", freshClient, nil).Want(t, 200).JSON(t, &features)
	if len(features.Features) != 3 {
		t.Fatalf("the client API serves %d flags after the outage, want 3", len(features.Features))
	}
}

// TestPostgresReadOnly: the database turns read-only under a running
// server (as after a fail-over to a standby). SDK reads keep answering,
// writes answer 503 DatabaseReadOnly, /ready says so, and once the
// database is writable again writes succeed.
func TestPostgresReadOnly(t *testing.T) {
	t.Parallel()
	db := servertest.NewPostgres(t)
	h := servertest.Start(t, db)
	createFlag(t, h, "ro-before")
	before := readSDKs(t, h, []string{h.ClientToken}, []string{h.FrontendToken})
	restore := servertest.ReadOnlyPostgres(t, db)
	ta := newTally()
	for i := range 3 {
		before.check(t, h, ta)
		ta.check("POST "+featuresURL, storageError(h.Do(t, "POST", featuresURL, h.AdminToken, map[string]any{"name": "ro-" + strconv.Itoa(i)}),
			503, "DatabaseReadOnly", "read-only"))
		ta.check("GET /ready", storageError(h.Do(t, "GET", "/ready", "", nil), 503, "DatabaseReadOnly"))
		ta.check("GET /health", wantStatus(h.Do(t, "GET", "/health", "", nil), 200, nil))
	}
	ta.report(t)
	restore()
	createFlag(t, h, "ro-after")
	h.Do(t, "GET", "/ready", "", nil).Want(t, 200)
	if got := flagNames(t, h); !reflect.DeepEqual(got, []string{"ro-after", "ro-before"}) {
		t.Fatalf("flags %v", got)
	}
}

// mountTmpfs mounts a tmpfs of size bytes on a new directory, unmounted at
// cleanup (after the servers started later have stopped). It needs root;
// without it the test skips and says so.
func mountTmpfs(t *testing.T, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs to fill needs root (CI runs as root): run `sudo go test -run TestSQLiteDiskFull ./internal/server/` to test a full disk")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+strconv.Itoa(size), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here (%v: %s): a full disk is not tested", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fillDisk writes a file in dir until the file system is full, and
// returns its path.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			return path
		}
	}
}

// integrityCheck runs SQLite's integrity check on the server's database.
func integrityCheck(t *testing.T, h *servertest.Harness) {
	t.Helper()
	var result string
	if err := h.Store.DB().QueryRow(`PRAGMA integrity_check`).Scan(&result); err != nil || result != "ok" {
		t.Fatalf("integrity check: %q, %v", result, err)
	}
}

// TestSQLiteDiskFull runs the server on a small tmpfs and fills it. Writes
// answer 507 DatabaseFull ("the database disk is full") while SDK reads
// keep answering; once space is freed writes succeed again, every
// acknowledged write is there, no refused one is, and the database passes
// its integrity check.
func TestSQLiteDiskFull(t *testing.T) {
	t.Parallel()
	dir := mountTmpfs(t, 4<<20)
	h := servertest.Start(t, servertest.Database{Kind: "sqlite", Path: filepath.Join(dir, "bunting.db")})
	createFlag(t, h, "full-before")
	before := readSDKs(t, h, []string{h.ClientToken}, []string{h.FrontendToken})
	filler := fillDisk(t, dir)
	acknowledged := []string{"full-before"}
	ta := newTally()
	refused := 0
	// The log may still have room for a few changes: write until refused.
	for i := 0; refused < 3 && i < 500; i++ {
		name := "full-" + strconv.Itoa(i)
		res := h.Do(t, "POST", featuresURL, h.AdminToken, map[string]any{"name": name, "description": strings.Repeat("x", 2000)})
		if res.Status == 201 {
			acknowledged = append(acknowledged, name)
			continue
		}
		refused++
		ta.check("POST "+featuresURL, storageError(res, 507, "DatabaseFull", "the database disk is full"))
		ta.check("GET /ready", storageError(h.Do(t, "GET", "/ready", "", nil), 507, "DatabaseFull"))
		ta.check("GET /health", wantStatus(h.Do(t, "GET", "/health", "", nil), 200, nil))
		before.check(t, h, ta)
	}
	if refused == 0 {
		t.Fatal("500 writes on a full disk all succeeded")
	}
	ta.report(t)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	createFlag(t, h, "full-after")
	acknowledged = append(acknowledged, "full-after")
	h.Do(t, "GET", "/ready", "", nil).Want(t, 200)
	sort.Strings(acknowledged)
	if got := flagNames(t, h); !reflect.DeepEqual(got, acknowledged) {
		t.Fatalf("flags after the disk was full %v, want exactly the acknowledged %v", got, acknowledged)
	}
	integrityCheck(t, h)
}

// TestSQLiteLocked: another process holds SQLite's write lock. Writes wait
// for it as long as SQLite's busy timeout, then answer 503 DatabaseBusy;
// SDK reads keep answering meanwhile; once the lock is released writes
// succeed.
func TestSQLiteLocked(t *testing.T) {
	t.Parallel()
	db := servertest.NewSQLite(t)
	h := servertest.Start(t, db)
	createFlag(t, h, "locked-before")
	before := readSDKs(t, h, []string{h.ClientToken}, []string{h.FrontendToken})
	// The server writes in the background too (token last-seen times,
	// leases), so taking the lock waits for those like any writer would.
	other, err := sql.Open("sqlite", "file:"+db.Path+"?_pragma=busy_timeout(20000)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	ta := newTally()
	before.check(t, h, ta)
	ta.check("POST "+featuresURL, storageError(h.Do(t, "POST", featuresURL, h.AdminToken, map[string]any{"name": "locked-during"}),
		503, "DatabaseBusy", "locked"))
	before.check(t, h, ta)
	ta.report(t)
	if _, err := conn.ExecContext(context.Background(), `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	createFlag(t, h, "locked-after")
	if got := flagNames(t, h); !reflect.DeepEqual(got, []string{"locked-after", "locked-before"}) {
		t.Fatalf("flags %v", got)
	}
}

// TestRevokedTokenStopsWhereTheChangeIsSeen: two instances share a
// database; a client token revoked through one stops working on the other
// as soon as that one has seen the change (its store's revision reached the
// revocation's), not some cache lifetime later. A token created through one
// works on the other once seen, likewise.
func TestRevokedTokenStopsWhereTheChangeIsSeen(t *testing.T) {
	t.Parallel()
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		writer, reader := servertest.Start(t, db), servertest.Start(t, db)
		// seen waits until reader has seen everything writer committed
		// since reader's generation was before.
		seen := func(before int64, what string) {
			t.Helper()
			rev := writer.Store.Revision()
			deadline := time.Now().Add(20 * time.Second)
			for reader.Store.Revision() < rev || reader.Store.Generation() == before {
				if time.Now().After(deadline) {
					t.Fatalf("the other instance did not see %s within 20 s", what)
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		before := reader.Store.Generation()
		secret := newAPIToken(t, writer, "revoked-elsewhere", "client")
		seen(before, "the new token")
		reader.Do(t, "GET", "/api/client/features", secret, nil).Want(t, 200)
		before = reader.Store.Generation()
		writer.Do(t, "DELETE", "/api/admin/api-tokens/"+secret, writer.AdminToken, nil).Want(t, 200)
		seen(before, "the revocation")
		reader.Do(t, "GET", "/api/client/features", secret, nil).WantError(t, 401, "AuthenticationRequired")
		reader.Do(t, "GET", "/api/client/features", reader.ClientToken, nil).Want(t, 200)
	})
}
