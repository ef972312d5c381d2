package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// sseEvent is one server-sent event.
type sseEvent struct {
	Name string
	ID   int64
	Data struct {
		Events []map[string]any `json:"events"`
	}
}

// sseStream reads a GET /api/client/streaming answer.
type sseStream struct {
	res    *http.Response
	events chan sseEvent
	cancel context.CancelFunc
}

// openStream connects; it fails the test unless the answer is 200.
func openStream(t *testing.T, h *servertest.Harness, path, token string, headers ...string) *sseStream {
	t.Helper()
	res, cancel := streamRequest(t, h, path, token, headers...)
	if res.StatusCode != 200 {
		t.Fatalf("GET %s: %d", path, res.StatusCode)
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	s := &sseStream{res: res, events: make(chan sseEvent, 100), cancel: cancel}
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.Name != "" {
					s.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.Name = line[7:]
			case strings.HasPrefix(line, "id: "):
				ev.ID, _ = strconv.ParseInt(line[4:], 10, 64)
			case strings.HasPrefix(line, "data: "):
				if err := json.Unmarshal([]byte(line[6:]), &ev.Data); err != nil {
					panic(err)
				}
			}
		}
	}()
	t.Cleanup(s.close)
	return s
}

func (s *sseStream) close() { s.cancel(); s.res.Body.Close() }

func streamRequest(t *testing.T, h *servertest.Harness, path, token string, headers ...string) (*http.Response, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", h.URL+path, nil)
	req.Header.Set("Authorization", token)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	return res, cancel
}

// next returns the next event, failing after a few seconds.
func (s *sseStream) next(t *testing.T) sseEvent {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if !ok {
			t.Fatal("stream ended")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5 s")
	}
	return sseEvent{}
}

// quiet checks that no event arrives for a while.
func (s *sseStream) quiet(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case ev := <-s.events:
		t.Fatalf("unexpected event %+v", ev)
	case <-time.After(d):
	}
}

// types lists the event types of ev with their subject.
func types(ev sseEvent) []string {
	var out []string
	for _, e := range ev.Data.Events {
		subject := ""
		switch e["type"] {
		case "feature-updated":
			subject = e["feature"].(map[string]any)["name"].(string)
		case "feature-removed":
			subject = e["featureName"].(string)
		case "segment-updated":
			subject = strconv.Itoa(int(e["segment"].(map[string]any)["id"].(float64)))
		case "segment-removed":
			subject = strconv.Itoa(int(e["segmentId"].(float64)))
		case "hydration":
			subject = strconv.Itoa(len(e["features"].([]any)))
		}
		out = append(out, e["type"].(string)+":"+subject)
	}
	return out
}

func wantTypes(t *testing.T, ev sseEvent, name string, want ...string) {
	t.Helper()
	if got := types(ev); ev.Name != name || strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("got %s %v, want %s %v", ev.Name, got, name, want)
	}
	for _, e := range ev.Data.Events {
		if int64(e["eventId"].(float64)) != ev.ID {
			t.Fatalf("eventId %v in a batch with id %d", e["eventId"], ev.ID)
		}
	}
}

func TestStreamingSendsEveryChangeAndResumes(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "s-before")
		st := openStream(t, h, "/api/client/streaming", h.ClientToken, "Unleash-Interval", "undefined")
		first := st.next(t)
		wantTypes(t, first, "unleash-connected", "hydration:1")
		if got := h.Store.Revision(); first.ID != got {
			t.Fatalf("hydration id %d, revision %d", first.ID, got)
		}
		// The hydration's flag is the flag exactly as /api/client/features serves it.
		var features struct{ Features []map[string]any }
		h.Do(t, "GET", "/api/client/features", h.ClientToken, nil, "Unleash-Client-Spec", "5.2.0").Want(t, 200).JSON(t, &features)
		if a, b := string(mustJSON(t, features.Features[0])), string(mustJSON(t, first.Data.Events[0]["features"].([]any)[0])); a != b {
			t.Fatalf("hydration flag %s, client API flag %s", b, a)
		}

		createFlag(t, h, "s-one")
		ev := st.next(t)
		wantTypes(t, ev, "unleash-updated", "feature-updated:s-one")
		seg := h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "seg",
			"constraints": []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"u1"}}}}).Want(t, 201).Map(t)
		st.quiet(t, 300*time.Millisecond) // an unused segment is not in scope
		h.Do(t, "POST", envPath("s-one", "development")+"/strategies", h.AdminToken, map[string]any{"name": "default", "segments": []any{seg["id"]}}).Want(t, 200)
		segID := strconv.Itoa(int(seg["id"].(float64)))
		wantTypes(t, st.next(t), "unleash-updated", "segment-updated:"+segID, "feature-updated:s-one")
		h.Do(t, "PUT", "/api/admin/segments/"+segID, h.AdminToken, map[string]any{"name": "seg",
			"constraints": []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"u2"}}}}).Want(t, 204)
		wantTypes(t, st.next(t), "unleash-updated", "segment-updated:"+segID)
		h.Do(t, "POST", envPath("s-one", "development")+"/on", h.AdminToken, nil).Want(t, 200)
		ev = st.next(t)
		wantTypes(t, ev, "unleash-updated", "feature-updated:s-one")
		if ev.Data.Events[0]["feature"].(map[string]any)["enabled"] != true {
			t.Fatalf("flag not on: %v", ev.Data.Events[0])
		}
		// A change in another environment is not in the token's scope.
		h.Do(t, "POST", envPath("s-one", "production")+"/on", h.AdminToken, nil).Want(t, 200)
		st.quiet(t, 300*time.Millisecond)
		lastID := ev.ID
		st.close()

		// Resume: only what changed since the last id, no hydration.
		h.Do(t, "DELETE", featurePath("s-one"), h.AdminToken, nil).Want(t, 202)
		st = openStream(t, h, "/api/client/streaming", h.ClientToken, "Last-Event-ID", strconv.FormatInt(lastID, 10))
		ev = st.next(t)
		wantTypes(t, ev, "unleash-updated", "feature-removed:s-one", "segment-removed:"+segID)
		if ev.Data.Events[0]["project"] != "default" {
			t.Fatalf("feature-removed without its project: %v", ev.Data.Events[0])
		}
		st.close()
		// Resuming at the latest id sends nothing until the next change.
		st = openStream(t, h, "/api/client/streaming", h.ClientToken, "Last-Event-ID", strconv.FormatInt(ev.ID, 10))
		st.quiet(t, 300*time.Millisecond)
		createFlag(t, h, "s-two")
		wantTypes(t, st.next(t), "unleash-updated", "feature-updated:s-two")

		// A malformed or unknown id hydrates.
		for _, id := range []string{"abc", "-1", "99999999", "1e9"} {
			wantTypes(t, openStream(t, h, "/api/client/streaming", h.ClientToken, "Last-Event-ID", id).next(t), "unleash-connected", "hydration:2")
		}
	})
}

func TestStreamingScopeByTagAndPrefix(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "team-a")
		createFlag(t, h, "other")
		h.Do(t, "POST", "/api/admin/features/team-a/tags", h.AdminToken, map[string]any{"type": "simple", "value": "x"}).Want(t, 201)
		tagged := openStream(t, h, "/api/client/streaming?tag=simple:x", h.ClientToken)
		wantTypes(t, tagged.next(t), "unleash-connected", "hydration:1")
		prefixed := openStream(t, h, "/api/client/streaming?namePrefix=team-", h.ClientToken)
		wantTypes(t, prefixed.next(t), "unleash-connected", "hydration:1")
		// The flag leaves the tag scope: removed there, untouched by the prefix.
		h.Do(t, "DELETE", "/api/admin/features/team-a/tags/simple/x", h.AdminToken, nil).Want(t, 200)
		wantTypes(t, tagged.next(t), "unleash-updated", "feature-removed:team-a")
		createFlag(t, h, "team-b")
		wantTypes(t, prefixed.next(t), "unleash-updated", "feature-updated:team-b")
		h.Do(t, "POST", envPath("other", "development")+"/on", h.AdminToken, nil).Want(t, 200)
		prefixed.quiet(t, 300*time.Millisecond)
		tagged.quiet(t, 0)
	})
}

func TestStreamingRefusals(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		for _, tok := range []string{"", "default:development.nope", h.AdminToken} {
			res, cancel := streamRequest(t, h, "/api/client/streaming", tok)
			want := 401
			if tok == h.AdminToken {
				want = 403
			}
			if res.StatusCode != want || res.Header.Get("Content-Type") == "text/event-stream" {
				t.Errorf("token %q: %d %s", tok, res.StatusCode, res.Header.Get("Content-Type"))
			}
			res.Body.Close()
			cancel()
		}
		one := openStream(t, h, "/api/client/streaming", h.ClientToken)
		one.next(t)
		res, cancel := streamRequest(t, h, "/api/client/streaming", h.ClientToken)
		defer cancel()
		if res.StatusCode != 429 {
			t.Fatalf("second stream over the limit: %d", res.StatusCode)
		}
		res.Body.Close()
		// Polling still works, and a closed stream frees its place.
		h.Do(t, "GET", "/api/client/delta", h.ClientToken, nil).Want(t, 200)
		one.close()
		deadline := time.Now().Add(5 * time.Second)
		for {
			res, cancel := streamRequest(t, h, "/api/client/streaming", h.ClientToken)
			res.Body.Close()
			cancel()
			if res.StatusCode == 200 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the closed stream's place was not freed: %d", res.StatusCode)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}, func(c *server.Config) { c.Streaming.MaxConnections = 1 })
}

func TestStreamingRevokedTokenEndsStream(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		tok := h.Do(t, "POST", "/api/admin/api-tokens", h.AdminToken, map[string]any{"tokenName": "sdk", "type": "client",
			"environment": "development", "projects": []string{"*"}}).Want(t, 201).Map(t)
		secret := tok["secret"].(string)
		st := openStream(t, h, "/api/client/streaming", secret)
		st.next(t)
		h.Do(t, "DELETE", "/api/admin/api-tokens/"+secret, h.AdminToken, nil).Want(t, 200)
		select {
		case _, ok := <-st.events:
			if ok {
				t.Fatal("an event after the token was revoked")
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the stream of a revoked token stayed open")
		}
	}, func(c *server.Config) { c.Streaming.Keepalive = 100 * time.Millisecond })
}

func TestDeltaPolling(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		createFlag(t, h, "d-one")
		res := h.Do(t, "GET", "/api/client/delta", h.ClientToken, nil).Want(t, 200)
		var body struct{ Events []map[string]any }
		res.JSON(t, &body)
		etag := res.Header.Get("ETag")
		if len(body.Events) != 1 || body.Events[0]["type"] != "hydration" || etag != `"`+strconv.FormatInt(h.Store.Revision(), 10)+`"` {
			t.Fatalf("first delta %v, ETag %s", body.Events, etag)
		}
		h.Do(t, "GET", "/api/client/delta", h.ClientToken, nil, "If-None-Match", etag).Want(t, 304)
		h.Do(t, "POST", envPath("d-one", "development")+"/on", h.AdminToken, nil).Want(t, 200)
		res = h.Do(t, "GET", "/api/client/delta", h.ClientToken, nil, "If-None-Match", etag).Want(t, 200)
		res.JSON(t, &body)
		if len(body.Events) != 1 || body.Events[0]["type"] != "feature-updated" || res.Header.Get("ETag") == etag {
			t.Fatalf("delta after a change: %v, ETag %s", body.Events, res.Header.Get("ETag"))
		}
		h.Do(t, "GET", "/api/client/delta", h.ClientToken, nil, "If-None-Match", res.Header.Get("ETag")).Want(t, 304)
		for _, bad := range []string{`"junk"`, `"123456789"`, `W/"-3"`} {
			res = h.Do(t, "GET", "/api/client/delta", h.ClientToken, nil, "If-None-Match", bad).Want(t, 200)
			res.JSON(t, &body)
			if len(body.Events) != 1 || body.Events[0]["type"] != "hydration" {
				t.Fatalf("If-None-Match %s: %v", bad, body.Events)
			}
		}
		h.Do(t, "GET", "/api/client/delta", "", nil).Want(t, 401)
		h.Do(t, "GET", "/api/client/delta?tag=bad", h.ClientToken, nil).Want(t, 400)
	})
}

// TestStreamingClientThatNeverReads: a client that opens a stream and never
// reads is disconnected once its queue is full, instead of the server
// buffering every change for it; readers of the same scope are unaffected.
func TestStreamingClientThatNeverReads(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	reader := openStream(t, h, "/api/client/streaming", h.ClientToken)
	reader.next(t)
	conn, err := net.Dial("tcp", strings.TrimPrefix(h.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.(*net.TCPConn).SetReadBuffer(4096)
	fmt.Fprintf(conn, "GET /api/client/streaming HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\n\r\n", h.ClientToken)
	deadline := time.Now().Add(5 * time.Second)
	for h.Server.StreamConnections() != 2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d streams open", h.Server.StreamConnections())
		}
		time.Sleep(10 * time.Millisecond)
	}
	createFlag(t, h, "big")
	wantTypes(t, reader.next(t), "unleash-updated", "feature-updated:big")
	// Each change sends the flag with a 40 kB description: far more than
	// the socket buffers hold after 64 queued messages.
	for i := 0; i < 200 && h.Server.StreamConnections() == 2; i++ {
		h.Do(t, "PUT", featurePath("big"), h.AdminToken, map[string]any{"description": strings.Repeat(strconv.Itoa(i%10), 40000)}).Want(t, 200)
		wantTypes(t, reader.next(t), "unleash-updated", "feature-updated:big")
	}
	if n := h.Server.StreamConnections(); n != 1 {
		t.Fatalf("%d streams open after 200 changes the silent client never read", n)
	}
	createFlag(t, h, "after")
	wantTypes(t, reader.next(t), "unleash-updated", "feature-updated:after")
}

func TestStreamingDeletedEnvironmentEndsStream(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		h.Do(t, "POST", "/api/admin/environments", h.AdminToken, map[string]any{"name": "staging", "type": "test"}).Want(t, 201)
		h.Do(t, "POST", projectPath+"/environments", h.AdminToken, map[string]any{"environment": "staging"}).Want(t, 200)
		tok := h.Do(t, "POST", "/api/admin/api-tokens", h.AdminToken, map[string]any{"tokenName": "staging-sdk", "type": "client",
			"environment": "staging", "projects": []string{"*"}}).Want(t, 201).Map(t)
		st := openStream(t, h, "/api/client/streaming", tok["secret"].(string))
		st.next(t)
		other := openStream(t, h, "/api/client/streaming", h.ClientToken)
		other.next(t)
		h.Do(t, "DELETE", "/api/admin/environments/staging", h.AdminToken, nil).Want(t, 200)
		select {
		case ev, ok := <-st.events:
			if ok {
				t.Fatalf("an event after the environment was deleted: %+v", ev)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the stream of a deleted environment stayed open")
		}
		createFlag(t, h, "still-streaming")
		wantTypes(t, other.next(t), "unleash-updated", "feature-updated:still-streaming")
	}, func(c *server.Config) { c.Streaming.Keepalive = 100 * time.Millisecond })
}
