package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// totals are a flag's yes, no and per-variant counts.
type totals struct {
	yes, no  int64
	variants map[string]int64
}

// storedTotals sums what the database holds for each flag, application
// and environment over every hour, read with SQL (not through the API
// whose counting is under test).
func storedTotals(t *testing.T, h *servertest.Harness) map[string]*totals {
	t.Helper()
	out := map[string]*totals{}
	get := func(flag, app, env string) *totals {
		k := flag + "/" + app + "/" + env
		if out[k] == nil {
			out[k] = &totals{variants: map[string]int64{}}
		}
		return out[k]
	}
	rows, err := h.Store.DB().Query(`SELECT feature_name, app_name, environment, SUM(yes), SUM(no) FROM client_metrics_hourly GROUP BY feature_name, app_name, environment`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var flag, app, env string
		var yes, no int64
		if err := rows.Scan(&flag, &app, &env, &yes, &no); err != nil {
			t.Fatal(err)
		}
		tt := get(flag, app, env)
		tt.yes, tt.no = yes, no
	}
	rows.Close()
	rows, err = h.Store.DB().Query(`SELECT feature_name, app_name, environment, variant, SUM(count) FROM client_metrics_variants_hourly GROUP BY feature_name, app_name, environment, variant`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var flag, app, env, variant string
		var n int64
		if err := rows.Scan(&flag, &app, &env, &variant, &n); err != nil {
			t.Fatal(err)
		}
		get(flag, app, env).variants[variant] = n
	}
	rows.Close()
	return out
}

// sameTotals fails the test unless got and want hold the same counts.
func sameTotals(t *testing.T, got, want map[string]*totals) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("stored %d flag/application/environment totals, want %d", len(got), len(want))
	}
	for k, w := range want {
		g := got[k]
		if g == nil {
			t.Errorf("%s: nothing stored, want %+v", k, *w)
			continue
		}
		if g.yes != w.yes || g.no != w.no || fmt.Sprint(g.variants) != fmt.Sprint(w.variants) {
			t.Errorf("%s: stored yes %d no %d variants %v, want yes %d no %d variants %v", k, g.yes, g.no, g.variants, w.yes, w.no, w.variants)
		}
	}
	for k, g := range got {
		if want[k] == nil {
			t.Errorf("%s: stored %+v, want nothing", k, *g)
		}
	}
}

// reporter posts metrics reports from a goroutine (no t.Fatal there).
type reporter struct {
	client *http.Client
	url    string
}

func (r reporter) post(path, token string, body any) error {
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest("POST", r.url+path, bytes.NewReader(data))
	req.Header.Set("Authorization", token)
	req.Header.Set("Content-Type", "application/json")
	res, err := r.client.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode != http.StatusAccepted && res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d", path, res.StatusCode)
	}
	return nil
}

// usageFlags creates flags u0…u{n-1}, each with the variants blue and green
// in development.
func usageFlags(t *testing.T, h *servertest.Harness, n int) {
	t.Helper()
	for i := range n {
		name := fmt.Sprintf("u%d", i)
		createFlag(t, h, name)
		h.Do(t, "PUT", envPath(name, "development")+"/variants", h.AdminToken, []any{
			map[string]any{"name": "blue", "weight": 500}, map[string]any{"name": "green", "weight": 500}}).Want(t, 200)
	}
}

// sendReports posts perClient reports from each of clients concurrent
// clients to the client and the frontend API (alternately), each report
// counting every flag with counts that depend on the client and the
// report, and returns what was sent, as totals per flag, application and
// environment.
func sendReports(t *testing.T, targets []*servertest.Harness, clients, perClient, flags int) map[string]*totals {
	t.Helper()
	want := map[string]*totals{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	stop := time.Now().UTC().Format(time.RFC3339)
	for c := range clients {
		h := targets[c%len(targets)]
		r := reporter{client: &http.Client{Timeout: 30 * time.Second}, url: h.URL}
		wg.Go(func() {
			app := fmt.Sprintf("app-%d", c%3)
			for n := range perClient {
				toggles := map[string]any{}
				sent := map[string]totals{}
				for f := range flags {
					yes, no := int64(1+(c*7+n*3+f)%11), int64((c+n*5+f)%4)
					blue, green := int64((c+f)%3), int64(n%2)
					name := fmt.Sprintf("u%d", f)
					toggles[name] = map[string]any{"yes": yes, "no": no, "variants": map[string]any{"blue": blue, "green": green, "made-up": 5}}
					sent[name] = totals{yes: yes, no: no, variants: map[string]int64{"blue": blue, "green": green}}
				}
				toggles["no-such-flag"] = map[string]any{"yes": 9, "no": 9}
				body := map[string]any{"appName": app, "instanceId": fmt.Sprintf("client-%d", c), "sdkVersion": "unleash-client-node:6.1.0",
					"bucket": map[string]any{"start": stop, "stop": stop, "toggles": toggles}}
				path, token := "/api/client/metrics", h.ClientToken
				if n%2 == 1 {
					path, token = "/api/frontend/client/metrics", h.FrontendToken
				}
				if err := r.post(path, token, body); err != nil {
					errs <- err
					return
				}
				mu.Lock()
				for name, s := range sent {
					k := name + "/" + app + "/development"
					if want[k] == nil {
						want[k] = &totals{variants: map[string]int64{}}
					}
					w := want[k]
					w.yes += s.yes
					w.no += s.no
					for v, n := range s.variants {
						w.variants[v] += n // a reported 0 is a row of 0
					}
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	return want
}

// Usage counted in memory and written in batches is exact: N reports from
// M concurrent clients, over the client and the frontend API, then a
// flush, store what was sent, for the flags the tokens see and their
// variants only.
func TestUsageCountsAreExact(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		usageFlags(t, h, 5)
		want := sendReports(t, []*servertest.Harness{h}, 8, 25, 5)
		h.FlushUsage(t)
		sameTotals(t, storedTotals(t, h), want)
		// A second round adds to the same hour's rows.
		more := sendReports(t, []*servertest.Harness{h}, 4, 10, 5)
		h.FlushUsage(t)
		for k, m := range more {
			w := want[k]
			w.yes, w.no = w.yes+m.yes, w.no+m.no
			for v, n := range m.variants {
				w.variants[v] += n
			}
		}
		sameTotals(t, storedTotals(t, h), want)
		if n := len(eventsOfType(t, h, "application-created")); n != 3 {
			t.Errorf("%d application-created events, want one per application (3)", n)
		}
	}, servertest.Option(func(c *server.Config) { c.Usage.FlushInterval = time.Hour }))
}

// Two instances on one PostgreSQL database each count what they receive
// and flush it, into the same hour's rows at the same time: the stored
// totals are the sums, and each new application gets one
// application-created event, whichever instance saw it.
func TestUsageFromTwoInstancesAddUp(t *testing.T) {
	t.Parallel()
	db := servertest.NewPostgres(t)
	slow := servertest.Option(func(c *server.Config) { c.Usage.FlushInterval = time.Hour })
	a := servertest.Start(t, db, slow)
	b := servertest.Start(t, db, slow)
	usageFlags(t, a, 5)
	waitFlag(t, b, "u4")
	for round := range 3 {
		want := sendReports(t, []*servertest.Harness{a, b}, 8, 10, 5)
		var wg sync.WaitGroup
		for _, h := range []*servertest.Harness{a, b} {
			wg.Go(func() {
				if err := h.Server.FlushUsage(context.Background()); err != nil {
					t.Errorf("flush: %v", err)
				}
			})
		}
		wg.Wait()
		if round == 0 {
			sameTotals(t, storedTotals(t, a), want)
		}
	}
	if n := len(eventsOfType(t, a, "application-created")); n != 3 {
		t.Errorf("%d application-created events, want one per application (3)", n)
	}
}

// waitFlag waits until h's client API serves a flag (made through another
// instance).
func waitFlag(t *testing.T, h *servertest.Harness, name string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if h.Do(t, "GET", "/api/client/features/"+name, h.ClientToken, nil).Status == 200 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("%s never reached the other instance", name)
}

// A graceful shutdown writes what was counted in memory, long before the
// flush interval.
func TestUsageFlushedAtShutdown(t *testing.T) {
	t.Parallel()
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		h := servertest.Start(t, db, servertest.Option(func(c *server.Config) { c.Usage.FlushInterval = time.Hour }))
		usageFlags(t, h, 3)
		want := sendReports(t, []*servertest.Harness{h}, 4, 5, 3)
		h.Do(t, "POST", "/api/client/register", h.ClientToken, map[string]any{"appName": "app-0", "instanceId": "registered",
			"interval": 1000, "started": time.Now().UTC().Format(time.RFC3339), "strategies": []string{"default"}}).Want(t, 202)
		h.Stop()
		after := servertest.Start(t, db)
		sameTotals(t, storedTotals(t, after), want)
		var app struct {
			Instances []struct{ InstanceID string }
		}
		after.Do(t, "GET", "/api/admin/metrics/applications/app-0", after.AdminToken, nil).Want(t, 200).JSON(t, &app)
		if len(app.Instances) != 3 { // client-0, client-3 and the registered one
			t.Errorf("instances after the restart: %+v", app.Instances)
		}
	})
}

// A report counts only flags the token sees in its environment: a flag
// that does not exist, a flag of a project the token does not cover, and a
// flag of a project without the token's environment count nothing, and no
// flag's lastSeenAt moves.
func TestUsageOfUnseenFlagsCountsNothing(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		h.Do(t, "POST", "/api/admin/projects", h.AdminToken, map[string]any{"id": "other", "name": "other"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/projects/other/features", h.AdminToken, map[string]any{"name": "other-flag"}).Want(t, 201)
		h.Do(t, "DELETE", "/api/admin/projects/default/environments/production", h.AdminToken, nil).Want(t, 200)
		createFlag(t, h, "dev-only")
		now := time.Now().UTC().Format(time.RFC3339)
		report := func(flag string) map[string]any {
			return map[string]any{"appName": "outsider", "instanceId": "i", "bucket": map[string]any{"start": now, "stop": now,
				"toggles": map[string]any{flag: map[string]any{"yes": 4, "no": 2, "variants": map[string]any{"disabled": 1}}}}}
		}
		h.Do(t, "POST", "/api/client/metrics", h.ClientToken, report("no-such-flag")).Want(t, 202)
		h.Do(t, "POST", "/api/client/metrics", h.ClientToken, report("other-flag")).Want(t, 202)            // project other
		h.Do(t, "POST", "/api/frontend/client/metrics", h.FrontendToken, report("other-flag")).Want(t, 200) // project other
		h.Do(t, "POST", "/api/client/metrics", servertest.ProdToken, report("dev-only")).Want(t, 202)       // production, not in default
		h.FlushUsage(t)
		if got := storedTotals(t, h); len(got) != 0 {
			for k, v := range got {
				t.Errorf("%s: stored %+v, want nothing", k, *v)
			}
		}
		for _, flag := range []string{"dev-only", "other-flag"} {
			f, err := h.Store.Q(context.Background()).Feature(flag)
			if err != nil || f.LastSeenAt != nil {
				t.Errorf("%s lastSeenAt %v (%v), want never", flag, f.LastSeenAt, err)
			}
		}
		// The reporter is still an application with its instance.
		h.Do(t, "GET", "/api/admin/metrics/applications/outsider", h.AdminToken, nil).Want(t, 200)
	})
}

// The applications view: the list in Unleash's shape, an application with
// its instances (SDK name and version, kind, environment, last seen) and
// the flags it reported, and a flag's applications with their SDK
// versions. An instance not seen for APPLICATION_INSTANCE_STALE_AFTER
// drops out.
func TestApplicationsView(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "checkout")
		createFlag(t, h, "search")
		now := time.Now().UTC()
		clock := now
		h.Store.SetClock(func() time.Time { return clock })
		report := func(path, token, app, instance, sdk string, flags ...string) {
			toggles := map[string]any{}
			for _, f := range flags {
				toggles[f] = map[string]any{"yes": 2, "no": 1}
			}
			h.Do(t, "POST", path, token, map[string]any{"appName": app, "instanceId": instance, "sdkVersion": sdk,
				"bucket": map[string]any{"start": clock.Format(time.RFC3339), "stop": clock.Format(time.RFC3339), "toggles": toggles}}).Want(t, map[bool]int{true: 202, false: 200}[path == "/api/client/metrics"])
		}
		report("/api/client/metrics", h.ClientToken, "shop", "shop-1", "unleash-client-go:4.5.0", "checkout", "search")
		report("/api/client/metrics", h.ClientToken, "shop", "shop-2", "unleash-client-go:4.6.0", "checkout")
		report("/api/frontend/client/metrics", h.FrontendToken, "web", "browser-1", "unleash-client-js:3.7.0", "checkout")
		h.FlushUsage(t)

		var list struct {
			Total        int
			Applications []struct{ AppName string }
		}
		h.Do(t, "GET", "/api/admin/metrics/applications", h.AdminToken, nil).Want(t, 200).JSON(t, &list)
		if list.Total != 2 || len(list.Applications) != 2 || list.Applications[0].AppName != "shop" || list.Applications[1].AppName != "web" {
			t.Fatalf("list: %+v", list)
		}
		h.Do(t, "GET", "/api/admin/metrics/applications?query=WE&sortOrder=desc", h.AdminToken, nil).Want(t, 200).JSON(t, &list)
		if list.Total != 1 || len(list.Applications) != 1 || list.Applications[0].AppName != "web" {
			t.Fatalf("list searched for WE: %+v", list)
		}
		h.Do(t, "GET", "/api/admin/metrics/applications?offset=1&limit=1", h.AdminToken, nil).Want(t, 200).JSON(t, &list)
		if list.Total != 2 || len(list.Applications) != 1 || list.Applications[0].AppName != "web" {
			t.Fatalf("second page: %+v", list)
		}

		type instance struct{ InstanceID, SDKVersion, SDKType, Environment, ClientIP string }
		var app struct {
			Instances   []instance
			SeenToggles []struct{ Name string }
		}
		h.Do(t, "GET", "/api/admin/metrics/applications/shop", h.AdminToken, nil).Want(t, 200).JSON(t, &app)
		if fmt.Sprint(app.Instances) != "[{shop-1 unleash-client-go:4.5.0 backend development 127.0.0.1} {shop-2 unleash-client-go:4.6.0 backend development 127.0.0.1}]" ||
			fmt.Sprint(app.SeenToggles) != "[{checkout} {search}]" {
			t.Fatalf("shop: %+v", app)
		}
		h.Do(t, "GET", "/api/admin/metrics/applications/web", h.AdminToken, nil).Want(t, 200).JSON(t, &app)
		if fmt.Sprint(app.Instances) != "[{browser-1 unleash-client-js:3.7.0 frontend development 127.0.0.1}]" {
			t.Fatalf("web: %+v", app)
		}

		type flagApp struct {
			AppName, Environment string
			SDKVersions          []string
			Yes, No              int
		}
		var fa struct{ LastHour, LastDay []flagApp }
		h.Do(t, "GET", "/api/admin/client-metrics/features/checkout/applications", h.AdminToken, nil).Want(t, 200).JSON(t, &fa)
		want := "[{shop development [unleash-client-go:4.5.0 unleash-client-go:4.6.0] 4 2} {web development [unleash-client-js:3.7.0] 2 1}]"
		if fmt.Sprint(fa.LastHour) != want || fmt.Sprint(fa.LastDay) != want {
			t.Fatalf("checkout's applications: %+v", fa)
		}
		h.Do(t, "GET", "/api/admin/client-metrics/features/nope/applications", h.AdminToken, nil).WantError(t, 404, "NotFoundError")

		// Three hours later shop-2 reports again: the last hour has only it,
		// the day both; shop-1 and browser-1 are not yet stale (1 h here).
		clock = now.Add(3 * time.Hour)
		report("/api/client/metrics", h.ClientToken, "shop", "shop-2", "unleash-client-go:4.6.0", "checkout")
		h.FlushUsage(t)
		h.Do(t, "GET", "/api/admin/client-metrics/features/checkout/applications", h.AdminToken, nil).Want(t, 200).JSON(t, &fa)
		if fmt.Sprint(fa.LastHour) != "[{shop development [unleash-client-go:4.6.0] 2 1}]" ||
			fmt.Sprint(fa.LastDay) != "[{shop development [unleash-client-go:4.6.0] 6 3} {web development [] 2 1}]" {
			t.Fatalf("checkout's applications 3 hours later: %+v", fa)
		}
		h.Do(t, "GET", "/api/admin/metrics/applications/shop", h.AdminToken, nil).Want(t, 200).JSON(t, &app)
		if len(app.Instances) != 1 || app.Instances[0].InstanceID != "shop-2" {
			t.Fatalf("shop-1 is stale and should have dropped out: %+v", app.Instances)
		}
	}, servertest.Option(func(c *server.Config) { c.Usage.InstanceStaleAfter = time.Hour }))
}

// A flush writes each used flag's lastSeenAt, in the flag and in the
// environment, and never moves it back (another instance may have written
// a later time than a flush that reports an earlier one).
func TestUsageLastSeenMovesForward(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "seen")
		createFlag(t, h, "unused")
		start := time.Now().UTC().Truncate(time.Second)
		clock := start
		h.Store.SetClock(func() time.Time { return clock })
		report := func(yes int) {
			h.Do(t, "POST", "/api/client/metrics", h.ClientToken, map[string]any{"appName": "a", "bucket": map[string]any{
				"start": clock.Format(time.RFC3339), "stop": clock.Format(time.RFC3339),
				"toggles": map[string]any{"seen": map[string]any{"yes": yes, "no": 0}, "unused": map[string]any{"yes": 0, "no": 0}}}}).Want(t, 202)
			h.FlushUsage(t)
		}
		lastSeen := func(flag string) (feature, env *time.Time) {
			f, err := h.Store.Q(context.Background()).Feature(flag)
			if err != nil {
				t.Fatal(err)
			}
			envs, err := h.Store.Q(context.Background()).FeatureEnvironments(flag)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range envs {
				if e.Environment == "development" {
					env = e.LastSeenAt
				}
			}
			return f.LastSeenAt, env
		}
		report(1)
		f, e := lastSeen("seen")
		if f == nil || e == nil || !f.Equal(start) || !e.Equal(start) {
			t.Fatalf("lastSeenAt %v, in development %v, want %v", f, e, start)
		}
		if f, e := lastSeen("unused"); f != nil || e != nil {
			t.Errorf("a flag reported with no evaluations was seen: %v, %v", f, e)
		}
		clock = start.Add(-time.Hour) // an earlier report flushed later
		report(1)
		if f, e := lastSeen("seen"); !f.Equal(start) || !e.Equal(start) {
			t.Errorf("lastSeenAt moved back to %v, %v", f, e)
		}
		clock = start.Add(time.Minute)
		report(1)
		if f, e := lastSeen("seen"); !f.Equal(clock) || !e.Equal(clock) {
			t.Errorf("lastSeenAt %v, %v, want %v", f, e, clock)
		}
	})
}
