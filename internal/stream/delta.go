package stream

import (
	"bufio"
	"fmt"
	"io"
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

// DeltaAnswer is Hub.Delta's answer to a delta poll.
type DeltaAnswer struct {
	// Rev is the revision the answer brings the client to.
	Rev int64
	// NotModified is set when the client has the latest revision.
	NotModified bool
	// events is the body of events since the client's revision; nil for
	// a hydration, which is written from the scope's state.
	events    []byte
	hydration *State
}

// Body is the answer's body ({"events":[…]}; nil when not modified).
func (a *DeltaAnswer) Body() []byte {
	if a.hydration != nil {
		return appendHydrationBody(nil, a.hydration, a.Rev)
	}
	return a.events
}

// Write sends the answer: the ETag "<rev>", 304 when nothing is newer,
// otherwise the body (gzipped for clients that accept it; no body for
// HEAD). A hydration, the scope's whole configuration, is written flag by
// flag through a small buffer rather than built whole for each poll.
func (a *DeltaAnswer) Write(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	httpgzip.AddVary(h)
	h.Set("ETag", fmt.Sprintf(`"%d"`, a.Rev))
	if a.NotModified {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json; charset=utf-8")
	if a.hydration == nil {
		body := a.events
		if httpgzip.Wants(r, len(body)) {
			body = httpgzip.NewCached(body).Gzipped()
			h["Content-Encoding"] = httpgzip.HeaderGzip
		}
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = w.Write(body)
		}
		return
	}
	ids := segmentOrder(a.hydration)
	size := hydrationSize(a.hydration, ids)
	write := func(w io.Writer) {
		_, _ = w.Write([]byte(`{"events":[`))
		writeHydration(w, a.hydration, a.Rev, ids)
		_, _ = w.Write([]byte("]}"))
	}
	if httpgzip.Wants(r, size) {
		h["Content-Encoding"] = httpgzip.HeaderGzip
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_ = httpgzip.Stream(w, write)
		}
		return
	}
	// The exact length, which the size bound leaves a few bytes above.
	var count counter
	write(&count)
	h.Set("Content-Length", strconv.Itoa(int(count)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		bw := bufio.NewWriterSize(w, 32<<10)
		write(bw)
		_ = bw.Flush()
	}
}

// counter is an io.Writer that counts the bytes written to it.
type counter int

func (c *counter) Write(p []byte) (int, error) {
	*c += counter(len(p))
	return len(p), nil
}
