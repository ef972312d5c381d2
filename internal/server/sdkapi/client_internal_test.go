package sdkapi

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/clientconfig"
	"github.com/bunting-flags/bunting/internal/store"
)

// largeData is n flags with a strategy each; every third uses a segment.
func largeData(n int, rollout string) *store.ClientData {
	d := &store.ClientData{Revision: 7, Generation: 1, EnvironmentNames: []string{"development"}, Tags: map[string][][2]string{},
		Segments: []store.Segment{{ID: 4, Name: "s", Constraints: []engine.Constraint{{ContextName: "region", Operator: "IN", Values: []string{"eu"}}}}}}
	for i := range n {
		name := fmt.Sprintf("flag-%04d", i)
		d.Features = append(d.Features, store.Feature{Name: name, Project: "default", Type: "release"})
		d.Environments = append(d.Environments, store.FeatureEnvironment{FeatureName: name, Environment: "development", Enabled: i%2 == 0})
		st := store.Strategy{Name: "flexibleRollout", FeatureName: name, Environment: "development", Segments: []int{},
			Parameters: map[string]string{"rollout": rollout, "stickiness": "default", "groupId": name}}
		if i%3 == 0 {
			st.Segments = []int{4}
		}
		d.Strategies = append(d.Strategies, st)
	}
	return d
}

// serve answers one GET /api/client/features for q from res.
func serve(t *testing.T, res *clientResponse, gz bool) []byte {
	t.Helper()
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/api/client/features", nil)
	if gz {
		r.Header.Set("Accept-Encoding", "gzip")
	}
	writeClientFeatures(w, r, res)
	body := w.Body.Bytes()
	if n, _ := strconv.Atoi(w.Header().Get("Content-Length")); n != len(body) {
		t.Errorf("Content-Length %d, body %d bytes", n, len(body))
	}
	if gz {
		if w.Header().Get("Content-Encoding") != "gzip" {
			t.Fatal("not gzipped")
		}
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body, err = io.ReadAll(zr); err != nil {
			t.Fatal(err)
		}
	}
	return body
}

// TestLargeAnswersWrittenFromTheFlags: an answer too large to keep whole is
// written from the configuration's flags, and gzipped from chunks deflated
// apart; both are byte for byte the answer kept whole, in both segment
// forms, and after a change to one flag the chunks of the others are
// reused.
func TestLargeAnswersWrittenFromTheFlags(t *testing.T) {
	cfg := clientconfig.Build(largeData(3000, "50"))
	for _, inline := range []bool{true, false} {
		q := clientQuery{env: "development", inline: inline}
		var chunks chunkCache
		whole := newClientResponse(cfg, q, &chunks)
		if whole.whole == nil {
			t.Fatal("a small answer is not kept whole")
		}
		defer func(m int) { materializeMax = m }(materializeMax)
		materializeMax = 64 << 10
		large := newClientResponse(cfg, q, &chunks)
		materializeMax = 4 << 20
		if large.whole != nil || large.etag != whole.etag {
			t.Fatalf("inline %v: kept whole %v, ETag %s vs %s", inline, large.whole != nil, large.etag, whole.etag)
		}
		want := whole.whole.Body
		if got := serve(t, large, false); !bytes.Equal(got, want) {
			t.Fatalf("inline %v: written from the flags:\n%.300s\nwant\n%.300s", inline, got, want)
		}
		if got := serve(t, large, true); !bytes.Equal(got, want) {
			t.Fatalf("inline %v: gzipped from chunks: %d bytes decoded, want %d", inline, len(got), len(want))
		}
		chunkCount := len(chunks.cur)
		if chunkCount < 4 {
			t.Fatalf("%d chunks", chunkCount)
		}

		// One flag changes (its JSON grows by a few hundred bytes): the
		// chunk that holds it is deflated anew (and at most the next one,
		// when the chunk's end moved), not those after it.
		changed := largeData(3000, "50")
		changed.Strategies[1500].Constraints = []engine.Constraint{
			{ContextName: "country", Operator: "IN", Values: []string{"NO", "SE", "DK", "FI", "IS", "EE", "LV", "LT"}},
			{ContextName: "appVersion", Operator: "SEMVER_GT", Value: "1.2.3"},
			{ContextName: "email", Operator: "STR_ENDS_WITH", Values: []string{"@example.com", "@example.org"}},
		}
		changed.Revision = 8
		only := &store.ClientData{Revision: 8, Generation: 2, EnvironmentNames: changed.EnvironmentNames, Segments: changed.Segments,
			Only: []string{"flag-1500"}, Features: changed.Features[1500:1501], Environments: changed.Environments[1500:1501],
			Strategies: changed.Strategies[1500:1501], Tags: map[string][][2]string{}}
		next := cfg.Apply(only)
		chunks.nextGeneration()
		materializeMax = 64 << 10
		after := newClientResponse(next, q, &chunks)
		materializeMax = 4 << 20
		serve(t, after, true)
		fresh := 0
		for k := range chunks.cur {
			if _, ok := chunks.prev[k]; !ok {
				fresh++
			}
		}
		if fresh < 1 || fresh > 2 || len(chunks.cur) < chunkCount-1 {
			t.Errorf("after a change to one flag, %d of %d chunks deflated anew (%d before), want 1 or 2", fresh, len(chunks.cur), chunkCount)
		}
		want = newClientResponse(clientconfig.Build(changed), q, &chunkCache{}).whole.Body
		if got := serve(t, after, true); !bytes.Equal(got, want) {
			t.Errorf("inline %v: after a change, the chunked answer is not a fresh build's", inline)
		}
	}
}
