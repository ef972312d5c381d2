package server

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestPanicBecomesErrorBody(t *testing.T) {
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

func TestBearer(t *testing.T) {
	for in, want := range map[string]string{
		"abc": "abc", "Bearer abc": "abc", "bearer   abc": "abc", "BEARER\tabc": "abc", " abc ": "abc", "Bearerabc": "Bearerabc", "": "",
	} {
		if got := bearer(in); got != want {
			t.Errorf("bearer(%q) = %q, want %q", in, got, want)
		}
	}
}
