// Package httpjson reads and writes the JSON bodies of Bunting's HTTP APIs.
// Every way a body can be wrong — too large, empty, malformed, a property of
// the wrong type — becomes a typed apierr error (413 or 400 naming the
// property), so handlers never answer 500 for bad input.
package httpjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strings"

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
	if len(bytes.TrimSpace(body)) == 0 {
		return apierr.Validation("The request body is required but was empty.")
	}
	return Unmarshal(body, dst)
}

// Unmarshal decodes a JSON document into dst; its error names the
// offending property.
func Unmarshal(body []byte, dst any) error {
	err := json.Unmarshal(body, dst)
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return apierr.Validation("The `%s` property must be of another type; you sent %s.", typeErr.Field, typeErr.Value)
	case errors.As(err, &typeErr):
		return apierr.Validation("The request body must be a JSON %s, not %s.", documentKind(dst), typeErr.Value)
	case errors.As(err, &syntaxErr):
		return apierr.Validation("The request body is not valid JSON: %s at position %d.", syntaxErr.Error(), syntaxErr.Offset)
	default:
		return apierr.Validation("The request body is not valid: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
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
