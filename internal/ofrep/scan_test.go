package ofrep

import (
	"maps"
	"net/http"
	"testing"

	"github.com/bunting-flags/bunting/engine"
)

// scanBodies are request bodies of every kind: what providers send, and
// what scanRequest leaves to encoding/json.
var scanBodies = []string{
	`{"context":{"targetingKey":"u1","country":"NO","age":42,"beta":true,"x":null}}`,
	` { "context" : { "targetingKey" : "u1" , "n" : -0.5e+3 } , "other" : 1 } `,
	`{"context":{}}`, `{}`, `{"context":null}`, `{"flags":"a","context":{"a":"é"}}`,
	`{"context":{"userId":"a","targetingKey":"b","currentTime":"2026-01-02"}}`,
	`{"context":{"userId":null,"targetingKey":"b"}}`, `{"context":{"a":""}}`,
	// Left to encoding/json: escapes, nesting, repeats, other spellings.
	`{"context":{"a":"x\"y","b\u0041":"c"}}`, `{"context":{"a":{"b":[1,2]},"c":[]}}`,
	`{"context":{"a":"1","a":null}}`, `{"context":{"a":"1"},"context":{"b":"2"}}`,
	`{"Context":{"a":"1"}}`, `{"CONTEXT":{"a":"1"},"context":{"b":"2"}}`, `{"context":{"é":"1"}}`,
	`{"other":{"x":1},"context":{"a":"1"}}`, `null`,
	// Malformed: the same errors as before.
	``, `  `, `not json`, `[1]`, `"x"`, `{"context":`, `{"context":[1]}`, `{"context":"x"}`,
	`{"context":{"targetingKey":{"a":1}}}`, `{"context":{"userId":["a"]}}`, `{"context":{"a":01}}`,
	`{"context":{"a":1.}}`, `{"context":{"a":-}}`, `{"context":{"a":1e}}`, `{"context":{"a":tru}}`,
	`{"context":{"a":nullx}}`, `{"context":{"a":"1",}}`, `{"context":{"a" "1"}}`, `{"context":{"a":"1"}} x`,
	`{"context":{"a":"1"}`, "{\"context\":{\"a\":\"\x01\"}}", `{"context":{"a":"\x"}}`, `{,}`, `{"a"}`,
}

// TestScanRequestReadsProviderBodies: the bodies providers send are read
// without encoding/json.
func TestScanRequestReadsProviderBodies(t *testing.T) {
	for _, body := range scanBodies[:9] {
		if _, ok := scanRequest([]byte(body), body, nil); !ok {
			t.Errorf("%s: not read by the scanner", body)
		}
	}
	for _, body := range scanBodies[9:] {
		if _, ok := scanRequest([]byte(body), body, nil); ok {
			t.Errorf("%s: read by the scanner, must be left to encoding/json", body)
		}
	}
}

// TestParseRequestBadInput: malformed bodies get OFREP's errors.
func TestParseRequestBadInput(t *testing.T) {
	for body, code := range map[string]string{
		``: CodeParseError, `not json`: CodeParseError, `[1]`: CodeParseError, `{"context":`: CodeParseError,
		`{"context":{"a":01}}`: CodeParseError, `{"context":{"a":"1",}}`: CodeParseError, `{"context":{"a":"1"}} x`: CodeParseError,
		"{\"context\":{\"a\":\"\x01\"}}": CodeParseError, `{"context":{"a":1e}}`: CodeParseError,
		`{"context":[1]}`: CodeInvalidCtx, `{"context":"x"}`: CodeInvalidCtx, `{"context":{"targetingKey":{"a":1}}}`: CodeInvalidCtx,
		`{"context":{"userId":["a"]}}`: CodeInvalidCtx, `{"context":{"userId":true}}`: "",
	} {
		var ctx engine.Context
		err := parseRequest([]byte(body), &ctx)
		switch {
		case code == "" && err != nil:
			t.Errorf("%s: %v", body, err)
		case code != "" && (err == nil || err.Code != code || err.Status != http.StatusBadRequest):
			t.Errorf("%s: got %+v, want 400 %s", body, err, code)
		}
	}
}

// TestScanMatchesDecode: for every body the scanner reads, it reads the
// context encoding/json does.
func TestScanMatchesDecode(t *testing.T) {
	for _, body := range scanBodies {
		checkScanMatchesDecode(t, []byte(body))
	}
}

func FuzzParseRequest(f *testing.F) {
	for _, body := range scanBodies {
		f.Add([]byte(body))
	}
	f.Fuzz(checkScanMatchesDecode)
}

// checkScanMatchesDecode compares parseRequest with the encoding/json path
// alone.
func checkScanMatchesDecode(t *testing.T, body []byte) {
	var got, want engine.Context
	gotErr := parseRequest(body, &got)
	attrs, wantErr := decodeRequest(body, nil)
	if wantErr == nil {
		wantErr = setAttributes(attrs, &want)
	}
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("%q: error %v, encoding/json's %v", body, gotErr, wantErr)
	}
	if gotErr != nil {
		// Which of several bad attributes is named follows map order.
		if gotErr.Code != wantErr.Code || gotErr.Status != wantErr.Status {
			t.Fatalf("%q: error %+v, encoding/json's %+v", body, gotErr, wantErr)
		}
		return
	}
	if !maps.Equal(got.Properties, want.Properties) || got.UserID != want.UserID || got.SessionID != want.SessionID ||
		got.RemoteAddress != want.RemoteAddress || got.Environment != want.Environment || got.AppName != want.AppName ||
		got.CurrentTime != want.CurrentTime {
		t.Fatalf("%q: context %+v, encoding/json's %+v", body, got, want)
	}
}
