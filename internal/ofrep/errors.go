package ofrep

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// OFREP error codes (OpenFeature's).
const (
	CodeParseError   = "PARSE_ERROR"
	CodeInvalidCtx   = "INVALID_CONTEXT"
	CodeFlagNotFound = "FLAG_NOT_FOUND"
	CodeGeneral      = "GENERAL"
)

// Error is a request error in OFREP's shape: an HTTP status and the body
// {key?, errorCode, errorDetails}.
type Error struct {
	Status  int
	Code    string
	Details string
	// Key names the flag of a single-flag request.
	Key string
}

func (e *Error) Error() string { return e.Code + ": " + e.Details }

func errorf(status int, code, format string, args ...any) *Error {
	return &Error{Status: status, Code: code, Details: fmt.Sprintf(format, args...)}
}

// errorBody is the JSON of an Error.
type errorBody struct {
	Key     string `json:"key,omitempty"`
	Code    string `json:"errorCode"`
	Details string `json:"errorDetails,omitempty"`
}

// write sends e.
func (e *Error) write(w http.ResponseWriter) {
	body, _ := json.Marshal(errorBody{Key: e.Key, Code: e.Code, Details: e.Details})
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(e.Status)
	_, _ = w.Write(body)
}
