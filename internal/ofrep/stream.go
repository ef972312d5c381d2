package ofrep

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bunting-flags/bunting/internal/wire"
)

// Change notification, OFREP's server-sent events extension (ADR 0008):
// a bulk answer advertises {"type":"sse","endpoint":{"requestUri":…}},
// and the stream sends {"type":"refetchEvaluation"} whenever the
// configuration the caller's scope sees changes. A browser's EventSource
// cannot send headers, so the URL carries a credential: the scope, the
// configuration version it was issued at and an expiry, signed with
// HMAC-SHA256 — never the caller's key. It is checked when the stream is
// opened; an open stream lives on.

// signer signs and checks event-stream credentials.
type signer struct{ key []byte }

func newSigner(key []byte) *signer {
	if len(key) == 0 {
		key = make([]byte, 32)
		_, _ = rand.Read(key)
	}
	return &signer{key: key}
}

// credential is what an event-stream URL carries.
type credential struct {
	expires int64 // Unix seconds
	version uint64
	scope   string
}

func (s *signer) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write(payload)
	return m.Sum(nil)[:18]
}

// sign encodes c as payload.signature, both base64url.
func (s *signer) sign(c credential) string {
	payload := strconv.FormatInt(c.expires, 10) + "." + strconv.FormatUint(c.version, 16) + "." + c.scope
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(s.mac([]byte(payload)))
}

// verify decodes a credential and checks its signature and expiry.
func (s *signer) verify(token string, now time.Time) (credential, bool) {
	p, sig, ok := strings.Cut(token, ".")
	if !ok {
		return credential{}, false
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p)
	mac, err2 := enc.DecodeString(sig)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(payload)) {
		return credential{}, false
	}
	parts := strings.SplitN(string(payload), ".", 3)
	if len(parts) != 3 {
		return credential{}, false
	}
	expires, err1 := strconv.ParseInt(parts[0], 10, 64)
	version, err2 := strconv.ParseUint(parts[1], 16, 64)
	if err1 != nil || err2 != nil || now.Unix() >= expires {
		return credential{}, false
	}
	return credential{expires: expires, version: version, scope: parts[2]}, true
}

// streamTail is the `,"eventStreams":[…]` part of a bulk answer, the same
// for every answer of one scope, configuration and credential period.
type streamTail struct {
	scope  string
	period int64
	tail   []byte
}

// streamTail renders the eventStreams entry for a scope, reusing the last
// one while the credential period and the configuration stay.
func (h *Handler) streamTail(e *encoding, scope string) []byte {
	ttl := int64(h.opts.StreamTTL / time.Second)
	if ttl < 1 {
		ttl = 1
	}
	period := h.opts.Now().Unix() / ttl
	if st := e.stream.Load(); st != nil && st.period == period && st.scope == scope {
		return st.tail
	}
	token := h.signer.sign(credential{expires: (period + 2) * ttl, version: e.version, scope: scope})
	uri := h.opts.BasePath + "/v1/events?c=" + token
	tail := append([]byte(`,"eventStreams":[{"type":"sse","endpoint":{"requestUri":`), wire.JSONString(uri)...)
	tail = append(tail, `},"inactivityDelaySec":120}]`...)
	e.stream.Store(&streamTail{scope: scope, period: period, tail: tail})
	return tail
}

// eventIDs numbers the events this process sends.
var eventIDs atomic.Uint64

// heartbeat is how often an idle stream sends a comment, so that proxies
// and load balancers keep it open.
const heartbeat = 25 * time.Second

// serveEvents serves GET /v1/events?c=…: a text/event-stream that sends
// refetchEvaluation whenever the scope's configuration version differs
// from the one last announced (at first: the one the credential was
// issued at, so a change between the bulk answer and the connection is
// not missed).
func (h *Handler) serveEvents(w http.ResponseWriter, r *http.Request) {
	c, ok := h.signer.verify(r.URL.Query().Get("c"), h.opts.Now())
	if !ok {
		errorf(http.StatusUnauthorized, CodeGeneral, "the event-stream credential is missing, invalid or expired: fetch /v1/evaluate/flags again for a new one").write(w)
		return
	}
	if h.opts.Changes == nil {
		errorf(http.StatusNotFound, CodeGeneral, "this server has no event stream").write(w)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	_, _ = w.Write([]byte("retry: 1000\n: connected\n\n"))
	_ = rc.Flush()
	announced := c.version
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for h.streamRound(w, rc, r, c.scope, &announced, tick.C) {
	}
}

// streamRound announces the scope's configuration if it is not the one
// last announced, then waits for a change, a heartbeat or the end of the
// request; false means the stream is over.
func (h *Handler) streamRound(w http.ResponseWriter, rc *http.ResponseController, r *http.Request, scope string, announced *uint64, beat <-chan time.Time) bool {
	// Subscribe before looking, so that a change in between closes the
	// channel and is seen on the next round.
	ctx, stop := context.WithCancel(r.Context())
	defer stop()
	changed := h.opts.Changes(ctx, scope)
	if snap, err := h.opts.Snapshot(r, scope); err == nil {
		if v := h.Version(snap); v != *announced {
			*announced = v
			msg := "id: " + strconv.FormatUint(eventIDs.Add(1), 10) + "\nevent: message\ndata: {\"type\":\"refetchEvaluation\",\"etag\":\"" +
				strconv.FormatUint(v, 16) + "\",\"lastModified\":" + strconv.FormatInt(h.opts.Now().Unix(), 10) + "}\n\n"
			if _, err := w.Write([]byte(msg)); err != nil || rc.Flush() != nil {
				return false
			}
		}
	}
	select {
	case <-r.Context().Done():
		return false
	case <-changed:
		return true
	case <-beat:
		_, err := w.Write([]byte(": ping\n\n"))
		return err == nil && rc.Flush() == nil
	}
}

// Broadcaster tells every waiting stream that the configuration changed;
// hosts whose configuration changes in one place (the proxy, after each
// new snapshot) call Notify. It is safe for concurrent use.
type Broadcaster struct {
	ch atomic.Pointer[chan struct{}]
}

// NewBroadcaster returns a Broadcaster.
func NewBroadcaster() *Broadcaster {
	b := &Broadcaster{}
	ch := make(chan struct{})
	b.ch.Store(&ch)
	return b
}

// Notify wakes every stream waiting on Wait.
func (b *Broadcaster) Notify() {
	next := make(chan struct{})
	old := b.ch.Swap(&next)
	close(*old)
}

// Wait returns a channel closed at the next Notify.
func (b *Broadcaster) Wait() <-chan struct{} { return *b.ch.Load() }
