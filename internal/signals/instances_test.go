package signals_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// TestTwoInstancesProcessEachSignalOnce starts two servers on one database
// and posts signals to both at once: every signal is processed exactly
// once, and the runs follow the signals' order.
func TestTwoInstancesProcessEachSignalOnce(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		opts := func(c *server.Config) { c.Signals.RatePerSecond = 10000 }
		a := servertest.Start(t, db, opts)
		b := servertest.Start(t, db, opts)
		source, token := endpoint(t, a, "alerts")
		actor := serviceAccount(t, a, "bot", "Editor")
		flag(t, a, "checkout")
		body := actionSet("kill", actor, source, "TOGGLE_FEATURE_OFF", "checkout")
		delete(body["match"].(map[string]any), "payload")
		var set actionSetJSON
		a.Do(t, "POST", "/api/admin/projects/default/actions", a.AdminToken, body).Want(t, 201).JSON(t, &set)

		const perInstance = 15
		var wg sync.WaitGroup
		for _, h := range []*servertest.Harness{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range perInstance {
					signal(t, h, "alerts", token, map[string]any{"n": i}).Want(t, 200)
				}
			}()
		}
		wg.Wait()
		total := 2 * perInstance
		var rs []runJSON
		testutil.Eventually(t, 10*time.Second, "not every signal was processed", func() bool {
			var body struct{ ActionSetEvents []runJSON }
			b.Do(t, "GET", fmt.Sprintf("/api/admin/projects/default/actions/%d/events?limit=100", set.ID), b.AdminToken, nil).
				Want(t, 200).JSON(t, &body)
			rs = body.ActionSetEvents
			return len(rs) >= total && rs[0].State != "started"
		})
		allProcessed(t, a)
		var body2 struct{ ActionSetEvents []runJSON }
		b.Do(t, "GET", fmt.Sprintf("/api/admin/projects/default/actions/%d/events?limit=100", set.ID), b.AdminToken, nil).
			Want(t, 200).JSON(t, &body2)
		rs = body2.ActionSetEvents
		if len(rs) != total {
			t.Fatalf("%d runs for %d signals", len(rs), total)
		}
		seen := map[int64]bool{}
		for i, r := range rs {
			if seen[r.SignalID] {
				t.Fatalf("signal %d processed twice", r.SignalID)
			}
			seen[r.SignalID] = true
			if r.State != "success" {
				t.Fatalf("run %d: %+v", r.ID, r)
			}
			if i > 0 && r.SignalID >= rs[i-1].SignalID {
				t.Fatalf("runs out of signal order: signal %d ran after signal %d", rs[i-1].SignalID, r.SignalID)
			}
		}
		claimers := map[string]int{}
		rows, err := a.Store.DB().QueryContext(context.Background(), `SELECT claimed_by, COUNT(*) FROM signals GROUP BY claimed_by`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var by *string
			var n int
			if err := rows.Scan(&by, &n); err != nil {
				t.Fatal(err)
			}
			if by == nil {
				t.Fatalf("%d signals left unclaimed", n)
			}
			claimers[*by] = n
		}
		t.Logf("claims per instance: %v", claimers)
		if len(events(t, a, "feature-environment-disabled")) != 1 {
			t.Fatal("the flag should be switched off exactly once")
		}
	})
}

// TestClaimIsExclusive races claimers on two connections pools to one
// database, without the lease: each signal is claimed exactly once.
func TestClaimIsExclusive(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		stores := []*store.Store{servertest.OpenStore(t, db), servertest.OpenStore(t, db)}
		ctx := context.Background()
		var source int64
		err := stores[0].Tx(ctx, func(tx *store.Tx) error {
			var err error
			source, err = tx.InsertSignalEndpoint(store.SignalEndpoint{Name: "e", Enabled: true, CreatedAt: time.Now()})
			if err != nil {
				return err
			}
			return tx.Event(store.NewEvent{Type: "signal-endpoint-created", Actor: store.Actor{Name: "test"}})
		})
		if err != nil {
			t.Fatal(err)
		}
		const signals = 200
		for i := range signals {
			if _, err := stores[0].Q(ctx).InsertSignal(store.Signal{Source: store.SignalSourceEndpoint, SourceID: source,
				Payload: []byte(fmt.Sprintf(`{"n":%d}`, i)), CreatedAt: time.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		var (
			mu      sync.Mutex
			claimed = map[int64]string{}
			wg      sync.WaitGroup
		)
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				me := fmt.Sprint("worker-", w)
				q := stores[w%2].Q(ctx)
				for {
					sg, ok, err := q.ClaimNextSignal(me)
					if err != nil {
						t.Error(err)
						return
					}
					if !ok {
						return
					}
					mu.Lock()
					if prev, dup := claimed[sg.ID]; dup {
						t.Errorf("signal %d claimed by %s and %s", sg.ID, prev, me)
					}
					claimed[sg.ID] = me
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(claimed) != signals {
			t.Fatalf("%d of %d signals claimed", len(claimed), signals)
		}
		for id, me := range claimed {
			by, err := stores[1].Q(ctx).SignalClaimedBy(id)
			if err != nil || by == nil || *by != me {
				t.Fatalf("signal %d: stored claimer %v, want %s (%v)", id, by, me, err)
			}
		}
	})
}

// TestRateLimitAcrossInstances bursts signals at two servers sharing one
// database: together they accept no more than the limit per second.
func TestRateLimitAcrossInstances(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		opts := func(c *server.Config) { c.Signals.RatePerSecond = 2 }
		a := servertest.Start(t, db, opts)
		b := servertest.Start(t, db, opts)
		_, token := endpoint(t, a, "alerts")
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			accepted int
		)
		start := time.Now()
		for i := range 40 {
			h := []*servertest.Harness{a, b}[i%2]
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := signal(t, h, "alerts", token, nil)
				if res.Status != 200 && res.Status != 429 {
					t.Errorf("status %s", res)
				}
				mu.Lock()
				defer mu.Unlock()
				if res.Status == 200 {
					accepted++
				}
			}()
		}
		wg.Wait()
		windows := int(time.Since(start)/time.Second) + 2
		if accepted < 2 || accepted > 2*windows {
			t.Fatalf("two instances accepted %d signals over at most %d windows at 2 per second", accepted, windows)
		}
	})
}

// TestLeaseTakeover: when the instance holding the processing lease stops,
// or dies and its lease expires, another instance takes over.
func TestLeaseTakeover(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		var token string
		t.Run("first instance", func(t *testing.T) {
			a := servertest.Start(t, db, fastRate)
			_, token = endpoint(t, a, "alerts")
			signal(t, a, "alerts", token, nil).Want(t, 200)
			allProcessed(t, a)
		}) // a has stopped and released the lease
		// The stopped instance gave the lease up (rather than leaving the
		// next one to wait out its expiry).
		st := servertest.OpenStore(t, db)
		var holder sql.NullString
		var expires int64
		if err := st.DB().QueryRow(`SELECT holder, expires_at FROM leases WHERE name = 'actions'`).Scan(&holder, &expires); err != nil {
			t.Fatal(err)
		}
		if holder.Valid || expires != 0 {
			t.Fatalf("after the first instance stopped the lease is held by %q until %d", holder.String, expires)
		}
		b := servertest.Start(t, db, fastRate)
		signal(t, b, "alerts", token, nil).Want(t, 200)
		allProcessed(t, b)

		// A holder that died keeps the lease until it expires: the signal
		// is processed, but not before then.
		until := time.Now().Add(1500 * time.Millisecond)
		if _, err := b.Store.DB().Exec(`UPDATE leases SET holder = 'dead', expires_at = $1 WHERE name = 'actions'`, until.UnixMilli()); err != nil {
			t.Fatal(err)
		}
		signal(t, b, "alerts", token, nil).Want(t, 200)
		allProcessed(t, b)
		if early := time.Until(until); early > 0 {
			t.Fatalf("processed %v before the dead instance's lease expired", early)
		}
	})
}

// TestAbandonedClaimIsProcessed leaves a signal claimed by an instance that
// held the lease and then stopped without processing it: once that lease
// and claim are older than the lease duration, a running instance processes
// the signal — once.
func TestAbandonedClaimIsProcessed(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		const lease = 400 * time.Millisecond
		a := servertest.Start(t, db, func(c *server.Config) {
			c.Signals.RatePerSecond = 1000
			c.Signals.LeaseDuration = lease
		})
		source, token := endpoint(t, a, "alerts")
		actor := serviceAccount(t, a, "bot", "Editor")
		flag(t, a, "checkout")
		a.Do(t, "POST", "/api/admin/projects/default/actions", a.AdminToken,
			actionSet("kill", actor, source, "TOGGLE_FEATURE_OFF", "checkout")).Want(t, 201)

		// The "dead" instance takes the lease, so the running one cannot
		// process the signal first, then claims it and stops.
		q := a.Store.Q(context.Background())
		if held, err := q.AcquireLease("actions", "dead", time.Now().Add(lease)); err != nil || !held {
			t.Fatalf("lease: %v %v", held, err)
		}
		signal(t, a, "alerts", token, map[string]any{"severity": "critical"}).Want(t, 200)
		sg, ok, err := q.ClaimNextSignal("dead")
		if err != nil || !ok {
			t.Fatalf("claim: %v %v", ok, err)
		}
		if !flagEnabled(t, a, "checkout") {
			t.Fatal("the flag was switched off while the signal was claimed by the stopped instance")
		}

		waited := testutil.Eventually(t, 10*time.Second, "the abandoned signal was never processed", func() bool {
			return !flagEnabled(t, a, "checkout")
		})
		allProcessed(t, a)
		if waited < lease/2 {
			t.Fatalf("the claim was taken over after %v, before the lease (%v) ran out", waited, lease)
		}
		by, err := q.SignalClaimedBy(sg.ID)
		if err != nil || by == nil || *by == "dead" {
			t.Fatalf("signal %d claimed by %v (%v), want the running instance", sg.ID, by, err)
		}
		if n := len(events(t, a, "feature-environment-disabled")); n != 1 {
			t.Fatalf("%d feature-environment-disabled events, want 1", n)
		}
	})
}
