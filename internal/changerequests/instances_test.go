package changerequests_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/cli"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// TestMain lets a test start the test binary as the bunting command, so
// that it can kill a real server with SIGKILL.
func TestMain(m *testing.M) { testutil.Main(m, cli.Run) }

// Two PostgreSQL instances: a request scheduled for now+2s is applied
// once, within a second of its time, whichever instance holds the lease;
// one whose strategy another instance changed meanwhile is suspended, and
// both instances say why.
func TestTwoInstancesApplyAScheduleOnce(t *testing.T) {
	db := servertest.NewPostgres(t)
	h1 := servertest.Start(t, db)
	h2 := servertest.Start(t, db)
	ps := setup(t, h1, 1)
	createFlag(t, h1, "checkout")
	v := draft(t, h2, ps.alice, map[string]any{"feature": "checkout", "action": "updateEnabled", "payload": map[string]any{"enabled": true}})
	setState(h1, t, ps.alice, v.ID, map[string]any{"state": "In review"}).Want(t, 200)
	setState(h2, t, ps.bob, v.ID, map[string]any{"state": "Approved"}).Want(t, 200)
	at := time.Now().Add(2 * time.Second).UTC().Truncate(time.Millisecond)
	setState(h2, t, ps.alice, v.ID, map[string]any{"state": "Scheduled", "scheduledAt": at.Format(time.RFC3339Nano)}).Want(t, 200)
	var got crView
	waitFor(t, at.Add(3*time.Second), func() bool {
		got = getCR(t, h1, v.ID)
		return got.State == "Applied"
	})
	late := got.StateTimestamps["Applied"].Sub(at)
	t.Logf("applied %v after its time", late)
	if late < 0 || late > time.Second {
		t.Fatalf("applied %v after scheduledAt, want within 1s", late)
	}
	time.Sleep(500 * time.Millisecond) // a second application would show by now
	evs := eventTypes(t, h2)
	if n := count(evs, "change-request-applied"); n != 1 {
		t.Fatalf("%d change-request-applied events, want 1", n)
	}
	if n := count(evs, "feature-environment-enabled"); n != 1 {
		t.Fatalf("%d feature-environment-enabled events, want 1", n)
	}

	id := addStrategy(t, h1, "checkout", "production", "10")
	w := draft(t, h1, ps.alice, map[string]any{"feature": "checkout", "action": "updateStrategy",
		"payload": map[string]any{"id": id, "name": "flexibleRollout", "parameters": map[string]any{"rollout": "90", "stickiness": "default", "groupId": "checkout"}}})
	setState(h1, t, ps.alice, w.ID, map[string]any{"state": "In review"}).Want(t, 200)
	setState(h2, t, ps.bob, w.ID, map[string]any{"state": "Approved"}).Want(t, 200)
	at = time.Now().Add(1500 * time.Millisecond)
	setState(h1, t, ps.alice, w.ID, map[string]any{"state": "Scheduled", "scheduledAt": at.Format(time.RFC3339Nano)}).Want(t, 200)
	h2.Do(t, "DELETE", fmt.Sprintf("%s/features/checkout/environments/production/strategies/%s", project, id), ps.admin, nil).Want(t, 200)
	for _, h := range []*servertest.Harness{h1, h2} {
		var s crView
		waitFor(t, at.Add(3*time.Second), func() bool {
			s = getCR(t, h, w.ID)
			return s.Schedule != nil && s.Schedule.Status == "suspended"
		})
		if s.State != "Scheduled" || !strings.Contains(s.Schedule.Reason, "Strategy "+id+" of flag checkout in production was deleted") {
			t.Fatalf("suspended schedule: %+v", s.Schedule)
		}
	}
	if n := count(eventTypes(t, h1), "change-request-schedule-suspended"); n != 1 {
		t.Fatalf("%d change-request-schedule-suspended events, want 1", n)
	}
}

// child is `bunting server` in a process of its own.
type child struct {
	*testutil.Process
	base string
}

func startChild(t *testing.T, db servertest.Database, admin string) *child {
	t.Helper()
	port := testutil.FreePort(t)
	c := &child{base: "http://127.0.0.1:" + strconv.Itoa(port)}
	c.Process = testutil.StartBunting(t, map[string]string{"PORT": strconv.Itoa(port), "HTTP_HOST": "127.0.0.1",
		"INIT_ADMIN_API_TOKENS": admin, "LOG_LEVEL": "warn", "DATABASE_URL": db.URL,
		"SECRETS_KEY": "changerequests-test-secrets-key"}, "server")
	t.Cleanup(func() {
		c.Kill()
		if t.Failed() {
			t.Logf("child %s stderr:\n%s", c.base, c.Stderr.String())
		}
	})
	testutil.Eventually(t, 30*time.Second, "the server answers", func() bool {
		res, err := http.Get(c.base + "/health")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	})
	return c
}

// harness lets the helpers of api_test.go talk to a child.
func (c *child) harness(admin string) *servertest.Harness {
	return &servertest.Harness{URL: c.base, AdminToken: admin, Client: &http.Client{Timeout: 30 * time.Second}}
}

// userToken writes a person with a root role and a personal token into
// the shared database (servertest.Harness.UserToken on that store).
func userToken(t *testing.T, st *store.Store, username, role string) string {
	t.Helper()
	return (&servertest.Harness{Store: st}).UserToken(t, username, role)
}

// kill -9 of the instance holding the scheduling lease in the middle of
// applying a request: its transaction dies with it, the other instance
// takes the lease over and applies the request, once.
func TestKill9DuringScheduledApplication(t *testing.T) {
	db := servertest.NewPostgres(t)
	const admin = "*:*.kill9-admin"
	a := startChild(t, db, admin)
	st := servertest.OpenStore(t, db)
	testutil.Eventually(t, 10*time.Second, "instance A holds the lease", func() bool {
		holder, err := st.Q(context.Background()).LeaseHolder("schedules")
		return err == nil && holder != ""
	})
	b := startChild(t, db, admin)
	ha, hb := a.harness(admin), b.harness(admin)
	ps := people{alice: userToken(t, st, "alice", "Editor"), bob: userToken(t, st, "bob", "Editor"), admin: admin}
	ha.Do(t, "PUT", project+"/environments/production/change-requests/config", admin, map[string]any{"changeRequestsEnabled": true}).Want(t, 204)
	createFlag(t, ha, "checkout")
	v := draft(t, ha, ps.alice, map[string]any{"feature": "checkout", "action": "updateEnabled", "payload": map[string]any{"enabled": true}})
	setState(ha, t, ps.alice, v.ID, map[string]any{"state": "In review"}).Want(t, 200)
	setState(ha, t, ps.bob, v.ID, map[string]any{"state": "Approved"}).Want(t, 200)

	// Hold the flag's row, so that the application waits inside its
	// transaction.
	sqlDB, err := sql.Open("pgx", db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer sqlDB.Close()
	lock, err := sqlDB.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Rollback() }()
	if _, err := lock.Exec(`SELECT 1 FROM features WHERE name = 'checkout' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	holder, _ := st.Q(context.Background()).LeaseHolder("schedules")
	at := time.Now().Add(time.Second)
	setState(hb, t, ps.alice, v.ID, map[string]any{"state": "Scheduled", "scheduledAt": at.Format(time.RFC3339Nano)}).Want(t, 200)
	testutil.Eventually(t, 10*time.Second, "an application waits on the flag's lock", func() bool {
		var n int
		err := sqlDB.QueryRow(`SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n)
		return err == nil && n > 0
	})
	if now, _ := st.Q(context.Background()).LeaseHolder("schedules"); now != holder {
		t.Fatalf("the lease moved from %s to %s before the kill", holder, now)
	}
	a.Kill()
	if err := lock.Rollback(); err != nil {
		t.Fatal(err)
	}
	took := testutil.Eventually(t, 30*time.Second, "instance B applies the request", func() bool {
		return getCR(t, hb, v.ID).State == "Applied"
	})
	t.Logf("applied %v after the kill", took)
	if next, _ := st.Q(context.Background()).LeaseHolder("schedules"); next == holder {
		t.Fatalf("the dead instance %s still holds the lease", holder)
	}
	time.Sleep(500 * time.Millisecond)
	evs := eventTypes(t, hb)
	if n := count(evs, "change-request-applied"); n != 1 {
		t.Fatalf("%d change-request-applied events, want 1 (%s)", n, strings.Join(evs, " "))
	}
	if n := count(evs, "feature-environment-enabled"); n != 1 {
		t.Fatalf("%d feature-environment-enabled events, want 1", n)
	}
	if !sdkEnabledVia(t, hb, "checkout") {
		t.Fatal("the flag is not on after the application")
	}
}

// sdkEnabledVia reads the flag's production state through the admin API
// (a child has no known client token).
func sdkEnabledVia(t *testing.T, h *servertest.Harness, flag string) bool {
	t.Helper()
	var f struct {
		Environments []struct {
			Name    string
			Enabled bool
		}
	}
	h.Do(t, "GET", fmt.Sprintf("%s/features/%s", project, flag), h.AdminToken, nil).Want(t, 200).JSON(t, &f)
	for _, e := range f.Environments {
		if e.Name == "production" {
			return e.Enabled
		}
	}
	return false
}
