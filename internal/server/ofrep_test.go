package server_test

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

type ofrepBulk struct {
	Flags []struct {
		Key       string
		Value     any
		Reason    string
		Variant   string
		ErrorCode string
	}
	EventStreams []struct {
		Type     string
		Endpoint struct{ RequestURI string }
	}
}

func (b ofrepBulk) values() map[string]any {
	out := map[string]any{}
	for _, f := range b.Flags {
		out[f.Key] = f.Value
	}
	return out
}

func TestOFREP(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "on-dev")
		createFlag(t, h, "user-only")
		h.Do(t, "POST", envPath("on-dev", "development")+"/on", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "POST", envPath("user-only", "development")+"/strategies", h.AdminToken, map[string]any{"name": "default",
			"constraints": []map[string]any{{"contextName": "userId", "operator": "IN", "values": []string{"u1"}}}}).Want(t, 200)
		h.Do(t, "POST", envPath("user-only", "development")+"/on", h.AdminToken, nil).Want(t, 200)
		h.Do(t, "POST", "/api/admin/projects", h.AdminToken, map[string]any{"id": "other", "name": "Other"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/projects/other/features", h.AdminToken, map[string]any{"name": "other-flag"}).Want(t, 201)

		var bulk ofrepBulk
		res := h.Do(t, "POST", "/ofrep/v1/evaluate/flags", h.FrontendToken, map[string]any{"context": map[string]any{"targetingKey": "u1"}}).Want(t, 200)
		res.JSON(t, &bulk)
		if v := bulk.values(); len(v) != 2 || v["on-dev"] != true || v["user-only"] != true {
			t.Fatalf("bulk: %s", res.Body)
		}
		etag := res.Header.Get("ETag")
		h.Do(t, "POST", "/ofrep/v1/evaluate/flags", h.FrontendToken, map[string]any{"context": map[string]any{"targetingKey": "u1"}}, "If-None-Match", etag).Want(t, 304)
		h.Do(t, "POST", "/ofrep/v1/evaluate/flags", h.FrontendToken, map[string]any{"context": map[string]any{"targetingKey": "u2"}}).Want(t, 200).JSON(t, &bulk)
		if v := bulk.values(); v["user-only"] != false {
			t.Fatalf("u2: %v", v)
		}
		one := h.Do(t, "POST", "/ofrep/v1/evaluate/flags/user-only", "", map[string]any{"context": map[string]any{"userId": "u1"}},
			"X-API-Key", h.FrontendToken).Want(t, 200).Map(t)
		if one["value"] != true || one["reason"] != "TARGETING_MATCH" || one["variant"] != "enabled" {
			t.Fatalf("one flag: %v", one)
		}
		h.Do(t, "POST", "/ofrep/v1/evaluate/flags/on-dev", "Bearer "+h.FrontendToken, map[string]any{}).Want(t, 200)
		nf := h.Do(t, "POST", "/ofrep/v1/evaluate/flags/other-flag", h.FrontendToken, map[string]any{}).Want(t, 404).Map(t)
		if nf["errorCode"] != "FLAG_NOT_FOUND" || nf["key"] != "other-flag" {
			t.Fatalf("a flag of another project: %v", nf)
		}
		pe := h.Do(t, "POST", "/ofrep/v1/evaluate/flags", h.FrontendToken, `{"context":`).Want(t, 400).Map(t)
		if pe["errorCode"] != "PARSE_ERROR" {
			t.Fatalf("parse error: %v", pe)
		}
		ic := h.Do(t, "POST", "/ofrep/v1/evaluate/flags", h.FrontendToken, `{"context":[]}`).Want(t, 400).Map(t)
		if ic["errorCode"] != "INVALID_CONTEXT" {
			t.Fatalf("invalid context: %v", ic)
		}
		h.Do(t, "POST", "/ofrep/v1/evaluate/flags", "", map[string]any{}).WantError(t, 401, "AuthenticationRequired")
		h.Do(t, "POST", "/ofrep/v1/evaluate/flags", "wrong", map[string]any{}).WantError(t, 401, "AuthenticationRequired")
		h.Do(t, "POST", "/ofrep/v1/evaluate/flags", h.ClientToken, map[string]any{}).WantError(t, 403, "NoAccessError")
		h.Do(t, "POST", "/ofrep/v1/evaluate/flags/on-dev", h.AdminToken, map[string]any{}).WantError(t, 403, "NoAccessError")
		pre := h.Do(t, "OPTIONS", "/ofrep/v1/evaluate/flags", "", nil, "Origin", "https://app.example", "Access-Control-Request-Method", "POST",
			"Access-Control-Request-Headers", "authorization,content-type")
		if pre.Status != 204 || pre.Header.Get("Access-Control-Allow-Origin") == "" {
			t.Fatalf("preflight: %d %v", pre.Status, pre.Header)
		}

		// The event stream: a change to the token's environment is
		// announced, one to another environment is not.
		if len(bulk.EventStreams) != 1 || bulk.EventStreams[0].Type != "sse" {
			t.Fatalf("eventStreams: %+v", bulk.EventStreams)
		}
		uri := bulk.EventStreams[0].Endpoint.RequestURI
		if !strings.HasPrefix(uri, "/ofrep/v1/events?c=") || strings.Contains(uri, h.FrontendToken) {
			t.Fatalf("event stream URI %q", uri)
		}
		events := ofrepEvents(t, h.URL+uri)
		// A change in another environment is not announced: a stream opened
		// after it (its credential carries the scope's version then) and
		// this one must announce the next change alike, with the same etag;
		// had this one announced the other change, its first event would
		// carry the version in between.
		u1 := map[string]any{"context": map[string]any{"targetingKey": "u1"}}
		h.Do(t, "POST", envPath("on-dev", "production")+"/on", h.AdminToken, nil).Want(t, 200)
		var after ofrepBulk
		h.Do(t, "POST", "/ofrep/v1/evaluate/flags", h.FrontendToken, u1).Want(t, 200).JSON(t, &after)
		later := ofrepEvents(t, h.URL+after.EventStreams[0].Endpoint.RequestURI)
		changed := time.Now()
		h.Do(t, "POST", envPath("on-dev", "development")+"/off", h.AdminToken, nil).Want(t, 200)
		first, second := nextOFREPEvent(t, events), nextOFREPEvent(t, later)
		t.Logf("refetchEvaluation %v after the change", time.Since(changed))
		if !strings.Contains(first, `"type":"refetchEvaluation"`) || eventETag(first) == "" || eventETag(first) != eventETag(second) {
			t.Fatalf("the first event of the stream is %s; of a stream opened after the other environment's change, %s", first, second)
		}
		h.Do(t, "POST", "/ofrep/v1/evaluate/flags", h.FrontendToken, map[string]any{"context": map[string]any{"targetingKey": "u1"}}, "If-None-Match", etag).Want(t, 200).JSON(t, &bulk)
		if v := bulk.values(); v["on-dev"] != false {
			t.Fatalf("after the change: %v", v)
		}
		bad, _ := http.Get(h.URL + uri[:len(uri)-2])
		if bad.StatusCode != 401 {
			t.Fatalf("a tampered credential: %d", bad.StatusCode)
		}
		bad.Body.Close()
	})
}

// ofrepEvents opens an OFREP event stream and sends the data of its
// events on the channel it returns; the stream closes at the test's end.
func ofrepEvents(t *testing.T, url string) <-chan string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("event stream: %v %v", resp, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	events := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- data
			}
		}
	}()
	return events
}

// nextOFREPEvent is the stream's next event (failing after 30 s).
func nextOFREPEvent(t *testing.T, events <-chan string) string {
	t.Helper()
	select {
	case e := <-events:
		return e
	case <-time.After(30 * time.Second):
		t.Fatal("no refetchEvaluation after a change in the token's environment")
		return ""
	}
}

// eventETag is an OFREP event's etag.
func eventETag(event string) string {
	_, rest, _ := strings.Cut(event, `"etag":"`)
	tag, _, _ := strings.Cut(rest, `"`)
	return tag
}
