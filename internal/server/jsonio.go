package server

import (
	"net/http"

	"github.com/bunting-flags/bunting/internal/httpjson"
)

// decodeJSON reads a required JSON body into dst (the middleware caps its
// size); see httpjson for the errors.
func decodeJSON(r *http.Request, dst any) error { return httpjson.Decode(r, 0, dst) }

// unmarshalBody decodes a JSON document, naming the offending property in
// its error.
func unmarshalBody(body []byte, dst any) error { return httpjson.Unmarshal(body, dst) }

// writeJSON sends v with a status.
func writeJSON(w http.ResponseWriter, status int, v any) error { return httpjson.Write(w, status, v) }

// writeEmpty sends a status with no body.
func writeEmpty(w http.ResponseWriter, status int) error {
	w.WriteHeader(status)
	return nil
}
