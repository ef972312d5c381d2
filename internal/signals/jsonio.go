package signals

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// readBody reads the whole body, turning an oversized one into 413.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, limit))
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, apierr.TooLarge("request body is larger than the limit of %d bytes", mbe.Limit)
	}
	if err != nil {
		return nil, apierr.Validation("could not read the request body: %v", err)
	}
	return body, nil
}

// decodeBody decodes a required JSON object body into dst; malformed JSON
// or a mistyped property is a 400 naming the property.
func decodeBody(r *http.Request, dst any) error {
	body, err := readBody(r, 1<<20)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return apierr.Validation("The request body is required but was empty.")
	}
	err = json.Unmarshal(body, dst)
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return apierr.Validation("The `%s` property must be of another type; you sent %s.", typeErr.Field, typeErr.Value)
	case errors.As(err, &typeErr):
		return apierr.Validation("The request body must be a JSON object, not %s.", typeErr.Value)
	case errors.As(err, &syntaxErr):
		return apierr.Validation("The request body is not valid JSON: %s at position %d.", syntaxErr.Error(), syntaxErr.Offset)
	default:
		return apierr.Validation("The request body is not valid: %v", err)
	}
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

// pathID parses a numeric path value; anything else is a 404, as the
// resource cannot exist.
func pathID(r *http.Request, name string) (int64, error) {
	v := r.PathValue(name)
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, apierr.NotFound("Could not find %s %q", name, v)
	}
	return id, nil
}

// paging reads limit and offset query parameters with a default and a
// maximum limit; bad values are a 400 naming the parameter.
func paging(r *http.Request, defaultLimit, maxLimit int) (limit, offset int, err error) {
	limit, offset = defaultLimit, 0
	q := r.URL.Query()
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			return 0, 0, apierr.Validation("The `limit` query parameter must be a whole number from 1 to %d; you sent %q.", maxLimit, v)
		}
		limit = n
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, 0, apierr.Validation("The `offset` query parameter must be a whole number of 0 or more; you sent %q.", v)
		}
		offset = n
	}
	return limit, offset, nil
}

// exceedsLimit is the 400 the reference answers when a count limit is hit.
func exceedsLimit(resource string, limit int) error {
	return &apierr.Error{Kind: apierr.KindValidation, Name: "ExceedsLimitError",
		Message: "Failed to create " + resource + ". You can't create more than the established limit of " + strconv.Itoa(limit) + "."}
}
