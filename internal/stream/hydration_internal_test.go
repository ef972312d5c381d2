package stream

import (
	"encoding/json"
	"testing"
)

// TestHydrationInOneBuffer: the delta body and the unleash-connected
// message built in one buffer are the ones composed from Hydration, Body
// and Message.
func TestHydrationInOneBuffer(t *testing.T) {
	st := &State{Flags: map[string]Flag{"b": {JSON: []byte(`{"name":"b"}`)}, "a": {JSON: []byte(`{"name":"a"}`)}},
		Segments: map[int][]byte{3: []byte(`{"id":3,"constraints":[]}`)}}
	body := Body([]json.RawMessage{Hydration(st, 9)})
	if got := appendHydrationBody(nil, st, 9); string(got) != string(body) {
		t.Errorf("delta body %s, want %s", got, body)
	}
	if got, want := hydrationMessage(st, 9), Message("unleash-connected", 9, body); string(got) != string(want) {
		t.Errorf("connected message %q, want %q", got, want)
	}
}
