package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestMain lets the test binary be the bunting command itself, so the
// crash test can start and kill -9 a real server process.
func TestMain(m *testing.M) {
	if os.Getenv("BUNTING_TEST_RUN_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

const crashAdminToken = "*:*.crash-test-secret"

// TestKill9KeepsAcknowledgedChanges runs writers against a real server
// process, kills it with SIGKILL in the middle of their writes, restarts it
// on the same database and checks: every change that was acknowledged is
// there with its event, and there is no change without its event and no
// event without its change (for the request in flight at the kill, either
// both or neither). Three rounds per database.
func TestKill9KeepsAcknowledgedChanges(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		total := 0
		for round := range 3 {
			srv := startCrashServer(t, db)
			acked := runCrashWriters(t, srv, round, 8) // kills srv in the middle
			total += len(acked.created) + len(acked.enabled)
			startCrashServer(t, db).stop(t) // a clean start after the crash
			checkAfterCrash(t, db, acked)
		}
		t.Logf("%s: %d acknowledged changes over 3 kills, all present with their events", db.Kind, total)
	})
}

type crashServer struct {
	url    string
	cmd    *exec.Cmd
	stderr *bytes.Buffer
}

// startCrashServer starts `bunting server` (this test binary) on db and
// waits until it answers.
func startCrashServer(t *testing.T, db servertest.Database) *crashServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(os.Args[0], "server", "-port", strconv.Itoa(port))
	cmd.Env = append(os.Environ(), "BUNTING_TEST_RUN_MAIN=1", "HTTP_HOST=127.0.0.1", "LOG_LEVEL=warn",
		"INIT_ADMIN_API_TOKENS="+crashAdminToken, "DATABASE_URL="+db.URL, "DATABASE_PATH="+db.Path)
	srv := &crashServer{url: "http://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, stderr: &bytes.Buffer{}}
	cmd.Stdout, cmd.Stderr = io.Discard, srv.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(srv.url + "/health")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return srv
			}
		}
		if time.Now().After(deadline) {
			srv.kill(t)
			t.Fatalf("the server did not start: %s", srv.stderr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kill sends SIGKILL: no shutdown, no deferred close, nothing flushed.
func (s *crashServer) kill(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = s.cmd.Wait()
}

// stop ends a server normally.
func (s *crashServer) stop(t *testing.T) {
	t.Helper()
	if err := s.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("server exit: %v: %s", err, s.stderr)
	}
}

// crashAcks are the changes the server acknowledged before it died.
type crashAcks struct {
	mu               sync.Mutex
	created, enabled []string
}

// runCrashWriters has writers create flags and turn them on (each a change
// with events) until the server is killed at a random moment 0.4-1.2 s in.
func runCrashWriters(t *testing.T, srv *crashServer, round, writers int) *crashAcks {
	acks := &crashAcks{}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: writers}}
	post := func(path, body string) int {
		req, _ := http.NewRequest("POST", srv.url+path, strings.NewReader(body))
		req.Header.Set("Authorization", crashAdminToken)
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			return 0 // the server is gone
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; ; k++ {
				name := fmt.Sprintf("crash-%d-%d-%d", round, w, k)
				switch code := post("/api/admin/projects/default/features", `{"name":"`+name+`"}`); code {
				case 201:
				case 0:
					return
				default:
					t.Errorf("create %s: %d", name, code)
					return
				}
				acks.add(&acks.created, name)
				switch code := post("/api/admin/projects/default/features/"+name+"/environments/development/on", ""); code {
				case 200:
				case 0:
					return
				default:
					t.Errorf("turn %s on: %d", name, code)
					return
				}
				acks.add(&acks.enabled, name)
			}
		}()
	}
	time.Sleep(time.Duration(400+rand.IntN(800)) * time.Millisecond)
	srv.kill(t)
	wg.Wait()
	if len(acks.created) == 0 {
		t.Fatalf("no change was acknowledged before the kill: %s", srv.stderr)
	}
	return acks
}

func (a *crashAcks) add(list *[]string, name string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	*list = append(*list, name)
}

// checkAfterCrash reads the database as the restarted server left it.
func checkAfterCrash(t *testing.T, db servertest.Database, acks *crashAcks) {
	t.Helper()
	st := servertest.OpenStore(t, db)
	names := func(query string) []string {
		rows, err := st.DB().Query(query)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			out = append(out, s)
		}
		slices.Sort(out)
		return out
	}
	flags := names(`SELECT name FROM features WHERE name LIKE 'crash-%'`)
	enabled := names(`SELECT feature_name FROM feature_environments WHERE environment = 'development' AND enabled AND feature_name LIKE 'crash-%'`)
	strategies := names(`SELECT feature_name FROM feature_strategies WHERE feature_name LIKE 'crash-%'`)
	createdEvents := names(`SELECT feature_name FROM events WHERE type = 'feature-created' AND feature_name LIKE 'crash-%'`)
	enabledEvents := names(`SELECT feature_name FROM events WHERE type = 'feature-environment-enabled' AND feature_name LIKE 'crash-%'`)
	strategyEvents := names(`SELECT feature_name FROM events WHERE type = 'feature-strategy-add' AND feature_name LIKE 'crash-%'`)
	for _, name := range acks.created {
		if _, found := slices.BinarySearch(flags, name); !found {
			t.Errorf("acknowledged flag %s is missing after the crash", name)
		}
	}
	for _, name := range acks.enabled {
		if _, found := slices.BinarySearch(enabled, name); !found {
			t.Errorf("flag %s was acknowledged on but is off after the crash", name)
		}
	}
	for _, c := range []struct {
		what            string
		changes, events []string
	}{
		{"flags and feature-created events", flags, createdEvents},
		{"flags on and feature-environment-enabled events", enabled, enabledEvents},
		{"strategies and feature-strategy-add events", strategies, strategyEvents},
	} {
		if !slices.Equal(c.changes, c.events) {
			t.Errorf("%s differ: %d changes, %d events\n  changes: %v\n  events:  %v", c.what, len(c.changes), len(c.events), c.changes, c.events)
		}
	}
}
