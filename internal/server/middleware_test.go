package server

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPanicBecomesErrorBody(t *testing.T) {
	t.Parallel()
	s := &Server{cfg: DefaultConfig()}
	s.log = slog.New(slog.DiscardHandler)
	h := s.observe(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/x", nil))
	var body struct{ ID, Name, Message string }
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 500 || body.ID == "" || body.Name != "InternalError" {
		t.Fatalf("status %d body %s", rec.Code, rec.Body)
	}
	if rec.Header().Get("X-Request-Id") == "" {
		t.Fatal("no request id")
	}
}

// A request's own X-Request-Id (up to 64 characters) comes back; otherwise
// each response gets a new id.
func TestRequestID(t *testing.T) {
	t.Parallel()
	s := &Server{cfg: DefaultConfig()}
	s.log = slog.New(slog.DiscardHandler)
	h := s.observe(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	idOf := func(sent string) string {
		r := httptest.NewRequest("GET", "/x", nil)
		if sent != "" {
			r.Header.Set("X-Request-Id", sent)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if got := rec.Header().Values("X-Request-Id"); len(got) != 1 || got[0] == "" {
			t.Fatalf("sent %q, got X-Request-Id %q", sent, got)
		}
		return rec.Header().Get("X-Request-Id")
	}
	if got := idOf("caller-chosen-id"); got != "caller-chosen-id" {
		t.Fatalf("own id came back as %q", got)
	}
	long := strings.Repeat("x", 65)
	seen := map[string]bool{}
	for _, sent := range []string{"", "", long, ""} {
		got := idOf(sent)
		if got == long || seen[got] || !strings.HasPrefix(got, requestIDPrefix+"-") {
			t.Fatalf("sent %q, got %q (seen before: %v)", sent, got, seen[got])
		}
		seen[got] = true
	}
}
