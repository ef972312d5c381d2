package stream

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strconv"
	"testing"
)

// TestHydrationInOneBuffer: the delta body and the unleash-connected
// message built in one buffer are the ones composed from Hydration, Body
// and Message.
func TestHydrationInOneBuffer(t *testing.T) {
	st := &State{Flags: []Flag{{Name: "a", JSON: []byte(`{"name":"a"}`)}, {Name: "b", JSON: []byte(`{"name":"b"}`)}},
		Segments: map[int][]byte{3: []byte(`{"id":3,"constraints":[]}`)}}
	body := Body([]json.RawMessage{Hydration(st, 9)})
	if got := appendHydrationBody(nil, st, 9); string(got) != string(body) {
		t.Errorf("delta body %s, want %s", got, body)
	}
	if got, want := hydrationMessage(st, 9), Message("unleash-connected", 9, body); string(got) != string(want) {
		t.Errorf("connected message %q, want %q", got, want)
	}
}

// TestHydrationAnswerWrittenAsBuilt: a hydration delta answer written flag
// by flag is the body built in one buffer, plain (with its exact length)
// and gzipped, and HEAD sends the headers alone.
func TestHydrationAnswerWrittenAsBuilt(t *testing.T) {
	st := &State{Segments: map[int][]byte{3: []byte(`{"id":3,"constraints":[]}`)}}
	for i := range 3000 {
		name := fmt.Sprintf("flag-%04d", i)
		st.Flags = append(st.Flags, Flag{Name: name, JSON: []byte(`{"name":"` + name + `","enabled":true,"strategies":[{"name":"default","constraints":[]}]}`)})
	}
	a := &DeltaAnswer{Rev: 1234567, hydration: st}
	want := appendHydrationBody(nil, st, a.Rev)
	for _, c := range []struct {
		method, encoding string
	}{{"GET", ""}, {"GET", "gzip"}, {"HEAD", ""}, {"HEAD", "gzip"}} {
		r := httptest.NewRequest(c.method, "/api/client/delta", nil)
		if c.encoding != "" {
			r.Header.Set("Accept-Encoding", c.encoding)
		}
		w := httptest.NewRecorder()
		a.Write(w, r)
		body := w.Body.Bytes()
		if w.Header().Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatalf("%s %s: %v", c.method, c.encoding, err)
			}
			if body, err = io.ReadAll(zr); err != nil {
				t.Fatalf("%s %s: %v", c.method, c.encoding, err)
			}
		} else if c.encoding == "gzip" && c.method == "GET" {
			t.Fatalf("a %d-byte hydration was not gzipped", len(want))
		}
		if c.method == "HEAD" {
			if len(body) != 0 {
				t.Errorf("HEAD %s sent %d bytes", c.encoding, len(body))
			}
			continue
		}
		if w.Code != 200 || w.Header().Get("ETag") != `"1234567"` || !bytes.Equal(body, want) {
			t.Errorf("%s %s: %d, ETag %s, %d bytes, want the %d built", c.method, c.encoding, w.Code, w.Header().Get("ETag"), len(body), len(want))
		}
		if cl := w.Header().Get("Content-Length"); c.encoding == "" && cl != strconv.Itoa(len(want)) {
			t.Errorf("Content-Length %s, want %d", cl, len(want))
		}
	}
}
