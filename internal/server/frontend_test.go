package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

type frontendToggles struct {
	Toggles []struct {
		Name           string
		Enabled        bool
		ImpressionData bool
		Variant        struct {
			Name    string
			Enabled bool
		}
	}
}

func (ft frontendToggles) names() string {
	var out []string
	for _, t := range ft.Toggles {
		out = append(out, t.Name)
	}
	return strings.Join(out, ",")
}

func TestFrontendAPI(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "on-dev")
		createFlag(t, h, "off-dev")
		createFlag(t, h, "user-only")
		h.Do(t, "POST", envPath("on-dev", "development")+"/on", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "POST", envPath("off-dev", "production")+"/on", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "POST", envPath("user-only", "development")+"/strategies", h.AdminToken, map[string]any{"name": "default",
			"constraints": []map[string]any{{"contextName": "userId", "operator": "IN", "values": []string{"u1"}}}}).Want(t, 200)
		h.Do(t, "POST", envPath("user-only", "development")+"/on", h.AdminToken, nil).Want(t, 200)
		// A flag of another project stays invisible to a default-project token.
		h.Do(t, "POST", "/api/admin/projects", h.AdminToken, map[string]any{"id": "other", "name": "Other"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/projects/other/features", h.AdminToken, map[string]any{"name": "other-flag"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/projects/other/features/other-flag/environments/development/on", h.AdminToken, nil).Want(t, 200)

		var ft frontendToggles
		res := h.Do(t, "GET", "/api/frontend", h.FrontendToken, nil).Want(t, 200)
		res.JSON(t, &ft)
		if ft.names() != "on-dev" || !ft.Toggles[0].Enabled || ft.Toggles[0].Variant.Name != "disabled" || ft.Toggles[0].Variant.Enabled {
			t.Fatalf("GET /api/frontend: %s", res.Body)
		}
		if res.Header.Get("Access-Control-Allow-Origin") != "*" || res.Header.Get("ETag") == "" {
			t.Fatalf("headers: %v", res.Header)
		}
		h.Do(t, "GET", "/api/frontend?userId=u1", h.FrontendToken, nil).Want(t, 200).JSON(t, &ft)
		if ft.names() != "on-dev,user-only" {
			t.Fatalf("with userId: %s", ft.names())
		}
		h.Do(t, "POST", "/api/frontend", h.FrontendToken, map[string]any{"context": map[string]any{"userId": "u1"}}).Want(t, 200).JSON(t, &ft)
		if ft.names() != "on-dev,user-only" {
			t.Fatalf("POST: %s", ft.names())
		}
		h.Do(t, "POST", "/api/frontend", h.FrontendToken, map[string]any{"toggles": []string{"off-dev", "nope"}, "context": map[string]any{}}).Want(t, 200).JSON(t, &ft)
		if ft.names() != "off-dev,nope" || ft.Toggles[0].Enabled || ft.Toggles[1].Enabled {
			t.Fatalf("POST toggles: %+v", ft)
		}
		h.Do(t, "GET", "/api/frontend/all", h.FrontendToken, nil).Want(t, 200).JSON(t, &ft)
		enabled := map[string]bool{}
		for _, tg := range ft.Toggles {
			enabled[tg.Name] = tg.Enabled
		}
		if len(ft.Toggles) != 3 || !enabled["on-dev"] || enabled["off-dev"] || enabled["user-only"] {
			t.Fatalf("all: %+v", ft)
		}
		// A change is visible at once (the snapshot follows the store's revision).
		h.Do(t, "POST", envPath("on-dev", "development")+"/off", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "GET", "/api/frontend", h.FrontendToken, nil).Want(t, 200).JSON(t, &ft)
		if len(ft.Toggles) != 0 {
			t.Fatalf("after off: %s", ft.names())
		}
		// A production frontend token sees production.
		var tok struct{ Secret string }
		h.Do(t, "POST", "/api/admin/api-tokens", h.AdminToken, map[string]any{"tokenName": "fe-prod", "type": "frontend", "environment": "production", "projects": []string{"*"}}).
			Want(t, 201).JSON(t, &tok)
		h.Do(t, "GET", "/api/frontend", tok.Secret, nil).Want(t, 200).JSON(t, &ft)
		if ft.names() != "off-dev" {
			t.Fatalf("production token: %s", ft.names())
		}
		h.Do(t, "POST", "/api/admin/api-tokens", h.AdminToken, map[string]any{"tokenName": "fe-all", "type": "frontend", "environment": "development", "projects": []string{"*"}}).
			Want(t, 201).JSON(t, &tok)
		h.Do(t, "GET", "/api/frontend", tok.Secret, nil).Want(t, 200).JSON(t, &ft)
		if ft.names() != "other-flag" {
			t.Fatalf("all-projects token: %s", ft.names())
		}

		// Errors.
		h.Do(t, "GET", "/api/frontend", "", nil).WantError(t, 401, "AuthenticationRequired")
		// A browser can read the refusal: CORS headers come before authentication.
		denied := h.Do(t, "GET", "/api/frontend", "wrong", nil, "Origin", "https://app.example")
		if denied.Status != 401 || denied.Header.Get("Access-Control-Allow-Origin") == "" {
			t.Fatalf("a refused browser request: %d, Access-Control-Allow-Origin %q", denied.Status, denied.Header.Get("Access-Control-Allow-Origin"))
		}
		h.Do(t, "GET", "/api/frontend", h.ClientToken, nil).WantError(t, 403, "NoAccessError")
		h.Do(t, "GET", "/api/frontend", h.AdminToken, nil).WantError(t, 403, "NoAccessError")
		h.Do(t, "POST", "/api/frontend", h.FrontendToken, `{"context":`).WantError(t, 400, "ValidationError")
		h.Do(t, "GET", "/api/frontend/client/features", h.FrontendToken, nil).WantError(t, 405, "NotImplementedError")
		pre := h.Do(t, "OPTIONS", "/api/frontend", "", nil, "Origin", "https://app.example", "Access-Control-Request-Method", "POST")
		if pre.Status != 204 || pre.Header.Get("Access-Control-Allow-Origin") == "" {
			t.Fatalf("preflight: %d %v", pre.Status, pre.Header)
		}

		// SDK metrics and registration are stored like the client API's.
		now := time.Now().UTC()
		metrics := map[string]any{"appName": "web", "instanceId": "browser", "bucket": map[string]any{
			"start": now.Add(-time.Minute).Format(time.RFC3339), "stop": now.Format(time.RFC3339),
			"toggles": map[string]any{"user-only": map[string]any{"yes": 3, "no": 1, "variants": map[string]int{}}}}}
		res = h.Do(t, "POST", "/api/frontend/client/metrics", h.FrontendToken, metrics).Want(t, 200)
		if string(res.Body) != "OK" {
			t.Fatalf("metrics body %q", res.Body)
		}
		h.Do(t, "POST", "/api/frontend/client/metrics", h.FrontendToken, map[string]any{}).WantError(t, 400, "ValidationError", "appName")
		h.Do(t, "POST", "/api/frontend/client/metrics", h.FrontendToken, "x", "Content-Type", "text/plain").WantError(t, 415, "ContentTypeError")
		h.Do(t, "POST", "/api/frontend/client/register", h.FrontendToken, map[string]any{"appName": "web", "interval": 1000, "started": now.Format(time.RFC3339), "strategies": []string{}}).Want(t, 200)
		h.Do(t, "POST", "/api/frontend/client/register", h.FrontendToken, map[string]any{"appName": "web"}).WantError(t, 400, "ValidationError", "interval")
		h.FlushUsage(t)
		usage := h.Do(t, "GET", "/api/admin/client-metrics/features/user-only", h.AdminToken, nil).Want(t, 200)
		if !strings.Contains(string(usage.Body), `"web"`) {
			t.Fatalf("usage not stored: %s", usage.Body)
		}
		prom := string(h.Do(t, "GET", "/internal-backstage/prometheus", "", nil).Want(t, 200).Body)
		if !strings.Contains(prom, `bunting_frontend_api_requests_total{endpoint="frontend"}`) {
			t.Fatalf("prometheus lacks frontend counter")
		}
	})
}

// TestFrontendAPIContext: the context the frontend API evaluates, as
// Unleash 8.2's frontend API completes it (appName "frontend-api" and
// environment "default" when the request leaves them out, padded
// constraint values trimmed), except where that contradicts the documented
// semantics: a currentTime in the request is honoured, and a dependency on
// a parent that is off in the environment is evaluated like any other.
func TestFrontendAPIContext(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		constrained := func(name string, constraints ...map[string]any) {
			createFlag(t, h, name)
			h.Do(t, "POST", envPath(name, "development")+"/strategies", h.AdminToken,
				map[string]any{"name": "default", "constraints": constraints}).Want(t, 200)
			h.Do(t, "POST", envPath(name, "development")+"/on", h.AdminToken, nil).Want(t, 200)
		}
		in := func(field string, values ...string) map[string]any {
			return map[string]any{"contextName": field, "operator": "IN", "values": values}
		}
		constrained("app-default", in("appName", "frontend-api"))
		constrained("env-default", in("environment", "default"))
		constrained("padded", in("userId", " u1 ", "u2"))
		constrained("future", map[string]any{"contextName": "currentTime", "operator": "DATE_AFTER", "value": "2090-01-01T00:00:00Z"})
		// A child that requires its parent to be off, and a parent that is
		// off in the environment (Unleash's frontend API leaves such a
		// parent out, and with it every child that depends on it).
		createFlag(t, h, "parent-off")
		constrained("child-of-off")
		h.Do(t, "POST", featurePath("child-of-off")+"/dependencies", h.AdminToken, map[string]any{"feature": "parent-off", "enabled": false}).Want(t, 200)

		cases := []struct {
			query string
			want  string
		}{
			{"", "app-default,child-of-off,env-default"},
			{"appName=web&environment=production", "child-of-off"},
			{"environment=development&userId=u1", "app-default,child-of-off,padded"},
			{"userId=%20u1", "app-default,child-of-off,env-default"},
			{"currentTime=2092-06-01T12:00:00Z", "app-default,child-of-off,env-default,future"},
		}
		for _, c := range cases {
			var ft frontendToggles
			h.Do(t, "GET", "/api/frontend?"+c.query, h.FrontendToken, nil).Want(t, 200).JSON(t, &ft)
			if got := ft.names(); got != c.want {
				t.Errorf("GET /api/frontend?%s lists %s, want %s", c.query, got, c.want)
			}
		}
		var ft frontendToggles
		h.Do(t, "POST", "/api/frontend", h.FrontendToken, map[string]any{"context": map[string]any{"appName": "ios", "userId": "u2"}}).Want(t, 200).JSON(t, &ft)
		if got := ft.names(); got != "child-of-off,env-default,padded" {
			t.Errorf("POST with appName ios, userId u2 lists %s", got)
		}
	})
}
