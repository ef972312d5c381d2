package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/bunting-flags/bunting/engine"
)

// oracleParse is the straightforward encoding/json reading of a POST body
// that ParsePostBody must agree with.
func oracleParse(body []byte, ctx *engine.Context) ([]string, error) {
	body = bytes.Trim(body, " \t\r\n")
	if len(body) == 0 {
		return nil, nil
	}
	var top map[string]json.RawMessage
	if body[0] != '{' || json.Unmarshal(body, &top) != nil {
		return nil, errors.New("bad body")
	}
	var names []string
	if t, ok := top["toggles"]; ok && string(t) != "null" {
		if json.Unmarshal(t, &names) != nil || t[0] != '[' {
			return nil, errors.New("bad toggles")
		}
		if len(names) > MaxToggleNames {
			return nil, errors.New("too many toggles")
		}
		seen := map[string]bool{}
		names = slices.DeleteFunc(names, func(n string) bool { dup := seen[n]; seen[n] = true; return dup })
		var raw []json.RawMessage
		_ = json.Unmarshal(t, &raw)
		for _, r := range raw {
			if r[0] != '"' {
				return nil, errors.New("bad toggle")
			}
		}
	}
	if c, ok := top["context"]; ok && string(c) != "null" {
		var fields map[string]json.RawMessage
		if c[0] != '{' || json.Unmarshal(c, &fields) != nil {
			return nil, errors.New("bad context")
		}
		extra := map[string]string{}
		for k, v := range fields {
			if k == "properties" {
				if string(v) == "null" {
					continue
				}
				var props map[string]json.RawMessage
				if v[0] != '{' || json.Unmarshal(v, &props) != nil {
					return nil, errors.New("bad properties")
				}
				for pk, pv := range props {
					s, present, err := oracleScalar(pv)
					if err != nil {
						return nil, err
					}
					if present {
						setProperty(ctx, pk, s)
					}
				}
				continue
			}
			s, present, err := oracleScalar(v)
			if err != nil {
				return nil, err
			}
			if !present {
				continue
			}
			if f, _ := standardField(ctx, k); f != nil {
				*f = s
			} else {
				extra[k] = s
			}
		}
		for k, v := range extra {
			if _, exists := ctx.Properties[k]; !exists {
				setProperty(ctx, k, v)
			}
		}
	}
	if len(names) == 0 {
		names = nil
	}
	return names, nil
}

func oracleScalar(v json.RawMessage) (string, bool, error) {
	switch v[0] {
	case '"':
		var s string
		_ = json.Unmarshal(v, &s)
		return s, s != "", nil
	case '{', '[':
		return "", false, errors.New("not scalar")
	case 'n':
		return "", false, nil
	}
	return string(v), true, nil
}

var postBodies = []string{
	``, `{}`, ` { } `, `{"toggles":["a","b","a"]}`, `{"toggles":[]}`, `{"toggles":null,"context":null}`,
	`{"context":{"userId":"u1","sessionId":"s","appName":"web","environment":"prod","remoteAddress":"1.2.3.4","currentTime":"2026-01-01T00:00:00Z"}}`,
	`{"context":{"userId":123,"flag":true,"n":-1.5e3,"gone":null,"empty":""}}`,
	`{"context":{"region":"eu","properties":{"region":"us","a":"b"}}}`,
	`{"context":{"properties":{"region":"us"},"region":"eu"}}`,
	`{"context":{"properties":{"a":{"b":1}}}}`, `{"context":{"properties":"x"}}`, `{"context":[1]}`,
	`{"toggles":"x"}`, `{"toggles":[1]}`, `{ toggles": [] }`, `"str"`, `null`, `[1]`, `{"a":1}x`,
	`{"toggles":["caf\u00e9","\"q\"","😀"],"context":{"userId":"\u00fcber","properties":{"k\n":"v\t"}}}`,
	`{"blah":{"deep":[1,2,{"x":[true,false,null]}]},"toggles":["x"]}`, `{"toggles":["a",]}`, `{"a":01}`, `{"a":1.}`,
	`{"toggles":["a"],"toggles":["b"]}`, `{"context":{"userId":"a","userId":"b"}}`, "{\"a\":\"\x01\"}", `{"a":-}`,
	manyToggles(MaxToggleNames, 0), manyToggles(MaxToggleNames+1, 0), manyToggles(40, 7), manyToggles(MaxToggleNames+5, 600),
}

// manyToggles is a body listing n names, every one of them distinct but
// for repeats, which are names listed again.
func manyToggles(n, repeats int) string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf(`"t%d"`, i%(n-repeats))
	}
	return `{"toggles":[` + strings.Join(names, ",") + `]}`
}

func TestPostBodyScannerAgreesWithEncodingJSON(t *testing.T) {
	for _, body := range postBodies {
		comparePostBody(t, []byte(body))
	}
}

func FuzzPostBody(f *testing.F) {
	for _, b := range postBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) { comparePostBody(t, body) })
}

func comparePostBody(t *testing.T, body []byte) {
	t.Helper()
	var got, want engine.Context
	gotNames, gotErr := ParsePostBody(body, &got, nil)
	wantNames, wantErr := oracleParse(body, &want)
	if hasDuplicateKeys(body) {
		return // encoding/json keeps the last one; the scanner may reject an earlier bad one
	}
	if (gotErr != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v, oracle %v", body, gotErr, wantErr)
	}
	if gotErr != nil {
		return
	}
	if diff := cmp.Diff(wantNames, gotNames); diff != "" {
		t.Fatalf("%q names: %s", body, diff)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("%q context: %s", body, diff)
	}
}

// hasDuplicateKeys reports whether any object in a valid document repeats
// a key.
func hasDuplicateKeys(body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	type frame struct {
		keys     map[string]bool
		isObject bool
		wantKey  bool
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				if top != nil && top.isObject {
					top.wantKey = true
				}
				stack = append(stack, &frame{keys: map[string]bool{}, isObject: v == '{', wantKey: true})
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if top != nil && top.isObject && top.wantKey {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
				top.wantKey = false
				continue
			}
			if top != nil && top.isObject {
				top.wantKey = true
			}
		default:
			if top != nil && top.isObject {
				top.wantKey = true
			}
		}
	}
}
