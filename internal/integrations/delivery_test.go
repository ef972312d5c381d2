package integrations_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// Filters by event type, project and environment hold: each integration
// gets exactly the events its filters match, in event order.
func TestDeliveryFilters(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		h.Do(t, "POST", "/api/admin/projects", h.AdminToken, map[string]any{"id": "web", "name": "web"}).Want(t, 201)
		all := newReceiver(t, nil)
		onlyEnabled := newReceiver(t, nil)
		onlyWeb := newReceiver(t, nil)
		onlyProd := newReceiver(t, nil)
		createAddon(t, h, webhook(all.URL, nil, "feature-created", "feature-environment-enabled", "feature-environment-disabled"))
		createAddon(t, h, webhook(onlyEnabled.URL, nil, "feature-environment-enabled"))
		b := webhook(onlyWeb.URL, nil, "feature-environment-enabled", "feature-environment-disabled")
		b["projects"] = []string{"web"}
		createAddon(t, h, b)
		b = webhook(onlyProd.URL, nil, "feature-environment-enabled", "feature-environment-disabled")
		b["environments"] = []string{"production"}
		createAddon(t, h, b)
		disabled := newReceiver(t, nil)
		b = webhook(disabled.URL, nil)
		b["enabled"] = false
		createAddon(t, h, b)

		createFlag(t, h, "default", "a")
		h.Do(t, "POST", "/api/admin/projects/web/environments", h.AdminToken, map[string]any{"environment": "production"})
		createFlag(t, h, "web", "b")
		toggle(t, h, "default", "a", "development", true)  // 1
		toggle(t, h, "default", "a", "production", true)   // 2
		toggle(t, h, "web", "b", "development", true)      // 3
		toggle(t, h, "web", "b", "production", true)       // 4
		toggle(t, h, "web", "b", "production", false)      // 5
		toggle(t, h, "default", "a", "development", false) // 6

		type key struct{ Type, Flag, Env string }
		want := map[*receiver][]key{
			all: {{"feature-created", "a", ""}, {"feature-created", "b", ""}, {"feature-environment-enabled", "a", "development"},
				{"feature-environment-enabled", "a", "production"}, {"feature-environment-enabled", "b", "development"},
				{"feature-environment-enabled", "b", "production"}, {"feature-environment-disabled", "b", "production"},
				{"feature-environment-disabled", "a", "development"}},
			onlyEnabled: {{"feature-environment-enabled", "a", "development"}, {"feature-environment-enabled", "a", "production"},
				{"feature-environment-enabled", "b", "development"}, {"feature-environment-enabled", "b", "production"}},
			onlyWeb: {{"feature-environment-enabled", "b", "development"}, {"feature-environment-enabled", "b", "production"},
				{"feature-environment-disabled", "b", "production"}},
			onlyProd: {{"feature-environment-enabled", "a", "production"}, {"feature-environment-enabled", "b", "production"},
				{"feature-environment-disabled", "b", "production"}},
		}
		for rc, keys := range want {
			rc.waitHits(t, len(keys), 10*time.Second)
		}
		time.Sleep(300 * time.Millisecond) // anything extra would have come by now
		for rc, keys := range want {
			var got []key
			for _, ev := range rc.events(t) {
				env, _ := ev["environment"].(string)
				got = append(got, key{ev["type"].(string), ev["featureName"].(string), env})
			}
			if !slices.Equal(got, keys) {
				t.Errorf("receiver got %v\nwant %v", got, keys)
			}
		}
		if n := len(disabled.got()); n != 0 {
			t.Errorf("a disabled integration got %d deliveries", n)
		}
	}, allowLoopback)
}

// The body template renders with event, eventJson and eventMarkdown in
// scope, as Unleash's webhook; partials read no files.
func TestWebhookBodyTemplate(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		rc := newReceiver(t, nil)
		tmpl := `{"kind": "{{event.type}}", "flag": "{{event.featureName}}", "env": "{{event.environment}}", ` +
			`"by": "{{event.createdBy}}", "text": "{{eventMarkdown}}", "json": {{{eventJson}}}, "file": "{{> /etc/hostname}}"}`
		createAddon(t, h, webhook(rc.URL, map[string]any{"bodyTemplate": tmpl, "contentType": "application/vnd.bunting+json"}, "feature-environment-enabled"))
		createFlag(t, h, "default", "tmpl_flag")
		toggle(t, h, "default", "tmpl_flag", "production", true)
		got := rc.waitHits(t, 1, 10*time.Second)[0]
		var body struct {
			Kind, Flag, Env, By, Text, JSON, File string
		}
		if err := json.Unmarshal(got.Body, &body); err != nil {
			t.Fatalf("the rendered body is not JSON: %v\n%s", err, got.Body)
		}
		if body.Kind != "feature-environment-enabled" || body.Flag != "tmpl_flag" || body.Env != "production" || body.By == "" {
			t.Fatalf("rendered: %s", got.Body)
		}
		if !strings.Contains(body.Text, "enabled the flag **tmpl\\_flag** in **production**") {
			t.Fatalf("eventMarkdown: %q", body.Text)
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(body.JSON), &ev); err != nil || ev["featureName"] != "tmpl_flag" {
			t.Fatalf("eventJson is not the event as a JSON string: %q", body.JSON)
		}
		if body.File != "" {
			t.Fatalf("a partial read a file: %q", body.File)
		}
		if ct := got.Header.Get("Content-Type"); ct != "application/vnd.bunting+json" {
			t.Fatalf("content type %q", ct)
		}
	}, allowLoopback)
}

// A receiver answering 500 gets the delivery again, with the same
// webhook-id, until it answers 200; a 4xx other than 429 is final; the
// log has every attempt.
func TestRetryWithTheSameID(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		flaky := newReceiver(t, func(n int, _ *http.Request) int {
			if n == 1 {
				return 500
			}
			return 200
		})
		refusing := newReceiver(t, func(int, *http.Request) int { return 404 })
		limited := newReceiver(t, func(n int, _ *http.Request) int {
			if n == 1 {
				return 429
			}
			return 204
		})
		a := createAddon(t, h, webhook(flaky.URL, nil, "feature-created"))
		b := createAddon(t, h, webhook(refusing.URL, nil, "feature-created"))
		createAddon(t, h, webhook(limited.URL, nil, "feature-created"))
		createFlag(t, h, "default", "retried")
		createFlag(t, h, "default", "second")

		hits := flaky.waitHits(t, 3, 15*time.Second)
		id1, id2 := hits[0].Header.Get("webhook-id"), hits[1].Header.Get("webhook-id")
		if id1 == "" || id1 != id2 {
			t.Fatalf("the retry has webhook-id %q, the first attempt %q", id2, id1)
		}
		if hits[0].Header.Get("webhook-signature") == "" || string(hits[0].Body) != string(hits[1].Body) {
			t.Fatal("the retry differs from the first attempt")
		}
		if hits[2].Header.Get("webhook-id") == id1 {
			t.Fatal("the next event has the same delivery id")
		}
		var first map[string]any
		_ = json.Unmarshal(hits[2].Body, &first)
		if first["featureName"] != "second" {
			t.Fatalf("the second flag's event came out of order: %s", hits[2].Body)
		}
		if l := limited.waitHits(t, 3, 15*time.Second); l[0].Header.Get("webhook-id") != l[1].Header.Get("webhook-id") {
			t.Fatal("a 429 is retried with the same id")
		}
		refusing.waitHits(t, 2, 10*time.Second)
		time.Sleep(time.Second)
		if n := len(refusing.got()); n != 2 {
			t.Fatalf("a 404 was retried: %d requests for 2 events", n)
		}

		log := addonLog(t, h, a["id"])
		var states []string
		for i := len(log) - 1; i >= 0; i-- {
			d := log[i]["details"].(map[string]any)
			states = append(states, fmt.Sprintf("%v %v %v", log[i]["state"], d["statusCode"], d["retry"]))
		}
		if !slices.Equal(states, []string{"failed 500 true", "success 200 <nil>", "success 200 <nil>"}) {
			t.Fatalf("flaky log: %v", states)
		}
		if s := log[len(log)-1]["stateDetails"].(string); !strings.Contains(s, "500") || !strings.Contains(s, "Will retry") {
			t.Fatalf("stateDetails: %q", s)
		}
		rlog := addonLog(t, h, b["id"])
		if len(rlog) != 2 || rlog[0]["state"] != "failed" || !strings.Contains(rlog[0]["stateDetails"].(string), "Not retried") {
			t.Fatalf("refusing log: %v", rlog)
		}
	}, allowLoopback)
}

// One receiver that hangs for 30 s does not delay another's deliveries.
func TestHangingReceiverDelaysNoOther(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		release := make(chan struct{})
		hanging := newReceiver(t, func(int, *http.Request) int {
			select {
			case <-release:
			case <-time.After(30 * time.Second):
			}
			return 200
		})
		t.Cleanup(func() { close(release) })
		fast := newReceiver(t, nil)
		createAddon(t, h, webhook(hanging.URL, nil, "feature-created"))
		createAddon(t, h, webhook(fast.URL, nil, "feature-created"))
		start := time.Now()
		for i := range 5 {
			createFlag(t, h, "default", fmt.Sprintf("hang-%d", i))
		}
		fast.waitHits(t, 5, 5*time.Second)
		if took := time.Since(start); took > 3*time.Second {
			t.Fatalf("the fast receiver got its 5 deliveries after %s", took)
		}
		if n := len(hanging.got()); n != 1 {
			t.Fatalf("the hanging receiver has %d requests in flight; its lane sends one at a time", n)
		}
	}, allowLoopback)
}

// A change and its deliveries commit together: a rolled-back transaction
// leaves no outbox row, a committed one has its rows.
func TestOutboxIsTransactional(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		rc := newReceiver(t, nil)
		createAddon(t, h, webhook(rc.URL, nil, "feature-created"))
		before, _ := h.Store.Q(context.Background()).CountDeliveries(0)
		boom := errors.New("boom")
		err := h.Store.Tx(context.Background(), func(tx *store.Tx) error {
			if err := tx.Event(store.NewEvent{Type: "feature-created", Actor: store.Actor{Name: "t"}, FeatureName: "ghost", Project: "default"}); err != nil {
				return err
			}
			// SQLite writes the event (and the trigger its outbox row) at
			// once; PostgreSQL when the function has returned.
			n, err := tx.CountDeliveries(0)
			if h.DB.Kind == "sqlite" && (err != nil || n != before+1) {
				t.Errorf("inside the transaction: %d outbox rows (err %v), want %d", n, err, before+1)
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		if n, _ := h.Store.Q(context.Background()).CountDeliveries(0); n != before {
			t.Fatalf("a rolled-back event left %d outbox rows (had %d)", n, before)
		}
		createFlag(t, h, "default", "real")
		hits := rc.waitHits(t, 1, 10*time.Second)
		time.Sleep(300 * time.Millisecond)
		if len(rc.got()) != 1 || !strings.Contains(string(hits[0].Body), `"real"`) {
			t.Fatalf("deliveries: %d, first %s", len(rc.got()), hits[0].Body)
		}
	}, allowLoopback)
}

// On PostgreSQL the outbox sees an integration committed while an event's
// statement waited for the event lock: the trigger's query takes its own
// snapshot after the lock is held.
func TestOutboxSeesIntegrationCommittedDuringEventLock(t *testing.T) {
	db := servertest.NewPostgres(t)
	st := servertest.OpenStore(t, db)
	ctx := context.Background()
	hold, err := st.DB().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := hold.ExecContext(ctx, `SELECT pg_advisory_xact_lock(1651863156)`); err != nil { // store's eventLockKey
		t.Fatal(err)
	}
	if _, err := hold.ExecContext(ctx, `INSERT INTO integrations (provider, parameters, created_at) VALUES ('webhook', '{}', 0)`); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- st.Tx(ctx, func(tx *store.Tx) error {
			return tx.Event(store.NewEvent{Type: "feature-created", Actor: store.Actor{Name: "t"}, FeatureName: "raced", Project: "default"})
		})
	}()
	time.Sleep(300 * time.Millisecond) // the event's statement is now waiting for the lock
	if err := hold.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	n, err := st.Q(ctx).CountDeliveries(0)
	if err != nil || n != 1 {
		t.Fatalf("%d outbox rows (err %v): the event missed the integration committed before its id was drawn", n, err)
	}
}

// The dial-time check holds even when the configuration passed: a target
// allowed when it was configured, and not allowed after a restart, is
// refused when the delivery connects, and not retried.
func TestTargetCheckedWhenConnecting(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		rc := newReceiver(t, nil)
		h := servertest.Start(t, db, allowLoopback)
		a := createAddon(t, h, webhook(rc.URL, nil, "feature-created"))
		addr := h.URL[len("http://"):]
		h.Stop()
		h = servertest.Start(t, db, servertest.At(addr))
		createFlag(t, h, "default", "after-restart")
		testutil.Eventually(t, 10*time.Second, "a refused attempt in the log", func() bool { return len(addonLog(t, h, a["id"])) > 0 })
		log := addonLog(t, h, a["id"])
		s := log[0]["stateDetails"].(string)
		if log[0]["state"] != "failed" || !strings.Contains(s, "loopback") || !strings.Contains(s, "INTEGRATION_ALLOWED_TARGETS") || !strings.Contains(s, "Not retried") {
			t.Fatalf("log: %v", log[0])
		}
		if n := len(rc.got()); n != 0 {
			t.Fatalf("the refused target got %d requests", n)
		}
	})
}
