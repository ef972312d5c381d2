package httpjson_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
)

func TestCheckContentType(t *testing.T) {
	strict, proxy, admin := httpjson.ContentRule{}, httpjson.ContentRule{Optional: true}, httpjson.ContentRule{Suffix: true}
	for _, c := range []struct {
		ct, body string
		rule     httpjson.ContentRule
		ok       bool
	}{
		{"application/json", "{}", strict, true},
		{"application/json; charset=utf-8", "{}", strict, true},
		{"Application/JSON", "{}", strict, true},
		{"", "{}", strict, false},
		{"", "{}", proxy, true},
		{"text/plain", "", proxy, true}, // no body: nothing to refuse
		{"text/plain", "{}", proxy, false},
		{"application/vnd.api+json", "{}", proxy, false},
		{"application/vnd.api+json", "{}", admin, true},
		{"application/jsonx", "{}", admin, false},
		{"application/json\xff", "{}", strict, false},
	} {
		r := httptest.NewRequest("POST", "/", strings.NewReader(c.body))
		if c.ct != "" {
			r.Header.Set("Content-Type", c.ct)
		}
		err := httpjson.CheckContentType(r, c.rule)
		if (err == nil) != c.ok {
			t.Errorf("%q %+v: err %v, want ok %v", c.ct, c.rule, err, c.ok)
		}
		if err != nil && apierr.From(err).Status() != 415 {
			t.Errorf("%q: status %d, want 415", c.ct, apierr.From(err).Status())
		}
	}
}

func TestMethodNotAllowedAndOK(t *testing.T) {
	w := httptest.NewRecorder()
	err := httpjson.MethodNotAllowed(w, httptest.NewRequest("PUT", "/x", nil), "GET, HEAD")
	if w.Header().Get("Allow") != "GET, HEAD" || apierr.From(err).Status() != 405 || err.Error() != "Cannot PUT /x" {
		t.Fatalf("Allow %q, err %v", w.Header().Get("Allow"), err)
	}
	w = httptest.NewRecorder()
	if err := httpjson.WriteOK(w); err != nil || w.Code != 200 || w.Body.String() != "OK" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		t.Fatalf("WriteOK: %d %q %q", w.Code, w.Body, w.Header().Get("Content-Type"))
	}
}
