package server_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestTextAndNumbersNoDatabaseCanStore sends the values PostgreSQL refuses
// — a NUL character or invalid UTF-8 in a body, a path segment or a query
// parameter, and numbers outside the 32 bits of INTEGER columns — to the
// routes where they used to reach SQL. Every one is a 400 ValidationError
// naming the property, the same on SQLite and PostgreSQL.
func TestTextAndNumbersNoDatabaseCanStore(t *testing.T) {
	t.Parallel()
	const stop = `"start":"2026-01-01T00:00:00Z","stop":"2026-01-01T00:01:00Z"`
	type hostileCase struct{ method, path, token, body, want string }
	answers := map[string][]string{} // by database: "status message" per case
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "f1")
		st := h.Do(t, "POST", envPath("f1", "development")+"/strategies", h.AdminToken, map[string]any{"name": "default"}).Want(t, 200).Map(t)
		strategies := envPath("f1", "development") + "/strategies"
		admin, client, front := h.AdminToken, h.ClientToken, h.FrontendToken
		cases := []hostileCase{
			{"PUT", featurePath("f1"), admin, `{"description":"a\u0000b"}`, "`description` property"},
			{"POST", strategies, admin, `{"name":"default","title":"t\u0000"}`, "`title` property"},
			{"POST", strategies, admin, `{"name":"flexibleRollout","constraints":[{"contextName":"userId","operator":"IN","values":["a","b\u0000"]}]}`, "`constraints[0].values[1]` property"},
			{"POST", "/api/admin/api-tokens", admin, `{"tokenName":"t\u0000","type":"client","environment":"development","projects":["*"]}`, "`tokenName` property"},
			{"POST", "/api/admin/projects", admin, `{"id":"p1","name":"p\u0000"}`, "`name` property"},
			{"POST", "/api/admin/service-account", admin, `{"username":"u\u0000","rootRole":"Viewer"}`, "`username` property"},
			{"POST", "/api/admin/events/search", admin, `{"query":"\u0000"}`, "`query` property"},
			{"POST", "/api/admin/tags", admin, "{\"type\":\"simple\",\"value\":\"v\xff\"}", "`value` property"},
			{"POST", "/api/client/register", client, `{"appName":"a\u0000","interval":1,"started":"2026-01-01T00:00:00Z","strategies":[]}`, "`appName` property"},
			{"POST", "/api/client/metrics", client, `{"appName":"a","bucket":{` + stop + `,"toggles":{"f\u0000":{"yes":1,"no":0}}}}`, "property name in `bucket.toggles`"},
			{"POST", "/api/frontend/client/metrics", front, `{"appName":"a","bucket":{` + stop + `,"toggles":{"f1":{"yes":1,"no":0,"variants":{"\u0000":1}}}}}`, "property name in `bucket.toggles.f1.variants`"},
			{"POST", "/api/frontend/client/register", front, "{\"appName\":\"\xc3\x28\"}", "`appName` property"},
			{"POST", "/api/client/metrics", client, `{"appName":"a","bucket":{"start":0,"stop":1e300,"toggles":{}}}`, "outside the years 0 to 9999"},
			{"GET", "/api/admin/context/a%00b", admin, "", "`name` path parameter"},
			{"DELETE", "/api/admin/tags/simple/a%00b", admin, "", "`value` path parameter"},
			{"GET", "/api/admin/tag-types/%FF", admin, "", "`name` path parameter"},
			{"GET", "/api/admin/strategies/a%00b", admin, "", "`name` path parameter"},
			{"GET", "/api/admin/environments/%C3%28", admin, "", "`name` path parameter"},
			{"GET", "/api/admin/events/a%00b", admin, "", "`featureName` path parameter"},
			{"GET", "/api/admin/projects/a%00b", admin, "", "`projectId` path parameter"},
			{"POST", "/api/signal-endpoint/a%00b", "", "{}", "`name` path parameter"},
			{"GET", "/api/admin/events?project=a%00b", admin, "", "`project` query parameter"},
			{"GET", "/api/client/features?namePrefix=%FF", client, "", "`namePrefix` query parameter"},
			{"POST", strategies + "/set-sort-order", admin, fmt.Sprintf(`[{"id":%q,"sortOrder":2147483648}]`, st["id"]), "`sortOrder` property must be a whole number from -2147483648 to 2147483647"},
			{"POST", strategies, admin, `{"name":"default","sortOrder":2147483648}`, "`sortOrder` property must be a whole number"},
			{"PUT", strategies + "/" + st["id"].(string), admin, `{"name":"default","sortOrder":-2147483649}`, "`sortOrder` property must be a whole number"},
			{"POST", "/api/admin/environments", admin, `{"name":"e1","type":"development","sortOrder":-2147483649}`, "`sortOrder` property must be a whole number"},
			{"POST", "/api/admin/context", admin, `{"name":"c1","sortOrder":4294967296}`, "`sortOrder` property must be a whole number"},
		}
		var got []string
		for i, c := range cases {
			var body any
			if c.body != "" {
				body = c.body
			}
			res := h.Do(t, c.method, c.path, c.token, body)
			var e struct{ Name, Message string }
			_ = json.Unmarshal(res.Body, &e)
			res.WantError(t, 400, "ValidationError", c.want)
			got = append(got, fmt.Sprintf("case %d (%s, %s): %d %s %s", i, c.method, c.want, res.Status, e.Name, e.Message))
		}
		answers[h.DB.Kind] = got

		// Every value placed in a header is escaped: a tag's text in Location.
		res := h.Do(t, "POST", "/api/admin/tags", admin, map[string]any{"type": "simple", "value": "a b/é\r\n?#"}).Want(t, 201)
		loc := res.Header.Get("Location")
		if want := "tags/simple/a%20b%2F%C3%A9%0D%0A%3F%23"; loc != want {
			t.Fatalf("Location %q, want %q", loc, want)
		}
		if u, err := url.Parse(loc); err != nil || u.Path != "tags/simple/a b/é\r\n?#" {
			t.Fatalf("Location %q parses as %v, %v", loc, u, err)
		}
		// A caller's X-Request-Id is echoed only when it is plain text.
		res = h.Do(t, "GET", "/health", "", nil, "X-Request-Id", "id\xff")
		if id := res.Header.Get("X-Request-Id"); id == "" || id == "id\xff" {
			t.Fatalf("X-Request-Id %q echoed", id)
		}
	})
	if sq, pg := answers["sqlite"], answers["postgres"]; pg != nil {
		for i := range sq {
			if sq[i] != pg[i] {
				t.Errorf("the databases answer differently:\n  sqlite:   %s\n  postgres: %s", sq[i], pg[i])
			}
		}
	}
}
