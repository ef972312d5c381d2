package server_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
)

type clientPayload struct {
	Version  int
	Features []map[string]any
	Segments []map[string]any
	Query    map[string]any
	Meta     map[string]any
}

func clientFeatures(t *testing.T, h *servertest.Harness, token, query string, headers ...string) (*servertest.Response, clientPayload) {
	t.Helper()
	res := h.Do(t, "GET", "/api/client/features"+query, token, nil, headers...)
	var p clientPayload
	if res.Status == 200 {
		res.JSON(t, &p)
	}
	return res, p
}

func TestClientFeatures(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "f1")
		createFlag(t, h, "g1")
		seg := h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "s",
			"constraints": []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"u1"}}}}).Want(t, 201).Map(t)
		base := envPath("f1", "development") + "/strategies"
		h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "default",
			"constraints": []any{map[string]any{"contextName": "appName", "operator": "IN", "values": []string{"a"}}}, "segments": []any{seg["id"]}}).Want(t, 200)
		disabled := h.Do(t, "POST", base, h.AdminToken, map[string]any{"name": "default", "disabled": true}).Want(t, 200).Map(t)
		h.Do(t, "POST", envPath("f1", "development")+"/on", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "POST", featurePath("g1")+"/dependencies", h.AdminToken, map[string]any{"feature": "f1"}).Want(t, 200)

		// Old clients get segment constraints inlined and no segments list.
		res, p := clientFeatures(t, h, h.ClientToken, "")
		res.Want(t, 200)
		if p.Version != 2 || len(p.Features) != 2 || p.Segments != nil || p.Query["environment"] != "development" {
			t.Fatalf("payload: %s", res.Body)
		}
		f1 := p.Features[0]
		if f1["name"] != "f1" || f1["enabled"] != true {
			t.Fatalf("f1: %v", f1)
		}
		strategies := f1["strategies"].([]any)
		if len(strategies) != 1 {
			t.Fatalf("disabled strategy %v was sent: %v", disabled["id"], strategies)
		}
		st := strategies[0].(map[string]any)
		if _, has := st["id"]; has || st["segments"] != nil || len(st["constraints"].([]any)) != 2 {
			t.Fatalf("inlined strategy: %v", st)
		}
		// An enabled dependency carries its variants, [] when it has none
		// (as Unleash sends it).
		if deps := p.Features[1]["dependencies"].([]any); len(deps) != 1 || deps[0].(map[string]any)["feature"] != "f1" ||
			fmt.Sprint(deps[0].(map[string]any)["variants"]) != "[]" {
			t.Fatalf("dependencies: %v", p.Features[1])
		}

		// New clients get segment ids and the segments.
		res, p = clientFeatures(t, h, h.ClientToken, "", "Unleash-Client-Spec", "5.2.0")
		st = p.Features[0]["strategies"].([]any)[0].(map[string]any)
		if len(p.Segments) != 1 || len(st["constraints"].([]any)) != 1 || len(st["segments"].([]any)) != 1 {
			t.Fatalf("segment payload: %s", res.Body)
		}
		h.Do(t, "GET", "/api/client/features", h.ClientToken, nil, "Unleash-Client-Spec", "4.2").WantError(t, 400, "ValidationError", "4.2")

		// Strong ETag, 304, and a new ETag after a change.
		res, _ = clientFeatures(t, h, h.ClientToken, "")
		etag := res.Header.Get("ETag")
		if etag == "" || etag[0] != '"' {
			t.Fatalf("etag %q", etag)
		}
		notModified := h.Do(t, "GET", "/api/client/features", h.ClientToken, nil, "If-None-Match", etag)
		notModified.Want(t, 304)
		if notModified.Header.Get("ETag") != "" || len(notModified.Body) != 0 {
			t.Fatalf("304 carries %v %q", notModified.Header, notModified.Body)
		}
		h.Do(t, "POST", envPath("f1", "development")+"/off", h.AdminToken, nil).Want(t, 200)
		res, p = clientFeatures(t, h, h.ClientToken, "", "If-None-Match", etag)
		res.Want(t, 200)
		if res.Header.Get("ETag") == etag || p.Features[0]["enabled"] != false {
			t.Fatalf("after change: etag %s, %v", res.Header.Get("ETag"), p.Features[0])
		}

		// Filters and token scope.
		_, p = clientFeatures(t, h, h.ClientToken, "?namePrefix=g")
		if len(p.Features) != 1 || p.Features[0]["name"] != "g1" || p.Query["namePrefix"] != "g" {
			t.Fatalf("namePrefix: %v", p)
		}
		_, p = clientFeatures(t, h, h.ClientToken, "?project=other")
		if len(p.Features) != 0 {
			t.Fatalf("project filter: %v", p)
		}
		_, p = clientFeatures(t, h, servertest.ProdToken, "?environment=development")
		if p.Query["environment"] != "production" || p.Features[0]["enabled"] != false || len(p.Features[0]["strategies"].([]any)) != 0 {
			t.Fatalf("token environment must win: %v", p)
		}
		h.Do(t, "GET", "/api/client/features?tag=bad", h.ClientToken, nil).WantError(t, 400, "ValidationError", "tag")

		// One flag.
		one := h.Do(t, "GET", "/api/client/features/f1", h.ClientToken, nil).Want(t, 200).Map(t)
		if one["name"] != "f1" {
			t.Fatalf("one: %v", one)
		}
		h.Do(t, "GET", "/api/client/features/nope", h.ClientToken, nil).WantError(t, 404, "NotFoundError", "nope")

		// Only client tokens.
		h.Do(t, "GET", "/api/client/features", h.AdminToken, nil).WantError(t, 403, "NoAccessError")
		h.Do(t, "GET", "/api/client/features", h.FrontendToken, nil).WantError(t, 403, "NoAccessError")
		h.Do(t, "GET", "/api/client/features", "", nil).WantError(t, 401, "AuthenticationRequired")
		h.Do(t, "GET", "/api/client/features", "default:development.wrong", nil).WantError(t, 401, "AuthenticationRequired")

		// Archived flags disappear.
		h.Do(t, "DELETE", featurePath("g1")+"/dependencies", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "DELETE", featurePath("g1"), h.AdminToken, nil).Want(t, 202)
		_, p = clientFeatures(t, h, h.ClientToken, "")
		if len(p.Features) != 1 {
			t.Fatalf("archived flag served: %v", p.Features)
		}
	})
}

// TestClientFeaturesListADependencyOnce: a child with several strategies,
// segments and tags lists its dependency once, with and without
// Unleash-Client-Spec, and each strategy its segments once. Unleash 8.2
// repeats the dependency once per strategy and segment row, and the Node
// SDK then draws a parent's random choice once per repeat (the deliberate
// difference single-dependencies in docs/compatibility.md).
func TestClientFeaturesListADependencyOnce(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "parent")
		createFlag(t, h, "child")
		var segments []any
		for _, name := range []string{"s1", "s2"} {
			seg := h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": name,
				"constraints": []any{map[string]any{"contextName": "plan", "operator": "IN", "values": []string{name}}}}).Want(t, 201).Map(t)
			segments = append(segments, seg["id"])
		}
		for range 2 {
			h.Do(t, "POST", envPath("child", "development")+"/strategies", h.AdminToken, map[string]any{"name": "flexibleRollout",
				"parameters": map[string]any{"rollout": "50", "stickiness": "default", "groupId": "child"}, "segments": segments}).Want(t, 200)
		}
		for _, tag := range []string{"t1", "t2"} {
			h.Do(t, "POST", "/api/admin/features/child/tags", h.AdminToken, map[string]any{"type": "simple", "value": tag}).Want(t, 201)
		}
		h.Do(t, "POST", featurePath("child")+"/dependencies", h.AdminToken, map[string]any{"feature": "parent", "variants": []string{"v1"}}).Want(t, 200)

		for _, spec := range []string{"", "5.2.0"} {
			res, p := clientFeatures(t, h, h.ClientToken, "", "Unleash-Client-Spec", spec)
			res.Want(t, 200)
			child := p.Features[0]
			if child["name"] != "child" {
				t.Fatalf("features: %s", res.Body)
			}
			if deps := child["dependencies"].([]any); len(deps) != 1 || fmt.Sprint(deps[0]) != "map[enabled:true feature:parent variants:[v1]]" {
				t.Errorf("spec %q: dependencies %v", spec, deps)
			}
			for _, st := range child["strategies"].([]any) {
				strategy := st.(map[string]any)
				if spec != "" && len(strategy["segments"].([]any)) != 2 || spec == "" && len(strategy["constraints"].([]any)) != 2 {
					t.Errorf("spec %q: strategy %v", spec, strategy)
				}
			}
		}
	})
}

func TestClientScopedToken(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		h.Do(t, "POST", "/api/admin/projects", h.AdminToken, map[string]any{"id": "web", "name": "Web"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/projects/web/features", h.AdminToken, map[string]any{"name": "w1"}).Want(t, 201)
		createFlag(t, h, "d1")
		tok := h.Do(t, "POST", "/api/admin/api-tokens", h.AdminToken, map[string]any{"tokenName": "web-sdk", "type": "client", "environment": "development", "projects": []string{"web"}}).Want(t, 201).Map(t)
		secret := tok["secret"].(string)
		_, p := clientFeatures(t, h, secret, "?project=default")
		if len(p.Features) != 0 {
			t.Fatalf("token project must win over ?project: %v", p.Features)
		}
		_, p = clientFeatures(t, h, secret, "")
		if len(p.Features) != 1 || p.Features[0]["name"] != "w1" {
			t.Fatalf("scoped: %v", p.Features)
		}
		h.Do(t, "GET", "/api/client/features/d1", secret, nil).WantError(t, 404, "NotFoundError")
	})
}

func TestClientMetricsAndRegister(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "f1")
		now := time.Now().UTC()
		h.Do(t, "POST", "/api/client/register", h.ClientToken, map[string]any{"appName": "app1", "instanceId": "i1", "interval": 1000,
			"started": now.Format(time.RFC3339), "strategies": []string{"default"}, "sdkVersion": "x:1", "extra": true}).Want(t, 202)
		h.Do(t, "POST", "/api/client/register", h.ClientToken, map[string]any{"appName": "app1"}).WantError(t, 400, "ValidationError", "interval")
		metrics := map[string]any{"appName": "app1", "instanceId": "i1", "yggdrasilVersion": nil, "bucket": map[string]any{
			"start": now.Add(-time.Minute).Format(time.RFC3339), "stop": now.UnixMilli(),
			"toggles": map[string]any{"f1": map[string]any{"yes": 3, "no": 1, "variants": map[string]any{"disabled": 2, "not-a-variant-of-f1": 1}}}}}
		h.Do(t, "POST", "/api/client/metrics", h.ClientToken, metrics).Want(t, 202)
		h.Do(t, "POST", "/api/client/metrics", h.ClientToken, metrics).Want(t, 202)
		h.Do(t, "POST", "/api/client/metrics", h.ClientToken, map[string]any{"bucket": map[string]any{}}).WantError(t, 400, "ValidationError", "appName")
		h.Do(t, "POST", "/api/client/metrics", h.ClientToken, map[string]any{"appName": "a", "bucket": map[string]any{"stop": "yesterday"}}).WantError(t, 400, "ValidationError")
		h.Do(t, "POST", "/api/client/metrics", h.ClientToken, "not json").WantError(t, 400, "ValidationError")
		h.FlushUsage(t)

		var usage struct {
			FeatureName string
			LastSeenAt  *time.Time
			Data        []struct {
				AppName, Environment string
				Yes, No              int
				Variants             map[string]int
			}
		}
		h.Do(t, "GET", "/api/admin/client-metrics/features/f1", h.AdminToken, nil).Want(t, 200).JSON(t, &usage)
		if usage.LastSeenAt == nil || len(usage.Data) != 1 || usage.Data[0].Yes != 6 || usage.Data[0].No != 2 ||
			usage.Data[0].Environment != "development" || usage.Data[0].AppName != "app1" || usage.Data[0].Variants["disabled"] != 4 || len(usage.Data[0].Variants) != 1 {
			t.Fatalf("usage: %+v", usage)
		}
		f := h.Do(t, "GET", featurePath("f1"), h.AdminToken, nil).Map(t)
		if f["lastSeenAt"] == nil || envOf(t, f, "development")["lastSeenAt"] == nil {
			t.Fatalf("lastSeenAt not set: %v", f)
		}
		if len(eventsOf(t, h, "application-created", "")) != 1 {
			t.Fatal("application-created not logged once")
		}
		h.Do(t, "GET", "/api/admin/client-metrics/features/nope", h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		var apps struct {
			Total        int
			Applications []struct {
				AppName    string
				Strategies []string
				Usage      []struct {
					Project      string
					Environments []string
				}
			}
		}
		h.Do(t, "GET", "/api/admin/metrics/applications", h.AdminToken, nil).Want(t, 200).JSON(t, &apps)
		if apps.Total != 1 || len(apps.Applications) != 1 || apps.Applications[0].AppName != "app1" || fmt.Sprint(apps.Applications[0].Strategies) != "[default]" ||
			fmt.Sprint(apps.Applications[0].Usage) != "[{default [development]}]" {
			t.Fatalf("applications: %+v", apps)
		}
		var app struct {
			AppName    string
			Strategies []struct {
				Name     string
				NotFound bool
			}
			Instances []struct {
				InstanceID, SDKVersion, SDKType, Environment string
				LastSeen                                     *time.Time
			}
			SeenToggles []struct{ Name, Project string }
		}
		h.Do(t, "GET", "/api/admin/metrics/applications/app1", h.AdminToken, nil).Want(t, 200).JSON(t, &app)
		if len(app.Instances) != 1 || app.Instances[0].InstanceID != "i1" || app.Instances[0].SDKVersion != "x:1" || app.Instances[0].SDKType != "backend" ||
			app.Instances[0].Environment != "development" || app.Instances[0].LastSeen == nil ||
			len(app.Strategies) != 1 || app.Strategies[0].Name != "default" || app.Strategies[0].NotFound ||
			len(app.SeenToggles) != 1 || app.SeenToggles[0].Name != "f1" || app.SeenToggles[0].Project != "default" {
			t.Fatalf("application: %+v", app)
		}
		h.Do(t, "GET", "/api/admin/metrics/applications/nope", h.AdminToken, nil).WantError(t, 404, "NotFoundError", "appName=nope")
	})
}

func TestRevisionFromAnotherInstance(t *testing.T) {
	t.Parallel()
	db := servertest.NewPostgres(t)
	a := servertest.Start(t, db)
	b := servertest.Start(t, db)
	_, p := clientFeatures(t, b, b.ClientToken, "")
	if len(p.Features) != 0 {
		t.Fatalf("fresh: %v", p.Features)
	}
	createFlag(t, a, "f1")
	testutil.Eventually(t, 5*time.Second, "instance b sees the flag created on instance a", func() bool {
		_, p = clientFeatures(t, b, b.ClientToken, "")
		return len(p.Features) == 1
	})
}
