package stream

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/internal/httpgzip"
)

// ParseEventID reads a Last-Event-ID header or an If-None-Match ETag
// ("<eventId>", W/ allowed); anything else is no id.
func ParseEventID(v string) (int64, bool) {
	v = strings.TrimPrefix(strings.TrimSpace(v), "W/")
	v = strings.TrimSuffix(strings.TrimPrefix(v, `"`), `"`)
	id, err := strconv.ParseInt(v, 10, 64)
	return id, err == nil && id >= 0
}

// WriteDelta answers a delta poll with what Hub.Delta returned: the ETag
// "<rev>", 304 when nothing is newer, otherwise the body (gzipped for
// clients that accept it; no body for HEAD).
func WriteDelta(w http.ResponseWriter, r *http.Request, rev int64, body []byte, notModified bool) {
	h := w.Header()
	httpgzip.AddVary(h)
	h.Set("ETag", fmt.Sprintf(`"%d"`, rev))
	if notModified {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if httpgzip.Wants(r, len(body)) {
		body = httpgzip.NewCached(body).Gzipped()
		h["Content-Encoding"] = httpgzip.HeaderGzip
	}
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}
