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

// TestTextNoDatabaseCanStore: NUL characters and invalid UTF-8 are refused
// in any string of a body, keys included, naming where they are; the
// escaped text \\u0000 (a backslash, then u0000) is ordinary text.
func TestTextNoDatabaseCanStore(t *testing.T) {
	type body struct {
		Name  string         `json:"name"`
		Items []any          `json:"items"`
		Extra map[string]any `json:"extra"`
	}
	refused := []struct{ body, where string }{
		{`{"name":"a\u0000b"}`, "The `name` property"},
		{"{\"name\":\"a\xffb\"}", "The `name` property"},
		{"{\"name\":\"ok\",\"items\":[1,\"x\",\"\xc3\x28\"]}", "The `items[2]` property"},
		{`{"extra":{"deep":[{"v":"\u0000"}]}}`, "The `extra.deep[0].v` property"},
		{`{"extra":{"k\u0000":1}}`, "A property name in `extra`"},
		{`{"a\u0000":1}`, "A property name"},
		{`"\u0000"`, "The request body"},
		{`{"ignored":-1e400,"name":"x\u0000"}`, "The `name` property"}, // a number Go cannot hold first
		{"{\"unknown\":\"\xed\xa0\x80\"}", "The `unknown` property"},   // an encoded surrogate
	}
	for _, c := range refused {
		var dst body
		err := httpjson.Unmarshal([]byte(c.body), &dst)
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Kind != apierr.KindValidation || !strings.Contains(ae.Message, c.where) || !strings.Contains(ae.Message, "NUL") {
			t.Errorf("Unmarshal(%q) = %v, want a validation error naming %s", c.body, err, c.where)
		}
	}
	for _, ok := range []string{`{"name":"a\\u0000b"}`, `{"name":"é😀\ufffd"}`, `{"name":"x","items":[1e400]}`} {
		if err := httpjson.CheckText([]byte(ok)); err != nil {
			t.Errorf("CheckText(%q) = %v, want nil", ok, err)
		}
	}
}

// TestIntegerRange: a number outside the Go type of its property is a 400
// naming the property and the range (int32 for INTEGER columns).
func TestIntegerRange(t *testing.T) {
	var dst struct {
		SortOrder *int32 `json:"sortOrder"`
	}
	for _, n := range []string{"2147483648", "-2147483649", "1.5", "1e400"} {
		err := httpjson.Unmarshal([]byte(`{"sortOrder":`+n+`}`), &dst)
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Kind != apierr.KindValidation || !strings.Contains(ae.Message, "`sortOrder` property must be a whole number from -2147483648 to 2147483647") {
			t.Errorf("sortOrder %s: %v", n, err)
		}
	}
	if err := httpjson.Unmarshal([]byte(`{"sortOrder":2147483647}`), &dst); err != nil || *dst.SortOrder != 2147483647 {
		t.Fatalf("largest int32: %v", err)
	}
}

// TestSetLocationEscapesEachValue: a value cannot break the header or add
// a path level.
func TestSetLocationEscapesEachValue(t *testing.T) {
	w := httptest.NewRecorder()
	httpjson.SetLocation(w, "tags/%s/%s", "simple", "a b/é\r\n\x00")
	if got, want := w.Header().Get("Location"), "tags/simple/a%20b%2F%C3%A9%0D%0A%00"; got != want {
		t.Fatalf("Location %q, want %q", got, want)
	}
}
