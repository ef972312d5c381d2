package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// decodeJSON reads the body into dst. Malformed JSON, a wrong type for a
// property or an empty body become 400 ValidationError naming the property;
// a body over the limit becomes 413.
func decodeJSON(r *http.Request, dst any) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return apierr.TooLarge("request body is larger than the limit of %d bytes", mbe.Limit)
		}
		return apierr.Validation("could not read the request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return apierr.Validation("The request body is required but was empty.")
	}
	return unmarshalBody(body, dst)
}

// unmarshalBody decodes a JSON document and names the offending property
// in its error.
func unmarshalBody(body []byte, dst any) error {
	err := json.Unmarshal(body, dst)
	if err == nil {
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			return apierr.Validation("The request body must be a JSON %s, not %s.", describeType(dst), typeErr.Value)
		}
		return apierr.Validation("The `%s` property must be of another type; you sent %s.", field, typeErr.Value)
	case errors.As(err, &syntaxErr):
		return apierr.Validation("The request body is not valid JSON: %s at position %d.", syntaxErr.Error(), syntaxErr.Offset)
	default:
		return apierr.Validation("The request body is not valid: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
}

func describeType(v any) string {
	switch fmt.Sprintf("%T", v) {
	case "*[]server.strategyOrder", "*[]engine.Variant":
		return "array"
	}
	return "object"
}

// writeJSON sends v with a status.
func writeJSON(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return apierr.Internal(err)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b)
	return nil
}

// writeEmpty sends a status with no body.
func writeEmpty(w http.ResponseWriter, status int) error {
	w.WriteHeader(status)
	return nil
}
