package httpjson

import (
	"mime"
	"net/http"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// ContentRule says which declared content types a route takes as JSON.
// Every rule answers a refused type with the same 415 message.
type ContentRule struct {
	// Optional takes a request without a Content-Type, or without a body,
	// as JSON (the proxy does, as the reference's proxy does).
	Optional bool
	// Suffix also accepts structured-syntax types such as
	// application/merge-patch+json.
	Suffix bool
}

// CheckContentType refuses, with 415, a body not declared as JSON under
// rule. application/json, with or without parameters, is always accepted.
func CheckContentType(r *http.Request, rule ContentRule) error {
	ct := r.Header.Get("Content-Type")
	if rule.Optional && (ct == "" || (r.ContentLength == 0 && len(r.TransferEncoding) == 0)) {
		return nil
	}
	if ct == "" {
		return apierr.UnsupportedMediaType("We do not accept the content-type you provided (you didn't provide one). Use application/json.")
	}
	// The usual spellings are recognised without parsing (and allocating).
	if strings.HasPrefix(ct, "application/json") && (len(ct) == 16 || ct[16] == ';' || ct[16] == ' ') {
		return nil
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil && (mt == "application/json" || (rule.Suffix && strings.HasSuffix(mt, "+json") && len(mt) > 5)) {
		return nil
	}
	return apierr.UnsupportedMediaType("We do not accept the content-type you provided (%s). Use application/json.", ct)
}

// MethodNotAllowed is the one 405 answer: it sets Allow (a list such as
// "GET, HEAD") and returns the error for the caller to write.
func MethodNotAllowed(w http.ResponseWriter, r *http.Request, allow string) error {
	w.Header().Set("Allow", allow)
	return &apierr.Error{Kind: apierr.KindMethodNotAllowed, Message: "Cannot " + r.Method + " " + r.URL.Path}
}

// headerText is the Content-Type of WriteOK (shared, never modified).
var headerText = []string{"text/plain; charset=utf-8"}

// WriteOK is the one plain "OK" answer (200, text/plain) of the routes
// that acknowledge without a body of their own (metrics, registration).
func WriteOK(w http.ResponseWriter) error {
	w.Header()["Content-Type"] = headerText
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte("OK"))
	return nil
}
