package server_test

import (
	"encoding/json"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestBadInputNeverFails500 sends malformed and mistyped bodies to every
// route that takes a body: each must answer 4xx with the error body.
func TestBadInputNeverFails500(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "f1")
		createFlag(t, h, "f2")
		seg := h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "s", "constraints": []any{}}).Want(t, 201).Map(t)
		st := h.Do(t, "POST", envPath("f1", "development")+"/strategies", h.AdminToken, map[string]any{"name": "default"}).Want(t, 200).Map(t)
		segPath := "/api/admin/segments/" + jsonNum(seg["id"])
		stPath := envPath("f1", "development") + "/strategies/" + st["id"].(string)
		routes := []struct{ method, path, token string }{
			{"POST", "/api/admin/projects", h.AdminToken},
			{"PUT", "/api/admin/projects/default", h.AdminToken},
			{"POST", "/api/admin/projects/default/environments", h.AdminToken},
			{"POST", "/api/admin/environments", h.AdminToken},
			{"PUT", "/api/admin/environments/development", h.AdminToken},
			{"POST", featuresURL, h.AdminToken},
			{"PUT", featurePath("f1"), h.AdminToken},
			{"POST", envPath("f1", "development") + "/strategies", h.AdminToken},
			{"PUT", stPath, h.AdminToken},
			{"POST", envPath("f1", "development") + "/strategies/set-sort-order", h.AdminToken},
			{"PUT", envPath("f1", "development") + "/variants", h.AdminToken},
			{"POST", featurePath("f2") + "/dependencies", h.AdminToken},
			{"POST", "/api/admin/segments", h.AdminToken},
			{"PUT", segPath, h.AdminToken},
			{"POST", "/api/admin/api-tokens", h.AdminToken},
			{"POST", "/api/admin/events/search", h.AdminToken},
			{"POST", "/api/client/register", h.ClientToken},
			{"POST", "/api/client/metrics", h.ClientToken},
		}
		bodies := []string{``, `{`, `nul`, `"text"`, `42`, `[{"a":`, `{"name":{"x":1}}`, `{"name":123,"type":[],"constraints":"x","parameters":[1],"variants":{},"segments":["a"],"sortOrder":"1"}`,
			`[{"id":1,"sortOrder":"x"}]`, `[{"name":"a","weight":"heavy"}]`, `{"environment":5,"projects":"p","expiresAt":"soon"}`,
			`{"limit":1e400}`, `{"offset":1.5}`, `{"appName":"a","bucket":{"toggles":{"f":{"yes":-1}}}}`, `{"appName":"a","bucket":{"start":{}}}`,
			`{"appName":"a","interval":"x","started":"x","strategies":[]}`, `{"constraints":[{"contextName":"x","operator":"IN","values":[1]}]}`}
		for _, rt := range routes {
			for _, b := range bodies {
				res := h.Do(t, rt.method, rt.path, rt.token, b)
				if res.Status >= 500 || (malformed(b) && res.Status < 400) {
					t.Errorf("%s %s with %q: %s", rt.method, rt.path, b, res)
					continue
				}
				if res.Status >= 400 {
					var e struct{ ID, Name, Message string }
					if json.Unmarshal(res.Body, &e) != nil || e.ID == "" || e.Name == "" || e.Message == "" {
						t.Errorf("%s %s with %q: error body %s", rt.method, rt.path, b, res.Body)
					}
				}
			}
		}
	})
}

// malformed reports bodies that are not a JSON document every route
// must refuse (valid JSON with unknown properties may be accepted).
func malformed(body string) bool {
	switch body {
	case ``, `{`, `nul`, `[{"a":`:
		return true
	}
	return false
}
