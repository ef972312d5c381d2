package stream

import (
	"net/http"
	"time"
)

// WriteTimeout bounds writing one message to a stream: a client that
// stops reading is cut off after it even when its queue has room.
const WriteTimeout = 30 * time.Second

// AliveEvery is how often Serve asks whether a stream may go on.
const AliveEvery = time.Second

// Serve writes sub to w as server-sent events until the client goes, the
// hub ends sub, or alive (asked before a write, at most every AliveEvery,
// so that a change fanned out to many streams does not run it for each;
// nil means always) returns false. It writes the headers itself and lifts the server's
// write timeout for the stream (each write gets WriteTimeout instead). The
// caller closes sub.
func Serve(w http.ResponseWriter, r *http.Request, sub *Sub, alive func() bool) {
	rc := http.NewResponseController(w)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // nginx: pass events on at once
	_ = rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
	w.WriteHeader(http.StatusOK)
	if rc.Flush() != nil {
		return
	}
	checked := time.Now()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-sub.Done:
			return // fell behind, or the server is stopping
		case msg := <-sub.C:
			if now := time.Now(); alive != nil && now.Sub(checked) >= AliveEvery {
				checked = now
				if !alive() {
					return
				}
			}
			_ = rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
			if _, err := w.Write(msg); err != nil {
				return
			}
			for more := true; more; { // write what else is queued, then flush once
				select {
				case msg := <-sub.C:
					if _, err := w.Write(msg); err != nil {
						return
					}
				default:
					more = false
				}
			}
			if rc.Flush() != nil {
				return
			}
		}
	}
}
