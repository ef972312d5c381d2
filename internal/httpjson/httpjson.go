// Package httpjson reads and writes the JSON bodies of Bunting's HTTP APIs.
// Every way a body can be wrong — too large, empty, malformed, a property of
// the wrong type or out of its type's range, text that no database can
// store (NUL characters, invalid UTF-8) — becomes a typed apierr error (413
// or 400 naming the property), so handlers never answer 500 for bad input.
package httpjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// ReadBody reads the whole request body. A positive limit caps it (the
// server's middleware may already cap it); going over a cap is a 413.
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	var src io.Reader = r.Body
	if limit > 0 {
		src = http.MaxBytesReader(nil, r.Body, limit)
	}
	body, err := io.ReadAll(src)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, apierr.TooLarge("request body is larger than the limit of %d bytes", tooLarge.Limit)
	}
	if err != nil {
		return nil, apierr.Validation("could not read the request body: %v", err)
	}
	return body, nil
}

// Decode reads a required JSON body (capped at limit when positive) into
// dst; an empty body is a 400.
func Decode(r *http.Request, limit int64, dst any) error {
	body, err := ReadBody(r, limit)
	if err != nil {
		return err
	}
	return DecodeBody(body, dst)
}

// DecodeBody decodes a required JSON body already read into dst; an empty
// body is a 400.
func DecodeBody(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return EmptyBody()
	}
	return Unmarshal(body, dst)
}

// DecodeUnstored is DecodeBody for a body that no database stores (the
// proxy's): the same errors, without refusing NUL characters or invalid
// UTF-8 in its strings.
func DecodeUnstored(body []byte, dst any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return EmptyBody()
	}
	return decodeError(json.Unmarshal(body, dst), dst)
}

// Unmarshal decodes a JSON document into dst; its error names the
// offending property. A document with a NUL character or invalid UTF-8 in
// any string (key or value) is refused: PostgreSQL cannot store such text,
// and SQLite must answer the same.
func Unmarshal(body []byte, dst any) error {
	if err := CheckText(body); err != nil {
		return err
	}
	return decodeError(json.Unmarshal(body, dst), dst)
}

// decodeError turns a json.Unmarshal error into a 400 naming the property.
func decodeError(err error, dst any) error {
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "" && strings.HasPrefix(typeErr.Value, "number") && integerRange(typeErr.Type) != "":
		return apierr.Validation("The `%s` property must be a whole number %s; you sent %s.", typeErr.Field, integerRange(typeErr.Type), typeErr.Value)
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return PropertyTypeError(typeErr.Field, typeErr.Value)
	case errors.As(err, &typeErr):
		return DocumentTypeError(documentKind(dst), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return SyntaxError(fmt.Sprintf("%s at position %d", syntaxErr.Error(), syntaxErr.Offset))
	default:
		return apierr.Validation("The request body is not valid: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
}

// The errors below are the convention's messages for code that reads a
// body itself (with a streaming parser) instead of through Unmarshal.

// EmptyBody is the 400 for a required body that is empty.
func EmptyBody() error { return apierr.Validation("The request body is required but was empty.") }

// SyntaxError is the 400 for a body that is not JSON; detail says where.
func SyntaxError(detail string) error {
	return apierr.Validation("The request body is not valid JSON: %s.", strings.TrimSuffix(detail, "."))
}

// DocumentTypeError is the 400 for a body of the wrong kind: kind is what
// it must be ("object"), sent what it is ("array").
func DocumentTypeError(kind, sent string) error {
	return apierr.Validation("The request body must be a JSON %s, not %s.", kind, sent)
}

// PropertyTypeError is the 400 for a property of the wrong type; sent
// says what was sent ("string", "number 1.5").
func PropertyTypeError(property, sent string) error {
	return apierr.Validation("The `%s` property must be of another type; you sent %s.", property, sent)
}

// WholeNumberError is the 400 for a property that must be a 64-bit whole
// number and is not; sent is what was sent ("number 1.5").
func WholeNumberError(property, sent string) error {
	return apierr.Validation("The `%s` property must be a whole number %s; you sent %s.", property, integerRange(reflect.TypeFor[int64]()), sent)
}

// integerRange describes the values an integer type holds ("" for other
// types). Body properties stored in 32-bit columns are declared int32, so
// a number outside that range is refused here, naming the property.
func integerRange(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return ""
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits := t.Bits()
		return fmt.Sprintf("from %d to %d", int64(-1)<<(bits-1), int64(math.MaxInt64>>(64-bits)))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("from 0 to %d", uint64(math.MaxUint64>>(64-t.Bits())))
	}
	return ""
}

// ValidText reports whether s is text both databases store as sent: valid
// UTF-8 without NUL characters (PostgreSQL refuses both).
func ValidText(s string) bool {
	return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0
}

// TextError is the 400 for a value that is not ValidText; what names it,
// e.g. "The `name` property" or "The `query` query parameter".
func TextError(what string) error {
	return apierr.Validation("%s must be valid UTF-8 text without NUL characters.", what)
}

// nulEscape is how a NUL character appears inside a JSON string.
var nulEscape = []byte(`\u0000`)

// CheckText refuses a JSON document holding a NUL character (written
// \u0000) or invalid UTF-8 in any string, naming the property. Documents
// that are not valid JSON pass, for the decoder to report.
func CheckText(body []byte) error {
	if utf8.Valid(body) && !bytes.Contains(body, nulEscape) {
		return nil // the common case: one pass, no allocation
	}
	bad := len(body) // offset of the first invalid UTF-8 byte
	for i := 0; i < len(body); {
		r, n := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError && n <= 1 {
			bad = i
			break
		}
		i += n
	}
	if err := walkText(body, bad); err != nil {
		return err
	}
	if bad < len(body) && json.Valid(body) { // not expected: the walk finds it
		return TextError("The request body")
	}
	return nil
}

// jsonFrame is one open object or array while walking a document.
type jsonFrame struct {
	object  bool
	key     string // the current member's name (objects)
	index   int    // the next element's index (arrays)
	wantKey bool
}

// walkText finds the string holding a NUL character, or the byte at offset
// bad, and names its property.
func walkText(body []byte, bad int) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber() // numbers stay text: 1e400 is no error here
	var stack []jsonFrame
	for {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil // malformed or done: the decoder reports the rest
		}
		end := dec.InputOffset()
		isKey := len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].wantKey
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				stack = append(stack, jsonFrame{object: d == '{', wantKey: d == '{'})
			default:
				stack = stack[:len(stack)-1]
			}
			if d == '{' || d == '[' {
				continue
			}
			if len(stack) > 0 {
				advance(&stack[len(stack)-1])
			}
			continue
		}
		str, isString := tok.(string)
		hit := (start <= int64(bad) && int64(bad) < end) || (isString && strings.IndexByte(str, 0) >= 0)
		if hit {
			where := propertyPath(stack, !isKey)
			if isKey {
				if where == "" {
					return TextError("A property name")
				}
				return TextError("A property name in `" + where + "`")
			}
			if where == "" {
				return TextError("The request body")
			}
			return TextError("The `" + where + "` property")
		}
		if isKey {
			stack[len(stack)-1].key, stack[len(stack)-1].wantKey = str, false
			continue
		}
		if len(stack) > 0 {
			advance(&stack[len(stack)-1])
		}
	}
}

// advance moves a frame past one complete value.
func advance(f *jsonFrame) {
	if f.object {
		f.wantKey = true
	} else {
		f.index++
	}
}

// propertyPath names the position in stack as `a.b[2].c`; withLast
// includes the innermost member (false when naming a key).
func propertyPath(stack []jsonFrame, withLast bool) string {
	var b strings.Builder
	for i, f := range stack {
		if i == len(stack)-1 && !withLast {
			break
		}
		if f.object {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.key)
		} else {
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
	return b.String()
}

// documentKind names the JSON value dst expects: "array" for a slice,
// otherwise "object".
func documentKind(dst any) string {
	t := reflect.TypeOf(dst)
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		return "array"
	}
	return "object"
}

// Write sends v as JSON with a status.
func Write(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return apierr.Internal(err)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
	return nil
}

// WriteStatus sends a status with no body.
func WriteStatus(w http.ResponseWriter, status int) error {
	w.WriteHeader(status)
	return nil
}

// RequireJSON is the one content-type rule for request bodies: the
// Content-Type must be application/json or a +json type (parameters such
// as charset allowed); anything else, or none, is 415 naming what was sent.
func RequireJSON(r *http.Request) error {
	return CheckContentType(r, ContentRule{Suffix: true})
}

// SetLocation sets the Location header to format (a constant path) with
// each %s replaced by a value escaped as one path segment, so that a value
// from a request (a tag's text, a name) can neither break the header nor
// add a path level: SetLocation(w, "tags/%s/%s", type, value).
func SetLocation(w http.ResponseWriter, format string, values ...string) {
	args := make([]any, len(values))
	for i, v := range values {
		args[i] = url.PathEscape(v)
	}
	w.Header().Set("Location", fmt.Sprintf(format, args...))
}
