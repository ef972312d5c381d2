// Package stream is the hub behind the client API's real-time protocols:
// the server-sent events of GET /api/client/streaming and the polled
// deltas of GET /api/client/delta (Unleash's delta format).
//
// The hub keeps the last few snapshots of the client data, each labelled
// with its revision (the highest event id it contains). A scope (one
// token's environment and projects, a name prefix, tags) is turned into a
// State by a function the caller gives; the events between two revisions of
// a scope are the difference of its two States: a flag that appeared or
// changed is a feature-updated carrying the whole flag, a flag that left the
// scope (archived, moved out of the prefix or project) is a feature-removed,
// and the same for segments. Diffing whole scopes, rather than replaying
// the event log, makes every kind of change (and every scope rule) come out
// right by construction, and makes resuming from any revision still in the
// history exact.
//
// Connections are grouped by scope: on each new snapshot the hub computes
// one message per group and queues it for each of its connections without
// waiting. A connection whose queue is full has fallen too far behind: the
// hub closes it, and the client re-hydrates when it reconnects.
package stream

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Flag is one flag of a scope: its name, its project and its JSON,
// exactly as the client API serves it.
type Flag struct {
	Name    string
	Project string
	JSON    []byte
}

// State is the content of one scope at one revision: its flags sorted by
// name (a slice, not a map: a scope of a large configuration is held for
// each snapshot in the history, and is written and compared in name order
// anyway) and the segments they use by id.
type State struct {
	Flags    []Flag
	Segments map[int][]byte
}

// sortFlags puts st's flags in name order, which a StateFunc that walks
// its configuration in that order already gave.
func sortFlags(st *State) {
	byName := func(a, b Flag) int { return strings.Compare(a.Name, b.Name) }
	if !slices.IsSortedFunc(st.Flags, byName) {
		slices.SortFunc(st.Flags, byName)
	}
}

// Scope identifies what one client may see; equal keys see equal States.
type Scope interface {
	Key() string
}

// StateFunc computes a scope's State in a snapshot given to Publish.
// Snapshots are compared by identity: pass pointers.
type StateFunc func(snapshot any, scope Scope) *State

// Config bounds the hub.
type Config struct {
	// MaxConnections is how many streams may be open at once; more are
	// refused with ErrTooManyConnections (0: every one).
	MaxConnections int
	// Queue is how many messages may wait for one connection; a connection
	// that falls further behind is closed.
	Queue int
	// History is how many snapshots are kept to resume from.
	History int
	// Keepalive is how often an idle stream gets a comment line.
	Keepalive time.Duration
}

// ErrTooManyConnections is returned by Subscribe when MaxConnections
// streams are open.
var ErrTooManyConnections = errors.New("stream: too many streaming connections")

// ErrNoSnapshot is returned when nothing was published yet.
var ErrNoSnapshot = errors.New("stream: no snapshot published yet")

// Hub fans changes out to the open streams.
type Hub struct {
	cfg   Config
	state StateFunc

	mu      sync.Mutex
	history []*entry // oldest first
	groups  map[string]*group
	conns   int
}

type entry struct {
	rev    int64
	snap   any
	states map[string]*State
	// connected caches the unleash-connected message of each scope, which
	// every new stream of that scope shares.
	connected map[string][]byte
}

type group struct {
	scope Scope
	subs  map[*Sub]struct{}
}

// New returns a hub; state computes the States of the snapshots published.
func New(cfg Config, state StateFunc) *Hub {
	if cfg.Queue <= 0 {
		cfg.Queue = 64
	}
	if cfg.History <= 0 {
		cfg.History = 64
	}
	return &Hub{cfg: cfg, state: state, groups: map[string]*group{}}
}

// Config returns the hub's configuration.
func (h *Hub) Config() Config { return h.cfg }

func (h *Hub) stateOf(e *entry, sc Scope) *State {
	key := sc.Key()
	if st, ok := e.states[key]; ok {
		return st
	}
	st := h.state(e.snap, sc)
	sortFlags(st)
	if len(e.states) > 1000 {
		clear(e.states)
	}
	e.states[key] = st
	return st
}

func (h *Hub) find(rev int64) *entry {
	for i := len(h.history) - 1; i >= 0; i-- {
		if h.history[i].rev == rev {
			return h.history[i]
		}
	}
	return nil
}

// Publish records a snapshot at revision rev and sends every open stream
// the events that changed its scope. A snapshot older than the latest is
// ignored; one at the same revision replaces it. It is idempotent.
func (h *Hub) Publish(rev int64, snap any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var prev *entry
	if n := len(h.history); n > 0 {
		prev = h.history[n-1]
		if rev < prev.rev || snap == prev.snap {
			return
		}
	}
	e := &entry{rev: rev, snap: snap, states: map[string]*State{}, connected: map[string][]byte{}}
	if prev != nil && prev.rev == rev {
		h.history[len(h.history)-1] = e
	} else {
		h.history = append(h.history, e)
		if len(h.history) > h.cfg.History {
			h.history = slices.Delete(h.history, 0, len(h.history)-h.cfg.History)
		}
	}
	if prev == nil {
		return
	}
	// New streams hydrate from the newest snapshot only, and diffs from
	// older ones are rare (a resume): what was cached for the older
	// snapshots is computed again when asked for, not kept.
	for _, old := range h.history[:len(h.history)-1] {
		old.connected = map[string][]byte{}
		if old != prev {
			old.states = map[string]*State{}
		}
	}
	for _, g := range h.groups {
		events := Diff(h.stateOf(prev, g.scope), h.stateOf(e, g.scope), rev)
		if len(events) == 0 {
			continue
		}
		msg := Message("unleash-updated", rev, Body(events))
		for sub := range g.subs {
			h.sendLocked(sub, msg)
		}
	}
}

// Forget drops every snapshot but the newest: a stream or delta poll
// that resumes from an older revision then gets a hydration. A host calls
// it when the newest snapshot shares nothing with those before it, which
// would otherwise each hold a whole configuration.
func (h *Hub) Forget() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if n := len(h.history); n > 1 {
		h.history = slices.Delete(h.history, 0, n-1)
	}
}

// Latest returns the newest revision published (0 and false before any).
func (h *Hub) Latest() (int64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.history) == 0 {
		return 0, false
	}
	return h.history[len(h.history)-1].rev, true
}

// Sub is one open stream.
type Sub struct {
	// C delivers the encoded server-sent events to write, in order.
	C <-chan []byte
	c chan []byte
	// Done is closed when the hub ends the stream (it fell behind, or the
	// hub was asked to close it).
	Done <-chan struct{}
	done chan struct{}
	g    *group
	hub  *Hub
}

// Subscribe opens a stream of scope. With since (the client's
// Last-Event-ID) at a revision still in the history, the first message
// holds only the events since then (none when nothing changed); otherwise
// it is an unleash-connected hydration. It fails with
// ErrTooManyConnections at the limit.
func (h *Hub) Subscribe(sc Scope, since int64, hasSince bool) (*Sub, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.history) == 0 {
		return nil, ErrNoSnapshot
	}
	if h.conns >= h.cfg.MaxConnections {
		return nil, ErrTooManyConnections
	}
	cur := h.history[len(h.history)-1]
	c := make(chan []byte, h.cfg.Queue)
	if old := h.resumable(since, hasSince); old != nil {
		if events := Diff(h.stateOf(old, sc), h.stateOf(cur, sc), cur.rev); len(events) > 0 {
			c <- Message("unleash-updated", cur.rev, Body(events))
		}
	} else {
		c <- h.connectedMessage(cur, sc)
	}
	key := sc.Key()
	g := h.groups[key]
	if g == nil {
		g = &group{scope: sc, subs: map[*Sub]struct{}{}}
		h.groups[key] = g
	}
	done := make(chan struct{})
	sub := &Sub{C: c, c: c, Done: done, done: done, g: g, hub: h}
	g.subs[sub] = struct{}{}
	h.conns++
	return sub, nil
}

func (h *Hub) connectedMessage(e *entry, sc Scope) []byte {
	key := sc.Key()
	if msg, ok := e.connected[key]; ok {
		return msg
	}
	msg := hydrationMessage(h.stateOf(e, sc), e.rev)
	if len(e.connected) > 1000 {
		clear(e.connected)
	}
	e.connected[key] = msg
	return msg
}

func (h *Hub) resumable(since int64, hasSince bool) *entry {
	if !hasSince {
		return nil
	}
	return h.find(since)
}

// Delta answers a delta poll of scope from revision since: not modified
// when since is the latest revision, the events since then when since is
// still in the history (possibly none), a hydration otherwise.
func (h *Hub) Delta(sc Scope, since int64, hasSince bool) (*DeltaAnswer, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.history) == 0 {
		return nil, ErrNoSnapshot
	}
	cur := h.history[len(h.history)-1]
	if hasSince && since == cur.rev {
		return &DeltaAnswer{Rev: cur.rev, NotModified: true}, nil
	}
	if old := h.resumable(since, hasSince); old != nil {
		events := Diff(h.stateOf(old, sc), h.stateOf(cur, sc), cur.rev)
		if events == nil {
			events = []json.RawMessage{}
		}
		return &DeltaAnswer{Rev: cur.rev, events: Body(events)}, nil
	}
	return &DeltaAnswer{Rev: cur.rev, hydration: h.stateOf(cur, sc)}, nil
}

// Connections returns how many streams are open.
func (h *Hub) Connections() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conns
}

// KeepaliveMessage is the comment line sent to idle streams.
var KeepaliveMessage = []byte(": keep-alive\n\n")

// Keepalive queues a keep-alive comment for every open stream.
func (h *Hub) Keepalive() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, g := range h.groups {
		for sub := range g.subs {
			h.sendLocked(sub, KeepaliveMessage)
		}
	}
}

// Run sends keep-alives every Config.Keepalive until stop is closed.
func (h *Hub) Run(stop <-chan struct{}) {
	if h.cfg.Keepalive <= 0 {
		return
	}
	t := time.NewTicker(h.cfg.Keepalive)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			h.Keepalive()
		}
	}
}

// sendLocked queues msg for sub without waiting; a full queue ends sub.
func (h *Hub) sendLocked(sub *Sub, msg []byte) {
	select {
	case sub.c <- msg:
	default:
		h.closeLocked(sub)
	}
}

// Close ends the stream and frees its place.
func (s *Sub) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.closeLocked(s)
}

func (h *Hub) closeLocked(sub *Sub) {
	if _, ok := sub.g.subs[sub]; !ok {
		return
	}
	delete(sub.g.subs, sub)
	if len(sub.g.subs) == 0 {
		delete(h.groups, sub.g.scope.Key())
	}
	h.conns--
	close(sub.done)
}

// CloseAll ends every open stream (on shutdown, so that clients reconnect
// elsewhere).
func (h *Hub) CloseAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, g := range h.groups {
		for sub := range g.subs {
			h.closeLocked(sub)
		}
	}
}

// Message encodes one server-sent event.
func Message(event string, id int64, data []byte) []byte {
	b := make([]byte, 0, len(data)+64)
	b = append(append(b, "event: "...), event...)
	b = strconv.AppendInt(append(b, "\nid: "...), id, 10)
	b = append(append(b, "\ndata: "...), data...) // compact JSON: one line
	return append(b, "\n\n"...)
}

// The events, flags and segments handed to the hub are compact JSON from
// encoding/json (HTML-escaped), so the bodies below are put together
// around them as they are, which is what encoding/json would write.

// Body encodes {"events":[…]}.
func Body(events []json.RawMessage) []byte {
	n := 12
	for _, e := range events {
		n += len(e) + 1
	}
	return append(appendJoined(append(make([]byte, 0, n), `{"events":[`...), events), "]}"...)
}

// appendJoined appends the items separated by commas.
func appendJoined[T ~[]byte](b []byte, items []T) []byte {
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	return b
}

// Hydration encodes the hydration event of st: its flags in their (name)
// order, every segment sorted by id.
func Hydration(st *State, rev int64) json.RawMessage {
	return appendHydration(nil, st, rev, 0)
}

// appendHydrationBody appends {"events":[<hydration>]}, growing b once.
func appendHydrationBody(b []byte, st *State, rev int64) []byte {
	b = append(b, `{"events":[`...)
	return append(appendHydration(b, st, rev, 2), "]}"...)
}

// hydrationMessage is the unleash-connected event of st, built in one
// buffer (a hydration is the whole configuration).
func hydrationMessage(st *State, rev int64) []byte {
	b := append(make([]byte, 0, 64), "event: unleash-connected\nid: "...)
	b = append(strconv.AppendInt(b, rev, 10), "\ndata: "...)
	return append(appendHydrationBody(b, st, rev), "\n\n"...)
}

// appendHydration appends the hydration event of st, growing b once to
// hold it and extra bytes more.
func appendHydration(b []byte, st *State, rev int64, extra int) []byte {
	ids := segmentOrder(st)
	sink := appender(slices.Grow(b, hydrationSize(st, ids)+extra))
	writeHydration(&sink, st, rev, ids)
	return sink
}

// segmentOrder is the order of a hydration's segments: by id.
func segmentOrder(st *State) []int {
	return slices.Sorted(maps.Keys(st.Segments))
}

// hydrationSize bounds the length of st's hydration event from above by
// a few bytes (the event id's digits).
func hydrationSize(st *State, ids []int) int {
	n := 80
	for _, f := range st.Flags {
		n += len(f.JSON) + 1
	}
	for _, id := range ids {
		n += len(st.Segments[id]) + 1
	}
	return n
}

// writeHydration writes st's hydration event, segments in the order
// given, to w (which buffers: one write a flag).
func writeHydration(w io.Writer, st *State, rev int64, ids []int) {
	var num [24]byte
	_, _ = w.Write([]byte(`{"type":"hydration","eventId":`))
	_, _ = w.Write(strconv.AppendInt(num[:0], rev, 10))
	_, _ = w.Write([]byte(`,"features":[`))
	for i, f := range st.Flags {
		if i > 0 {
			_, _ = w.Write(comma)
		}
		_, _ = w.Write(f.JSON)
	}
	_, _ = w.Write([]byte(`],"segments":[`))
	for i, id := range ids {
		if i > 0 {
			_, _ = w.Write(comma)
		}
		_, _ = w.Write(st.Segments[id])
	}
	_, _ = w.Write([]byte("]}"))
}

var comma = []byte{','}

// appender is an io.Writer that appends to itself.
type appender []byte

func (a *appender) Write(p []byte) (int, error) {
	*a = append(*a, p...)
	return len(p), nil
}

// Diff returns the events that turn old into cur, all with eventId rev:
// segments updated first (so that updated flags find them), then flags
// updated, flags removed, and segments removed last. Nil when nothing
// changed.
func Diff(old, cur *State, rev int64) []json.RawMessage {
	var out []json.RawMessage
	for _, id := range slices.Sorted(maps.Keys(cur.Segments)) {
		if prev, ok := old.Segments[id]; !ok || !bytes.Equal(prev, cur.Segments[id]) {
			out = append(out, event(struct {
				Type    string          `json:"type"`
				EventID int64           `json:"eventId"`
				Segment json.RawMessage `json:"segment"`
			}{"segment-updated", rev, cur.Segments[id]}))
		}
	}
	// Both flag lists are in name order: one merge finds the flags added
	// or changed, and those removed.
	updated := func(f Flag) {
		out = append(out, event(struct {
			Type    string          `json:"type"`
			EventID int64           `json:"eventId"`
			Feature json.RawMessage `json:"feature"`
		}{"feature-updated", rev, f.JSON}))
	}
	var removed []Flag
	for i, j := 0, 0; i < len(old.Flags) || j < len(cur.Flags); {
		switch c := mergeOrder(old.Flags, cur.Flags, i, j); {
		case c < 0:
			removed = append(removed, old.Flags[i])
			i++
		case c > 0:
			updated(cur.Flags[j])
			j++
		default:
			if !bytes.Equal(old.Flags[i].JSON, cur.Flags[j].JSON) {
				updated(cur.Flags[j])
			}
			i, j = i+1, j+1
		}
	}
	for _, f := range removed {
		out = append(out, event(struct {
			Type        string `json:"type"`
			EventID     int64  `json:"eventId"`
			FeatureName string `json:"featureName"`
			Project     string `json:"project"`
		}{"feature-removed", rev, f.Name, f.Project}))
	}
	for _, id := range slices.Sorted(maps.Keys(old.Segments)) {
		if _, ok := cur.Segments[id]; !ok {
			out = append(out, event(struct {
				Type      string `json:"type"`
				EventID   int64  `json:"eventId"`
				SegmentID int    `json:"segmentId"`
			}{"segment-removed", rev, id}))
		}
	}
	return out
}

// mergeOrder compares a[i] and b[j] by name, a list that is done sorting
// after the other.
func mergeOrder(a, b []Flag, i, j int) int {
	switch {
	case i == len(a):
		return 1
	case j == len(b):
		return -1
	}
	return strings.Compare(a[i].Name, b[j].Name)
}

func event(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
