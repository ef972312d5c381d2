package server_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

func TestTagTypesAndTags(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		var tt struct {
			Version  int
			TagTypes []map[string]any
		}
		h.Do(t, "GET", "/api/admin/tag-types", h.AdminToken, nil).Want(t, 200).JSON(t, &tt)
		if tt.Version != 1 || len(tt.TagTypes) != 1 || tt.TagTypes[0]["name"] != "simple" || tt.TagTypes[0]["icon"] != "#" {
			t.Fatalf("tag types: %+v", tt)
		}
		h.Do(t, "POST", "/api/admin/tag-types", h.AdminToken, map[string]any{"name": "team", "description": "Owner"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/tag-types", h.AdminToken, map[string]any{"name": "team"}).WantError(t, 409, "NameExistsError", "team")
		h.Do(t, "POST", "/api/admin/tag-types", h.AdminToken, map[string]any{"name": "a/b"}).WantError(t, 400, "ValidationError", "name")
		h.Do(t, "PUT", "/api/admin/tag-types/team", h.AdminToken, map[string]any{"icon": "T"}).Want(t, 200)
		got := h.Do(t, "GET", "/api/admin/tag-types/team", h.AdminToken, nil).Want(t, 200).Map(t)["tagType"].(map[string]any)
		if got["icon"] != "T" || got["description"] != "Owner" {
			t.Fatalf("tag type: %v", got)
		}
		h.Do(t, "PUT", "/api/admin/tag-types/nope", h.AdminToken, map[string]any{"icon": "T"}).WantError(t, 404, "NotFoundError")

		seedFeature(t, h, "default", "f1", "release")
		h.Do(t, "POST", "/api/admin/features/f1/tags", h.AdminToken, map[string]any{"type": "team", "value": "core"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/features/f1/tags", h.AdminToken, map[string]any{"type": "team", "value": "core"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/features/f1/tags", h.AdminToken, map[string]any{"type": "nope", "value": "x"}).WantError(t, 400, "ValidationError", "nope")
		h.Do(t, "POST", "/api/admin/features/f1/tags", h.AdminToken, map[string]any{"type": "team", "value": " "}).WantError(t, 400, "ValidationError", "value")
		h.Do(t, "POST", "/api/admin/features/zz/tags", h.AdminToken, map[string]any{"type": "team", "value": "x"}).WantError(t, 404, "NotFoundError")
		h.Do(t, "GET", "/api/admin/features/zz/tags", h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		var ft struct{ Tags []map[string]string }
		h.Do(t, "PUT", "/api/admin/features/f1/tags", h.AdminToken, map[string]any{
			"addedTags":   []map[string]string{{"type": "simple", "value": "beta"}},
			"removedTags": []map[string]string{{"type": "team", "value": "core"}},
		}).Want(t, 200).JSON(t, &ft)
		if len(ft.Tags) != 1 || ft.Tags[0]["type"] != "simple" || ft.Tags[0]["value"] != "beta" {
			t.Fatalf("feature tags: %v", ft)
		}
		// Events of the flag carry its current tags.
		tagged := eventsOfType(t, h, "feature-tagged")
		if len(tagged) != 3 || tagged[0]["featureName"] != "f1" || tagged[0]["project"] != "default" {
			t.Fatalf("feature-tagged: %v", tagged)
		}
		if tags := tagged[0]["tags"].([]any); len(tags) != 2 {
			t.Fatalf("event tags: %v", tagged[0]["tags"])
		}
		if un := eventsOfType(t, h, "feature-untagged"); len(un) != 1 || un[0]["preData"].(map[string]any)["value"] != "core" {
			t.Fatalf("feature-untagged: %v", un)
		}
		// The client API filters by tag (the snapshot follows tag changes).
		seedFeature(t, h, "default", "f2", "release")
		var cf struct{ Features []map[string]any }
		h.Do(t, "GET", "/api/client/features?tag=simple:beta", h.ClientToken, nil).Want(t, 200).JSON(t, &cf)
		if len(cf.Features) != 1 || cf.Features[0]["name"] != "f1" {
			t.Fatalf("client features by tag: %v", cf.Features)
		}
		h.Do(t, "DELETE", "/api/admin/features/f1/tags/simple/beta", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "GET", "/api/client/features?tag=simple:beta", h.ClientToken, nil).Want(t, 200).JSON(t, &cf)
		if len(cf.Features) != 0 {
			t.Fatalf("client features by tag after untag: %v", cf.Features)
		}
		h.Do(t, "GET", "/api/admin/features/f1/tags", h.AdminToken, nil).Want(t, 200).JSON(t, &ft)
		if len(ft.Tags) != 0 {
			t.Fatalf("tags after delete: %v", ft)
		}

		// Tags themselves.
		h.Do(t, "POST", "/api/admin/tags", h.AdminToken, map[string]any{"type": "team", "value": "web"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/tags", h.AdminToken, map[string]any{"type": "team", "value": "web"}).WantError(t, 409, "NameExistsError")
		h.Do(t, "POST", "/api/admin/tags", h.AdminToken, map[string]any{"value": "web"}).WantError(t, 400, "ValidationError", "type")
		var tags struct{ Tags []map[string]string }
		h.Do(t, "GET", "/api/admin/tags/team", h.AdminToken, nil).Want(t, 200).JSON(t, &tags)
		if len(tags.Tags) != 2 {
			t.Fatalf("team tags: %v", tags)
		}
		h.Do(t, "GET", "/api/admin/tags/nope", h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		h.Do(t, "DELETE", "/api/admin/tags/team/web", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "DELETE", "/api/admin/tag-types/team", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "DELETE", "/api/admin/tag-types/team", h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		h.Do(t, "GET", "/api/admin/tags", h.AdminToken, nil).Want(t, 200).JSON(t, &tags)
		if len(tags.Tags) != 1 {
			t.Fatalf("tags after type delete: %v", tags)
		}
		for typ, want := range map[string]int{"tag-type-created": 1, "tag-type-updated": 1, "tag-type-deleted": 1, "tag-created": 3, "tag-deleted": 1} {
			if evs := eventsOfType(t, h, typ); len(evs) != want {
				t.Errorf("%s: %d events, want %d", typ, len(evs), want)
			}
		}
		viewer := accountToken(t, h, "v", 3)
		h.Do(t, "POST", "/api/admin/tag-types", viewer, map[string]any{"name": "z"}).WantError(t, 403, "NoAccessError", "CREATE_TAG_TYPE")
		h.Do(t, "POST", "/api/admin/features/f1/tags", viewer, map[string]any{"type": "simple", "value": "x"}).WantError(t, 403, "NoAccessError", "UPDATE_FEATURE")
	})
}

func TestContextFields(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		var fields []map[string]any
		h.Do(t, "GET", "/api/admin/context", h.AdminToken, nil).Want(t, 200).JSON(t, &fields)
		if len(fields) != 5 || fields[0]["name"] != "environment" || fields[4]["name"] != "sessionId" || fields[4]["stickiness"] != true {
			t.Fatalf("built-in fields: %v", fields)
		}
		res := h.Do(t, "POST", "/api/admin/context", h.AdminToken, map[string]any{"name": "region", "description": "Region",
			"legalValues": []map[string]string{{"value": "eu"}, {"value": "us", "description": "United States"}}}).Want(t, 201)
		if res.Header.Get("Location") != "context/region" {
			t.Fatalf("location: %v", res.Header)
		}
		h.Do(t, "POST", "/api/admin/context", h.AdminToken, map[string]any{"name": "region"}).WantError(t, 409, "NameExistsError")
		h.Do(t, "POST", "/api/admin/context", h.AdminToken, map[string]any{"name": "r", "legalValues": []map[string]string{{"value": "a"}, {"value": "a"}}}).
			WantError(t, 400, "ValidationError", "legalValues")
		h.Do(t, "POST", "/api/admin/context/validate", h.AdminToken, map[string]any{"name": "region"}).WantError(t, 409, "NameExistsError")
		h.Do(t, "POST", "/api/admin/context/validate", h.AdminToken, map[string]any{"name": "fresh"}).Want(t, 200)
		h.Do(t, "PUT", "/api/admin/context/region", h.AdminToken, map[string]any{"stickiness": true}).Want(t, 200)
		h.Do(t, "POST", "/api/admin/context/region/legal-values", h.AdminToken, map[string]any{"value": "ap"}).Want(t, 200)
		h.Do(t, "DELETE", "/api/admin/context/region/legal-values/eu", h.AdminToken, nil).Want(t, 200)
		got := h.Do(t, "GET", "/api/admin/context/region", h.AdminToken, nil).Want(t, 200).Map(t)
		lv := got["legalValues"].([]any)
		if got["description"] != "Region" || got["stickiness"] != true || len(lv) != 2 || lv[1].(map[string]any)["value"] != "ap" {
			t.Fatalf("region: %v", got)
		}
		h.Do(t, "PUT", "/api/admin/context/nope", h.AdminToken, map[string]any{}).WantError(t, 404, "NotFoundError")
		h.Do(t, "GET", "/api/admin/context/nope", h.AdminToken, nil).WantError(t, 404, "NotFoundError")

		// Where a field is used: the strategies whose constraints name it
		// (as Unleash's GET /api/admin/context/{name}/strategies), and a
		// field a strategy uses cannot be deleted.
		h.Do(t, "POST", "/api/admin/projects/default/features", h.AdminToken, map[string]any{"name": "by-region"}).Want(t, 201)
		var st struct{ ID string }
		h.Do(t, "POST", "/api/admin/projects/default/features/by-region/environments/development/strategies", h.AdminToken, map[string]any{
			"name": "default", "constraints": []map[string]any{{"contextName": "region", "operator": "IN", "values": []string{"ap"}}}}).Want(t, 200).JSON(t, &st)
		var used struct {
			Strategies []map[string]any `json:"strategies"`
		}
		h.Do(t, "GET", "/api/admin/context/region/strategies", h.AdminToken, nil).Want(t, 200).JSON(t, &used)
		want := map[string]any{"id": st.ID, "projectId": "default", "featureName": "by-region", "strategyName": "default", "environment": "development"}
		if len(used.Strategies) != 1 || fmt.Sprint(used.Strategies[0]) != fmt.Sprint(want) {
			t.Fatalf("strategies using region: %v, want [%v]", used.Strategies, want)
		}
		h.Do(t, "GET", "/api/admin/context/userId/strategies", h.AdminToken, nil).Want(t, 200).JSON(t, &used)
		if len(used.Strategies) != 0 {
			t.Fatalf("strategies using userId: %v", used.Strategies)
		}
		h.Do(t, "DELETE", "/api/admin/context/region", h.AdminToken, nil).WantError(t, 409, "ConflictError", "in use")
		// An archived flag's strategies are not listed (as in Unleash).
		h.Do(t, "DELETE", "/api/admin/projects/default/features/by-region", h.AdminToken, nil).Want(t, 202)
		h.Do(t, "GET", "/api/admin/context/region/strategies", h.AdminToken, nil).Want(t, 200).JSON(t, &used)
		if len(used.Strategies) != 0 {
			t.Fatalf("strategies using region once their flag is archived: %v", used.Strategies)
		}
		h.Do(t, "POST", "/api/admin/archive/revive/by-region", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "DELETE", "/api/admin/projects/default/features/by-region/environments/development/strategies/"+st.ID, h.AdminToken, nil).Want(t, 200)

		// A field used by a segment's constraint cannot be deleted.
		if _, err := h.Store.DB().Exec(`INSERT INTO segments (name, constraints, created_at) VALUES ('s', '[{"contextName":"region","operator":"IN","values":["eu"]}]', 0)`); err != nil {
			t.Fatal(err)
		}
		h.Do(t, "DELETE", "/api/admin/context/region", h.AdminToken, nil).WantError(t, 409, "ConflictError", "in use")
		if _, err := h.Store.DB().Exec(`DELETE FROM segments`); err != nil {
			t.Fatal(err)
		}
		h.Do(t, "DELETE", "/api/admin/context/region", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "DELETE", "/api/admin/context/region", h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		for typ, want := range map[string]int{"context-field-created": 1, "context-field-updated": 3, "context-field-deleted": 1} {
			if evs := eventsOfType(t, h, typ); len(evs) != want {
				t.Errorf("%s: %d events, want %d", typ, len(evs), want)
			}
		}
	})
}

func TestStalenessAndProjectHealth(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		for _, f := range []string{"old", "young", "switch", "gone"} {
			typ := "release"
			if f == "switch" {
				typ = "kill-switch"
			}
			seedFeature(t, h, "default", f, typ)
		}
		tenDaysAgo := store.Millis(time.Now().Add(-10 * 24 * time.Hour))
		if _, err := h.Store.DB().Exec(`UPDATE features SET created_at = $1 WHERE name <> 'young'`, tenDaysAgo); err != nil {
			t.Fatal(err)
		}
		if _, err := h.Store.DB().Exec(`UPDATE features SET archived_at = 1 WHERE name = 'gone'`); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if n, err := h.Server.CheckStaleness(ctx); err != nil || n != 0 {
			t.Fatalf("with 40-day lifetime: %d, %v", n, err)
		}
		h.Do(t, "PUT", "/api/admin/feature-types/release/lifetime", h.AdminToken, map[string]any{"lifetimeDays": 5}).Want(t, 200)
		h.Do(t, "PUT", "/api/admin/feature-types/kill-switch/lifetime", h.AdminToken, map[string]any{"lifetimeDays": 1}).Want(t, 200)
		if n, err := h.Server.CheckStaleness(ctx); err != nil || n != 2 {
			t.Fatalf("marked %d, %v; want old and switch", n, err)
		}
		if n, _ := h.Server.CheckStaleness(ctx); n != 0 {
			t.Fatalf("second run marked %d", n)
		}
		evs := eventsOfType(t, h, "feature-potentially-stale-on")
		if len(evs) != 2 || evs[0]["createdBy"] != "unleash_system_user" || evs[0]["project"] != "default" {
			t.Fatalf("events: %v", evs)
		}
		project := func() map[string]any {
			var body struct{ Projects []map[string]any }
			h.Do(t, "GET", "/api/admin/projects", h.AdminToken, nil).Want(t, 200).JSON(t, &body)
			return body.Projects[0]
		}
		p := project()
		if p["featureCount"] != float64(3) || p["potentiallyStaleFeatureCount"] != float64(2) || p["staleFeatureCount"] != float64(0) || p["health"] != float64(33) {
			t.Fatalf("project: %v", p)
		}
		// Stale on/off.
		got := h.Do(t, "POST", "/api/admin/features/young/stale/on", h.AdminToken, nil).Want(t, 200).Map(t)
		if got["stale"] != true {
			t.Fatalf("stale on: %v", got)
		}
		h.Do(t, "POST", "/api/admin/projects/default/stale", h.AdminToken, map[string]any{"features": []string{"old"}, "value": true}).Want(t, 202)
		p = project()
		if p["staleFeatureCount"] != float64(2) || p["potentiallyStaleFeatureCount"] != float64(1) || p["health"] != float64(0) {
			t.Fatalf("project after stale: %v", p)
		}
		h.Do(t, "POST", "/api/admin/features/young/stale/off", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "POST", "/api/admin/features/young/stale/off", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "POST", "/api/admin/features/nope/stale/on", h.AdminToken, nil).WantError(t, 404, "NotFoundError")
		h.Do(t, "POST", "/api/admin/features/gone/stale/on", h.AdminToken, nil).WantError(t, 400, "ArchivedFeatureError")
		h.Do(t, "POST", "/api/admin/projects/default/stale", h.AdminToken, map[string]any{"features": []string{"nope"}, "value": true}).WantError(t, 404, "NotFoundError")
		h.Do(t, "POST", "/api/admin/projects/default/stale", h.AdminToken, map[string]any{"features": []string{"old"}}).WantError(t, 400, "ValidationError", "value")
		if on, off := eventsOfType(t, h, "feature-stale-on"), eventsOfType(t, h, "feature-stale-off"); len(on) != 2 || len(off) != 1 {
			t.Fatalf("stale events: %d on, %d off", len(on), len(off))
		}
		// A longer lifetime clears the mark.
		h.Do(t, "PUT", "/api/admin/feature-types/kill-switch/lifetime", h.AdminToken, map[string]any{"lifetimeDays": nil}).Want(t, 200)
		if _, err := h.Server.CheckStaleness(ctx); err != nil {
			t.Fatal(err)
		}
		if p = project(); p["potentiallyStaleFeatureCount"] != float64(0) {
			t.Fatalf("project after lifetime change: %v", p)
		}
	})
}
