package server_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// etagOf reads a flag (or any object path) and returns its ETag.
func etagOf(t *testing.T, h *servertest.Harness, path string) string {
	t.Helper()
	etag := h.Do(t, "GET", path, h.AdminToken, nil).Want(t, 200).Header.Get("ETag")
	if len(etag) < 3 || etag[0] != '"' {
		t.Fatalf("GET %s: ETag %q, want a quoted version", path, etag)
	}
	return etag
}

// flagEventCount is how many events the log holds about a flag.
func flagEventCount(t *testing.T, h *servertest.Harness, name string) int {
	t.Helper()
	var body struct{ TotalEvents int }
	h.Do(t, "POST", "/api/admin/events/search", h.AdminToken, map[string]any{"feature": name}).Want(t, 200).JSON(t, &body)
	return body.TotalEvents
}

// TestFlagVersionChangesWithEveryChange: the ETag of a flag moves with each
// kind of change to it, so If-Match catches every one of them.
func TestFlagVersionChangesWithEveryChange(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "parent")
		createFlag(t, h, "f")
		f := featurePath("f")
		strategy := h.Do(t, "POST", envPath("f", "development")+"/strategies", h.AdminToken,
			map[string]any{"name": "default"}).Want(t, 200).Map(t)
		sid := strategy["id"].(string)
		steps := []struct {
			what, method, path string
			body               any
		}{
			{"metadata", "PUT", f, map[string]any{"type": "experiment"}},
			{"switch", "POST", envPath("f", "development") + "/on", nil},
			{"strategy added", "POST", envPath("f", "development") + "/strategies", map[string]any{"name": "flexibleRollout", "parameters": map[string]any{"rollout": "30"}}},
			{"strategy edited", "PUT", envPath("f", "development") + "/strategies/" + sid, map[string]any{"name": "default", "title": "everyone"}},
			{"strategy disabled", "PUT", envPath("f", "development") + "/strategies/" + sid, map[string]any{"name": "default", "title": "everyone", "disabled": true}},
			{"variants", "PUT", envPath("f", "development") + "/variants", []any{map[string]any{"name": "a", "weight": 1000, "weightType": "variable", "stickiness": "default"}}},
			{"tag", "POST", "/api/admin/features/f/tags", map[string]any{"type": "simple", "value": "checkout"}},
			{"dependency", "POST", f + "/dependencies", map[string]any{"feature": "parent"}},
			{"strategy deleted", "DELETE", envPath("f", "development") + "/strategies/" + sid, nil},
			{"stale", "POST", "/api/admin/features/f/stale/on", nil},
		}
		seen := map[string]string{}
		prev := etagOf(t, h, f)
		seen[prev] = "created"
		for _, s := range steps {
			if res := h.Do(t, s.method, s.path, h.AdminToken, s.body); res.Status/100 != 2 {
				t.Fatalf("%s: %s", s.what, res)
			}
			now := etagOf(t, h, f)
			if earlier, ok := seen[now]; ok {
				t.Fatalf("after %s the ETag is %s, the same as after %s", s.what, now, earlier)
			}
			seen[now] = s.what
			if again := etagOf(t, h, f); again != now {
				t.Fatalf("two reads without a change give %s and %s", now, again)
			}
		}
	})
}

// TestTwoEditorsOfAFlag: A reads the flag, B changes it, A's change with the
// version it read is refused (412, naming B) and changes nothing, A's change
// with the new version succeeds.
func TestTwoEditorsOfAFlag(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "parent")
		createFlag(t, h, "f")
		bob := h.UserToken(t, "bob", "Admin")
		f := featurePath("f")
		seenByA := etagOf(t, h, f)

		res := h.Do(t, "POST", envPath("f", "production")+"/strategies", bob, map[string]any{"name": "default", "title": "bob's"}).Want(t, 200)
		if res.Header.Get("ETag") != "" {
			t.Fatalf("a change without If-Match answers with ETag %q; it must answer as Unleash does", res.Header.Get("ETag"))
		}
		before := h.Do(t, "GET", f, h.AdminToken, nil).Want(t, 200)
		tags := h.Do(t, "GET", "/api/admin/features/f/tags", h.AdminToken, nil).Want(t, 200)
		events := flagEventCount(t, h, "f")

		stale := []struct{ method, path string }{
			{"PUT", f}, {"PATCH", f}, {"DELETE", f},
			{"POST", envPath("f", "production") + "/on"},
			{"POST", envPath("f", "production") + "/strategies"},
			{"PUT", envPath("f", "production") + "/variants"},
			{"POST", "/api/admin/features/f/tags"},
			{"POST", f + "/dependencies"},
			{"POST", "/api/admin/features/f/stale/on"},
			{"POST", f + "/clone"},
		}
		bodies := map[string]any{
			"PUT " + f:   map[string]any{"description": "A's"},
			"PATCH " + f: []any{map[string]any{"op": "replace", "path": "/description", "value": "A's"}},
			"POST " + envPath("f", "production") + "/strategies": map[string]any{"name": "default", "title": "A's"},
			"PUT " + envPath("f", "production") + "/variants":    []any{map[string]any{"name": "a", "weight": 1000, "weightType": "variable", "stickiness": "default"}},
			"POST /api/admin/features/f/tags":                    map[string]any{"type": "simple", "value": "a"},
			"POST " + f + "/dependencies":                        map[string]any{"feature": "parent"},
			"POST " + f + "/clone":                               map[string]any{"name": "copy"},
		}
		for _, c := range stale {
			h.Do(t, c.method, c.path, h.AdminToken, bodies[c.method+" "+c.path], "If-Match", seenByA).
				WantError(t, http.StatusPreconditionFailed, "PreconditionFailedError",
					"This flag was changed by bob since you opened it. Reload to see the change before saving yours.")
		}
		after := h.Do(t, "GET", f, h.AdminToken, nil).Want(t, 200)
		if string(after.Body) != string(before.Body) || after.Header.Get("ETag") != before.Header.Get("ETag") {
			t.Fatalf("refused changes changed the flag:\nbefore %s\nafter  %s", before.Body, after.Body)
		}
		if got := h.Do(t, "GET", "/api/admin/features/f/tags", h.AdminToken, nil).Want(t, 200); string(got.Body) != string(tags.Body) {
			t.Fatalf("refused changes changed the tags: %s, was %s", got.Body, tags.Body)
		}
		if n := flagEventCount(t, h, "f"); n != events {
			t.Fatalf("refused changes wrote %d events", n-events)
		}

		// After a reload, A's change goes through and answers with the new version.
		current := before.Header.Get("ETag")
		res = h.Do(t, "PUT", f, h.AdminToken, map[string]any{"description": "A's"}, "If-Match", current).Want(t, 200)
		if res.Header.Get("ETag") == current || res.Header.Get("ETag") != etagOf(t, h, f) {
			t.Fatalf("answer ETag %q: want the version after the change, %q", res.Header.Get("ETag"), etagOf(t, h, f))
		}
		// A sub-resource change answers with the flag's new version too, so a
		// page that does not reload can make its next change.
		res = h.Do(t, "POST", envPath("f", "production")+"/on", h.AdminToken, nil, "If-Match", res.Header.Get("ETag")).Want(t, 200)
		next := res.Header.Get("ETag")
		if next != etagOf(t, h, f) {
			t.Fatalf("switch answers ETag %q, the flag is at %q", next, etagOf(t, h, f))
		}
		h.Do(t, "POST", envPath("f", "production")+"/strategies", h.AdminToken, map[string]any{"name": "default"}, "If-Match", next).Want(t, 200)

		// "*" only asks that the flag exists; a list matches any of its versions;
		// the W/ a compressing proxy adds is ignored.
		h.Do(t, "PUT", f, h.AdminToken, map[string]any{"description": "any"}, "If-Match", "*").Want(t, 200)
		h.Do(t, "PUT", f, h.AdminToken, map[string]any{"description": "list"}, "If-Match", seenByA+", "+etagOf(t, h, f)).Want(t, 200)
		h.Do(t, "PUT", f, h.AdminToken, map[string]any{"description": "weak"}, "If-Match", "W/"+etagOf(t, h, f)).Want(t, 200)

		// Archived meanwhile: the archive is refused with the old version too.
		v := etagOf(t, h, f)
		h.Do(t, "DELETE", f, bob, nil).Want(t, 202)
		h.Do(t, "PUT", f, h.AdminToken, map[string]any{"description": "late"}, "If-Match", v).
			WantError(t, http.StatusPreconditionFailed, "PreconditionFailedError", "changed by bob")
		// Deleted meanwhile.
		h.Do(t, "DELETE", "/api/admin/archive/f", bob, nil).Want(t, 200)
		h.Do(t, "POST", "/api/admin/features/f/tags", h.AdminToken, map[string]any{"type": "simple", "value": "z"}, "If-Match", v).
			WantError(t, http.StatusPreconditionFailed, "PreconditionFailedError", "This flag no longer exists: bob deleted it")
	})
}

// TestMalformedIfMatch: a header that is not a version list is a 400 naming
// the header, and changes nothing.
func TestMalformedIfMatch(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "f")
		etag := etagOf(t, h, featurePath("f"))
		for _, bad := range []string{"abc", `"unterminated`, `"a" "b"`, `""`, `"a",`} {
			h.Do(t, "PUT", featurePath("f"), h.AdminToken, map[string]any{"description": "x"}, "If-Match", bad).
				WantError(t, http.StatusBadRequest, "ValidationError", "If-Match")
		}
		if got := etagOf(t, h, featurePath("f")); got != etag {
			t.Fatalf("a refused change moved the version from %s to %s", etag, got)
		}
	})
}

// TestParallelWritesWithOneVersion: several changes sent at once with the
// same version: exactly one is applied, the others get 412, on both
// databases (the check runs in the change's transaction, under the flag's
// row lock on PostgreSQL and SQLite's single writer).
func TestParallelWritesWithOneVersion(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		for round := range 3 {
			name := fmt.Sprintf("race%d", round)
			createFlag(t, h, name)
			etag := etagOf(t, h, featurePath(name))
			const writers = 8
			statuses := make([]int, writers)
			var wg sync.WaitGroup
			for i := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					statuses[i] = h.Do(t, "POST", envPath(name, "development")+"/strategies", h.AdminToken,
						map[string]any{"name": "default", "title": fmt.Sprint("writer ", i)}, "If-Match", etag).Status
				}()
			}
			wg.Wait()
			ok := 0
			for _, s := range statuses {
				switch s {
				case 200:
					ok++
				case http.StatusPreconditionFailed:
				default:
					t.Fatalf("statuses %v: want 200 or 412 only", statuses)
				}
			}
			var list []any
			h.Do(t, "GET", envPath(name, "development")+"/strategies", h.AdminToken, nil).Want(t, 200).JSON(t, &list)
			if ok != 1 || len(list) != 1 {
				t.Fatalf("round %d: %d writes succeeded and the flag has %d strategies (statuses %v); want exactly one", round, ok, len(list), statuses)
			}
		}
	})
}

// TestTwoEditorsOfASegment: the same for segments.
func TestTwoEditorsOfASegment(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		bob := h.UserToken(t, "bob", "Admin")
		c := []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"1"}}}
		sg := h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "beta", "constraints": c}).Want(t, 201).Map(t)
		path := fmt.Sprintf("/api/admin/segments/%v", sg["id"])
		seenByA := etagOf(t, h, path)
		h.Do(t, "PUT", path, bob, map[string]any{"name": "beta", "description": "bob's", "constraints": c}).Want(t, 204)
		current := etagOf(t, h, path)
		if current == seenByA {
			t.Fatalf("the segment's ETag %s did not change with its description", current)
		}
		h.Do(t, "PUT", path, h.AdminToken, map[string]any{"name": "beta", "description": "A's", "constraints": c}, "If-Match", seenByA).
			WantError(t, http.StatusPreconditionFailed, "PreconditionFailedError", "This segment was changed by bob since you opened it.")
		h.Do(t, "DELETE", path, h.AdminToken, nil, "If-Match", seenByA).WantError(t, http.StatusPreconditionFailed, "PreconditionFailedError", "bob")
		if got := h.Do(t, "GET", path, h.AdminToken, nil).Want(t, 200).Map(t); got["description"] != "bob's" {
			t.Fatalf("refused change stored: %v", got)
		}
		res := h.Do(t, "PUT", path, h.AdminToken, map[string]any{"name": "beta", "description": "A's", "constraints": c}, "If-Match", current).Want(t, 204)
		if res.Header.Get("ETag") != etagOf(t, h, path) {
			t.Fatalf("answer ETag %q, segment at %q", res.Header.Get("ETag"), etagOf(t, h, path))
		}
		h.Do(t, "DELETE", path, h.AdminToken, nil, "If-Match", res.Header.Get("ETag")).Want(t, 204)
	})
}

// TestOpenAPIDocumentsIfMatch: the OpenAPI document offers If-Match and its
// 412 on a flag change, and not on other changes.
func TestOpenAPIDocumentsIfMatch(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	var doc struct {
		Paths map[string]map[string]struct {
			Parameters []struct{ Name, In string }
			Responses  map[string]any
		}
	}
	h.Do(t, "GET", "/docs/openapi.json", "", nil).Want(t, 200).JSON(t, &doc)
	hasIfMatch := func(path, method string) bool {
		op := doc.Paths[path][method]
		for _, p := range op.Parameters {
			if p.Name == "If-Match" && p.In == "header" {
				_, ok := op.Responses["412"]
				return ok
			}
		}
		return false
	}
	if !hasIfMatch("/api/admin/features/{featureName}/tags", "post") {
		t.Errorf("tagging a flag documents no If-Match with its 412")
	}
	if hasIfMatch("/api/admin/strategies/{name}", "put") {
		t.Errorf("a strategy type change documents If-Match, which it ignores")
	}
}

// TestEveryFlagAndSegmentChangeHonoursIfMatch walks the route table: every
// admin change whose path names a flag or a segment refuses a stale
// If-Match with 412 and changes nothing, so a route added later without
// s.change fails here.
func TestEveryFlagAndSegmentChangeHonoursIfMatch(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	createFlag(t, h, "f")
	sg := h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "s",
		"constraints": []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"1"}}}}).Want(t, 201).Map(t)
	h.Do(t, "DELETE", featurePath("f"), h.AdminToken, nil).Want(t, 202)
	h.Do(t, "POST", "/api/admin/archive/revive/f", h.AdminToken, nil).Want(t, 200)
	values := map[string]string{"projectId": "default", "featureName": "f", "segmentId": fmt.Sprint(sg["id"]),
		"environment": "development", "strategyId": "x", "parent": "p", "type": "simple", "value": "v"}
	checked := 0
	for _, rt := range h.Server.Routes() {
		method, path, _ := strings.Cut(rt.Pattern, " ")
		if rt.Surface != "admin" || method == "GET" || (!strings.Contains(path, "{featureName}") && !strings.Contains(path, "{segmentId}")) {
			continue
		}
		for name, v := range values {
			path = strings.ReplaceAll(path, "{"+name+"}", v)
		}
		before := flagEventCount(t, h, "f")
		res := h.Do(t, method, path, h.AdminToken, "{}", "If-Match", `"stale"`)
		if res.Status == http.StatusBadRequest { // a body that must be a list
			res = h.Do(t, method, path, h.AdminToken, "[]", "If-Match", `"stale"`)
		}
		if res.Status != http.StatusPreconditionFailed {
			t.Errorf("%s with a stale If-Match: %s, want 412", rt.Pattern, res)
		}
		if n := flagEventCount(t, h, "f"); n != before {
			t.Errorf("%s with a stale If-Match wrote %d events", rt.Pattern, n-before)
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("only %d flag and segment changes in the route table", checked)
	}
}
