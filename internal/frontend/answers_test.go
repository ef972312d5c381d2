package frontend

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/wire"
)

// TestRepeatedOutcomesAreSentAsBuilt: a request naming no flags whose
// outcome was seen twice is answered from the kept answer, byte for byte
// the one built for it (ETag included), and per endpoint: the /all answer
// of the same outcome is another one; usage counts every request.
func TestRepeatedOutcomesAreSentAsBuilt(t *testing.T) {
	cf := &engine.ClientFeatures{Version: 2}
	for i := range 50 {
		f := engine.Feature{Name: fmt.Sprintf("f%02d", i), Enabled: i%3 != 0, Strategies: []engine.Strategy{{Name: "default"}}}
		if i%5 == 0 {
			f.Variants = []engine.Variant{{Name: "blue", Weight: 1000, Stickiness: "default"}}
		}
		cf.Features = append(cf.Features, f)
	}
	snap := engine.Compile(cf, engine.Options{})
	var counted int
	h := New(Options{
		Snapshot:          func(*http.Request) (*engine.Snapshot, error) { return snap, nil },
		EnableAllEndpoint: true,
		Counter:           func(*engine.Snapshot) Counter { return countFunc(func() { counted++ }) },
	})
	get := func(path string) (string, string) {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, w.Code, w.Body)
		}
		return w.Body.String(), w.Header().Get("ETag")
	}
	st := h.state(snap)
	var kept int
	built := map[string]string{}
	for _, path := range []string{"/?userId=a", "/all?userId=a"} {
		first, etag := get(path)
		second, _ := get(path + "&sessionId=s2")
		if second != first {
			t.Fatalf("%s: the same outcome answered differently", path)
		}
		kept = 0
		for i := range st.answers.slots {
			if st.answers.slots[i].Load() != nil {
				kept++
			}
		}
		third, etag3 := get(path + "&sessionId=s3")
		if third != first || etag3 != etag {
			t.Errorf("%s: the kept answer differs from the one built:\n%s %s\n%s %s", path, third, etag3, first, etag)
		}
		built[path] = first
	}
	for path, first := range built { // answers built since leave the kept ones as they were
		if again, _ := get(path + "&sessionId=s4"); again != first {
			t.Errorf("%s: the kept answer changed:\n%.300s\nwant\n%.300s", path, again, first)
		}
	}
	if kept != 2 {
		t.Errorf("%d answers kept, want one per endpoint", kept)
	}
	if counted != 8 {
		t.Errorf("%d requests counted, want 8", counted)
	}
}

type countFunc func()

func (c countFunc) Record([]engine.Result)       { c() }
func (c countFunc) RecordIDs([]engine.VariantID) { c() }

// TestLargeAnswersAreNotKept: an answer over answerMaxBytes is built for
// every request, never kept.
func TestLargeAnswersAreNotKept(t *testing.T) {
	var c answerCache
	ids := []engine.VariantID{1, 1}
	body := make([]byte, answerMaxBytes+1)
	c.offer(7, ids, false, body, wire.OutcomeETag(2, 7))
	c.offer(7, ids, false, body, wire.OutcomeETag(2, 7))
	if c.get(7, ids, false) != nil {
		t.Error("a large answer was kept")
	}
	c.offer(8, ids, false, []byte("{}"), wire.OutcomeETag(2, 7))
	if c.get(8, ids, false) != nil {
		t.Error("an outcome seen once was kept")
	}
	c.offer(8, ids, false, []byte("{}"), wire.OutcomeETag(2, 7))
	if c.get(8, ids, false) == nil || c.get(8, ids, true) != nil || c.get(8, []engine.VariantID{1, 0}, false) != nil {
		t.Error("the outcome seen twice is not kept, or is found for another one")
	}
}

// TestAKeptAnswerInUseIsNotReplaced: two outcomes that share a slot and
// keep coming as often as each other do not replace each other's kept
// answer (each replacement copies a whole answer): the one kept stays
// while it is used, and the other is built each time, uncopied. Once the
// kept one is no longer asked for, the other takes its place.
func TestAKeptAnswerInUseIsNotReplaced(t *testing.T) {
	var c answerCache
	a, b := uint64(3), uint64(3+answerSlots) // the same slot
	ids := []engine.VariantID{1}
	body := []byte(`{"toggles":[]}`)
	c.offer(a, ids, false, body, wire.OutcomeETag(2, a))
	c.offer(a, ids, false, body, wire.OutcomeETag(2, a))
	kept := c.get(a, ids, false)
	if kept == nil {
		t.Fatal("the outcome seen twice is not kept")
	}
	for range 100 { // a and b in turn, each twice in a row
		for _, h := range []uint64{b, b, a, a} {
			if h == a {
				if c.get(a, ids, false) != kept {
					t.Fatal("the answer in use was replaced")
				}
				continue
			}
			if c.get(h, ids, false) == nil {
				c.offer(h, ids, false, body, wire.OutcomeETag(2, h))
			}
		}
	}
	for range answerCredit + 1 { // a is no longer asked for: b takes the slot
		c.offer(b, ids, false, body, wire.OutcomeETag(2, b))
	}
	if c.get(b, ids, false) == nil {
		t.Error("an answer unused since the last offer did not give way")
	}
}
