package server_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// The metrics endpoints (client and frontend API) store usage of the
// caller's flags and their variants only: random names, a NUL name and
// made-up variants are dropped, as Unleash drops unknown flags, so what a
// holder of the public frontend token can write is bounded by the
// configuration. Counts saturate instead of overflowing the database.
func TestMetricsStoreOnlyKnownFlags(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "f1")
		h.Do(t, "PUT", envPath("f1", "development")+"/variants", h.AdminToken, []any{map[string]any{"name": "blue", "weight": 1000}}).Want(t, 200)
		toggles := map[string]any{
			"f1": map[string]any{"yes": 1, "no": 2, "variants": map[string]any{"blue": 1, "disabled": 1, "made-up": 7}},
		}
		for i := range 300 {
			toggles[fmt.Sprintf("random-%d", i)] = map[string]any{"yes": 1, "no": 1, "variants": map[string]any{"v": 1}}
		}
		body := func(toggles map[string]any) map[string]any {
			return map[string]any{"appName": "app1", "bucket": map[string]any{"start": time.Now().UTC().Format(time.RFC3339), "stop": time.Now().UTC().Format(time.RFC3339), "toggles": toggles}}
		}
		h.Do(t, "POST", "/api/client/metrics", h.ClientToken, body(toggles)).Want(t, 202)
		nul := map[string]any{"nul\u0000": map[string]any{"yes": 1, "no": 1, "variants": map[string]any{"x\u0000": 1}}}
		h.Do(t, "POST", "/api/client/metrics", h.ClientToken, body(nul)).WantError(t, 400, "ValidationError")
		h.Do(t, "POST", "/api/frontend/client/metrics", h.FrontendToken, body(nul)).WantError(t, 400, "ValidationError")
		h.Do(t, "POST", "/api/frontend/client/metrics", h.FrontendToken, body(toggles)).Want(t, 200)
		huge := map[string]any{"f1": map[string]any{"yes": int64(math.MaxInt64), "no": 0, "variants": map[string]any{"blue": int64(math.MaxInt64)}}}
		h.Do(t, "POST", "/api/client/metrics", h.ClientToken, body(huge)).Want(t, 202)
		h.FlushUsage(t)

		var names []string
		rows, err := h.Store.DB().Query(`SELECT DISTINCT feature_name FROM client_metrics_hourly UNION SELECT DISTINCT feature_name || '/' || variant FROM client_metrics_variants_hourly`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				t.Fatal(err)
			}
			names = append(names, n)
		}
		rows.Close()
		if strings.Join(sorted(names), ",") != "f1,f1/blue,f1/disabled" {
			t.Fatalf("stored usage of %v, want f1 with blue and disabled only", names)
		}
		var usage struct {
			Data []struct {
				Yes, No  int64
				Variants map[string]int64
			}
		}
		h.Do(t, "GET", "/api/admin/client-metrics/features/f1", h.AdminToken, nil).Want(t, 200).JSON(t, &usage)
		if len(usage.Data) != 1 || usage.Data[0].Yes != math.MaxInt64 || usage.Data[0].No != 4 ||
			usage.Data[0].Variants["blue"] != math.MaxInt64 || usage.Data[0].Variants["disabled"] != 2 {
			t.Fatalf("usage %+v: the counts should add up, saturating", usage.Data)
		}
		// A second huge report still saturates instead of overflowing, in
		// memory and in the database.
		h.Do(t, "POST", "/api/client/metrics", h.ClientToken, body(huge)).Want(t, 202)
		h.Do(t, "POST", "/api/client/metrics", h.ClientToken, body(huge)).Want(t, 202)
		h.FlushUsage(t)
		h.Do(t, "GET", "/api/admin/client-metrics/features/f1", h.AdminToken, nil).Want(t, 200).JSON(t, &usage)
		if len(usage.Data) != 1 || usage.Data[0].Yes != math.MaxInt64 || usage.Data[0].Variants["blue"] != math.MaxInt64 {
			t.Fatalf("usage %+v after more huge reports, want the counts saturated", usage.Data)
		}
	})
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// Malformed reports get a 400 naming the property, on the metrics and
// register endpoints of both APIs; nothing reaches the database as a 500.
func TestMetricsAndRegisterRejectMalformedInput(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "f1")
		now := time.Now().UTC().Format(time.RFC3339)
		metrics := func(app, instance, sdk string, toggles map[string]any) map[string]any {
			return map[string]any{"appName": app, "instanceId": instance, "sdkVersion": sdk,
				"bucket": map[string]any{"start": now, "stop": now, "toggles": toggles}}
		}
		long := strings.Repeat("a", 256)
		for _, c := range []struct {
			body     map[string]any
			property string
		}{
			{metrics("a\u0000b", "i", "s", nil), "appName"},
			{metrics(long, "i", "s", nil), "appName"},
			{metrics("a", "i\u0000", "s", nil), "instanceId"},
			{metrics("a", "i", long, nil), "sdkVersion"},
			{metrics("a", "i", "s", map[string]any{"f1": map[string]any{"yes": 1, "variants": map[string]any{"v": -1}}}), "bucket.toggles.f1.variants.v"},
			{metrics("a", "i", "s", map[string]any{"whatever": map[string]any{"no": -1}}), "bucket.toggles.whatever"},
		} {
			for _, ep := range []struct{ path, token string }{{"/api/client/metrics", h.ClientToken}, {"/api/frontend/client/metrics", h.FrontendToken}} {
				h.Do(t, "POST", ep.path, ep.token, c.body).WantError(t, 400, "ValidationError", c.property)
			}
		}
		register := func(change func(map[string]any)) map[string]any {
			b := map[string]any{"appName": "a", "instanceId": "i", "sdkVersion": "s", "interval": 1000, "started": now, "strategies": []string{"default"}}
			change(b)
			return b
		}
		many := make([]string, 101)
		for i := range many {
			many[i] = fmt.Sprint("s", i)
		}
		for _, c := range []struct {
			body     map[string]any
			property string
		}{
			{register(func(b map[string]any) { b["appName"] = "x\u0000" }), "appName"},
			{register(func(b map[string]any) { b["instanceId"] = long }), "instanceId"},
			{register(func(b map[string]any) { b["interval"] = -5 }), "interval"},
			{register(func(b map[string]any) { b["strategies"] = many }), "strategies"},
			{register(func(b map[string]any) { b["strategies"] = []string{"ok", "n\u0000"} }), "strategies"},
		} {
			for _, ep := range []struct{ path, token string }{{"/api/client/register", h.ClientToken}, {"/api/frontend/client/register", h.FrontendToken}} {
				h.Do(t, "POST", ep.path, ep.token, c.body).WantError(t, 400, "ValidationError", c.property)
			}
		}
		h.Do(t, "POST", "/api/client/register", h.ClientToken, register(func(map[string]any) {})).Want(t, 202)
	})
}
