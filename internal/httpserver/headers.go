package httpserver

import "net/http"

// Header values shared by every answer (never modified).
var (
	headerNoSniff        = []string{"nosniff"}
	headerFrameNone      = []string{"frame-ancestors 'none'"}
	headerDeny           = []string{"DENY"}
	headerReferrerPolicy = []string{"same-origin"}
)

// NoSniff sets X-Content-Type-Options: nosniff on every answer of next,
// before next writes anything, so browsers never guess a type other than
// the one sent (JSON or a static file read as script or HTML).
func NoSniff(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["X-Content-Type-Options"] = headerNoSniff
		next.ServeHTTP(w, r)
	})
}

// PageHeaders sets, before next writes anything, nosniff and the headers
// a page needs on every answer of next: no other site may frame it
// (Content-Security-Policy: frame-ancestors 'none', and X-Frame-Options:
// DENY for browsers without CSP) and links to other sites carry no
// referrer (Referrer-Policy: same-origin). They are set on every answer,
// JSON included, because whether an answer is HTML is decided later (an
// error page, a redirect's body). A handler whose pages need a stricter
// policy replaces the Content-Security-Policy; it must keep
// frame-ancestors 'none' in it.
func PageHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["X-Content-Type-Options"] = headerNoSniff
		h["Content-Security-Policy"] = headerFrameNone
		h["X-Frame-Options"] = headerDeny
		h["Referrer-Policy"] = headerReferrerPolicy
		next.ServeHTTP(w, r)
	})
}
