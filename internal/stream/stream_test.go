package stream_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/bunting-flags/bunting/internal/stream"
)

type scope string

func (s scope) Key() string { return string(s) }

// snap is a test snapshot: flag name → enabled.
type snap map[string]bool

func state(s any, _ stream.Scope) *stream.State {
	st := &stream.State{Segments: map[int][]byte{}}
	// In the map's order: the hub puts a state's flags in name order.
	for name, on := range *s.(*snap) {
		b, _ := json.Marshal(map[string]any{"name": name, "enabled": on})
		st.Flags = append(st.Flags, stream.Flag{Name: name, Project: "default", JSON: b})
	}
	return st
}

// A subscriber that never reads is closed once its queue is full, and its
// place is freed: the hub holds at most Queue messages for it.
func TestSlowSubscriberIsClosed(t *testing.T) {
	h := stream.New(stream.Config{MaxConnections: 10, Queue: 4}, state)
	h.Publish(1, &snap{"a": false})
	slow, err := h.Subscribe(scope("s"), 0, false)
	if err != nil {
		t.Fatal(err)
	}
	fast, _ := h.Subscribe(scope("s"), 0, false)
	<-fast.C // the hydration
	for i := 2; i < 20; i++ {
		h.Publish(int64(i), &snap{"a": i%2 == 0})
		select {
		case <-fast.C:
		case <-fast.Done:
			t.Fatal("a reading subscriber was closed")
		}
	}
	select {
	case <-slow.Done:
	default:
		t.Fatal("a subscriber that never reads was kept")
	}
	if len(slow.C) > 4 {
		t.Fatalf("%d messages queued", len(slow.C))
	}
	if n := h.Connections(); n != 1 {
		t.Fatalf("%d connections after the slow one was closed", n)
	}
}

// Resuming from any revision in the history gives exactly the difference;
// from one that fell out of it, a hydration.
func TestResumeAndHistory(t *testing.T) {
	h := stream.New(stream.Config{MaxConnections: 10, History: 3}, state)
	for i := 1; i <= 5; i++ {
		s := snap{}
		for j := 1; j <= i; j++ {
			s["f"+strconv.Itoa(j)] = true
		}
		h.Publish(int64(i), &s)
	}
	a, _ := h.Delta(scope("s"), 4, true)
	body := a.Body()
	if a.NotModified || string(body) != `{"events":[{"type":"feature-updated","eventId":5,"feature":{"enabled":true,"name":"f5"}}]}` {
		t.Fatalf("delta from 4: %s", body)
	}
	if a, _ := h.Delta(scope("s"), 5, true); !a.NotModified {
		t.Fatal("delta from the latest revision is not 304")
	}
	a, _ = h.Delta(scope("s"), 2, true) // fell out of a 3-snapshot history
	body = a.Body()
	var got struct{ Events []map[string]any }
	_ = json.Unmarshal(body, &got)
	if len(got.Events) != 1 || got.Events[0]["type"] != "hydration" || len(got.Events[0]["features"].([]any)) != 5 {
		t.Fatalf("delta from a forgotten revision: %s", body)
	}
	// An older snapshot published late is ignored.
	h.Publish(3, &snap{})
	if rev, _ := h.Latest(); rev != 5 {
		t.Fatalf("latest %d", rev)
	}
	if _, err := h.Subscribe(scope("x"), 0, false); err != nil {
		t.Fatal(err)
	}
	lim := stream.New(stream.Config{MaxConnections: 0}, state)
	lim.Publish(1, &snap{})
	if _, err := lim.Subscribe(scope("x"), 0, false); err != stream.ErrTooManyConnections {
		t.Fatalf("MaxConnections 0: %v", err)
	}
}

// TestBodiesAsEncodingJSONWritesThem: the hydration, the events body and
// a message are put together by hand around the JSON the hub is given;
// they are the bytes encoding/json writes for the same values.
func TestBodiesAsEncodingJSONWritesThem(t *testing.T) {
	flag := func(name string) []byte {
		b, _ := json.Marshal(map[string]any{"name": name, "description": "<b>&</b>", "enabled": true})
		return b
	}
	st := &stream.State{Flags: []stream.Flag{{Name: "a", JSON: flag("a")}, {Name: "b", JSON: flag("b")}, {Name: "c", JSON: flag("c")}},
		Segments: map[int][]byte{2: []byte(`{"id":2,"constraints":[]}`), 1: []byte(`{"id":1,"constraints":[]}`)}}
	want, _ := json.Marshal(struct {
		Type     string            `json:"type"`
		EventID  int64             `json:"eventId"`
		Features []json.RawMessage `json:"features"`
		Segments []json.RawMessage `json:"segments"`
	}{"hydration", 42, []json.RawMessage{flag("a"), flag("b"), flag("c")},
		[]json.RawMessage{[]byte(`{"id":1,"constraints":[]}`), []byte(`{"id":2,"constraints":[]}`)}})
	if got := stream.Hydration(st, 42); string(got) != string(want) {
		t.Errorf("Hydration:\n%s\nwant\n%s", got, want)
	}
	empty, _ := json.Marshal(struct {
		Type     string            `json:"type"`
		EventID  int64             `json:"eventId"`
		Features []json.RawMessage `json:"features"`
		Segments []json.RawMessage `json:"segments"`
	}{"hydration", 1, []json.RawMessage{}, []json.RawMessage{}})
	if got := stream.Hydration(&stream.State{}, 1); string(got) != string(empty) {
		t.Errorf("empty Hydration: %s, want %s", got, empty)
	}
	for _, events := range [][]json.RawMessage{{}, {flag("a")}, {flag("a"), flag("b")}} {
		want, _ := json.Marshal(struct {
			Events []json.RawMessage `json:"events"`
		}{events})
		if got := stream.Body(events); string(got) != string(want) {
			t.Errorf("Body: %s, want %s", got, want)
		}
	}
	if got, want := string(stream.Message("unleash-updated", 7, []byte(`{"events":[]}`))), "event: unleash-updated\nid: 7\ndata: {\"events\":[]}\n\n"; got != want {
		t.Errorf("Message: %q, want %q", got, want)
	}
}

// TestDiffAgainstMaps: Diff's merge of two name-ordered flag lists gives
// the events a direct comparison by name gives, for random pairs of
// states (flags added, removed, changed and kept, at either end).
func TestDiffAgainstMaps(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func() (*stream.State, map[string]stream.Flag) {
		st, byName := &stream.State{}, map[string]stream.Flag{}
		for i := range 12 {
			if rng.IntN(2) == 0 {
				continue
			}
			name := fmt.Sprintf("f%02d", i)
			f := stream.Flag{Name: name, Project: "p" + name, JSON: []byte(fmt.Sprintf(`{"name":%q,"v":%d}`, name, rng.IntN(2)))}
			st.Flags = append(st.Flags, f)
			byName[name] = f
		}
		return st, byName
	}
	for round := range 2000 {
		old, oldByName := random()
		cur, curByName := random()
		var want []json.RawMessage
		for _, name := range slices.Sorted(maps.Keys(curByName)) {
			if prev, ok := oldByName[name]; !ok || string(prev.JSON) != string(curByName[name].JSON) {
				want = append(want, json.RawMessage(fmt.Sprintf(`{"type":"feature-updated","eventId":7,"feature":%s}`, curByName[name].JSON)))
			}
		}
		for _, name := range slices.Sorted(maps.Keys(oldByName)) {
			if _, ok := curByName[name]; !ok {
				want = append(want, json.RawMessage(fmt.Sprintf(`{"type":"feature-removed","eventId":7,"featureName":%q,"project":%q}`, name, "p"+name)))
			}
		}
		got := stream.Diff(old, cur, 7)
		if len(got) != len(want) {
			t.Fatalf("round %d: %d events, want %d:\n%s\nwant\n%s", round, len(got), len(want), got, want)
		}
		for i := range got {
			if string(got[i]) != string(want[i]) {
				t.Fatalf("round %d: event %d %s, want %s", round, i, got[i], want[i])
			}
		}
	}
}
