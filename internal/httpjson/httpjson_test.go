package httpjson_test

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
)

func TestDecodeErrors(t *testing.T) {
	type body struct {
		Name  string `json:"name"`
		Limit int    `json:"limit"`
	}
	cases := []struct {
		name, body string
		limit      int64
		dst        any
		kind       apierr.Kind
		message    string
	}{
		{"empty", "  ", 0, &body{}, apierr.KindValidation, "required but was empty"},
		{"malformed", `{"name":`, 0, &body{}, apierr.KindValidation, "not valid JSON"},
		{"mistyped property", `{"limit":"ten"}`, 0, &body{}, apierr.KindValidation, "`limit` property"},
		{"array for an object", `[1]`, 0, &body{}, apierr.KindValidation, "must be a JSON object"},
		{"object for an array", `{}`, 0, &[]body{}, apierr.KindValidation, "must be a JSON array"},
		{"too large", `{"name":"` + strings.Repeat("x", 100) + `"}`, 50, &body{}, apierr.KindTooLarge, "limit of 50 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", strings.NewReader(c.body))
			err := httpjson.Decode(r, c.limit, c.dst)
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Kind != c.kind || !strings.Contains(ae.Message, c.message) {
				t.Fatalf("Decode(%q) = %v, want a %v error containing %q", c.body, err, c.kind, c.message)
			}
		})
	}
	var ok body
	if err := httpjson.Decode(httptest.NewRequest("POST", "/", strings.NewReader(`{"name":"a","limit":3}`)), 100, &ok); err != nil || ok != (body{"a", 3}) {
		t.Fatalf("valid body: %+v %v", ok, err)
	}
}
