package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/redact"
)

// StreamState is the flag configuration rebuilt from upstream's delta
// events (GET client/streaming): flags by name and segments by id, and the
// id of the last event applied, to resume from.
type StreamState struct {
	features map[string]json.RawMessage
	segments map[int64]json.RawMessage
	// LastID is the SSE id of the last batch applied ("" before any).
	LastID string
}

type deltaEvent struct {
	Type        string            `json:"type"`
	Features    []json.RawMessage `json:"features"`
	Segments    []json.RawMessage `json:"segments"`
	Feature     json.RawMessage   `json:"feature"`
	FeatureName string            `json:"featureName"`
	Segment     json.RawMessage   `json:"segment"`
	SegmentID   int64             `json:"segmentId"`
}

// Apply applies one batch, {"events":[…]}: a hydration replaces
// everything, the other events change one flag or segment. Unknown event
// types are an error (the caller re-hydrates).
func (s *StreamState) Apply(data []byte) error {
	var batch struct {
		Events []deltaEvent `json:"events"`
	}
	if err := json.Unmarshal(data, &batch); err != nil {
		return fmt.Errorf("stream event is not a delta: %w", err)
	}
	for _, ev := range batch.Events {
		switch ev.Type {
		case "hydration":
			s.features, s.segments = map[string]json.RawMessage{}, map[int64]json.RawMessage{}
			for _, f := range ev.Features {
				if err := s.putFeature(f); err != nil {
					return err
				}
			}
			for _, sg := range ev.Segments {
				if err := s.putSegment(sg); err != nil {
					return err
				}
			}
		case "feature-updated":
			if err := s.putFeature(ev.Feature); err != nil {
				return err
			}
		case "feature-removed":
			delete(s.features, ev.FeatureName)
		case "segment-updated":
			if err := s.putSegment(ev.Segment); err != nil {
				return err
			}
		case "segment-removed":
			delete(s.segments, ev.SegmentID)
		default:
			return fmt.Errorf("unknown stream event type %q", ev.Type)
		}
	}
	return nil
}

func (s *StreamState) putFeature(raw json.RawMessage) error {
	var f struct{ Name string }
	if err := json.Unmarshal(raw, &f); err != nil || f.Name == "" {
		return fmt.Errorf("stream event with an unreadable flag")
	}
	if s.features == nil {
		return fmt.Errorf("stream event before the hydration")
	}
	s.features[f.Name] = raw
	return nil
}

func (s *StreamState) putSegment(raw json.RawMessage) error {
	var sg struct {
		ID *int64 `json:"id"`
	}
	if err := json.Unmarshal(raw, &sg); err != nil || sg.ID == nil {
		return fmt.Errorf("stream event with an unreadable segment")
	}
	if s.segments == nil {
		return fmt.Errorf("stream event before the hydration")
	}
	s.segments[*sg.ID] = raw
	return nil
}

// Payload renders the state as a client features document (flags sorted by
// name, segments by id), as GET client/features would serve it.
func (s *StreamState) Payload() []byte {
	var b bytes.Buffer
	b.WriteString(`{"version":2,"features":[`)
	for i, name := range slices.Sorted(maps.Keys(s.features)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(s.features[name])
	}
	b.WriteString(`],"segments":[`)
	for i, id := range slices.Sorted(maps.Keys(s.segments)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(s.segments[id])
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// Follow opens upstream's stream (resuming from st.LastID) and applies
// each batch to st, calling changed after each one, until the stream ends
// or ctx does. connected reports whether upstream accepted the stream (a
// 200): an upstream that does not stream answers 404. A stream silent for
// longer than idle (keep-alives included) is taken as dead.
func (c *Client) Follow(ctx context.Context, st *StreamState, idle time.Duration, changed func()) (connected bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	u := c.cfg.BaseURL + "client/streaming"
	if q := encodeOrdered(c.cfg); q != "" {
		u += "?" + q
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return false, err
	}
	c.setHeaders(req.Header, c.cfg.Interval)
	req.Header.Set("Accept", "text/event-stream")
	if st.LastID != "" {
		req.Header.Set("Last-Event-ID", st.LastID)
	}
	hc := *c.http
	hc.Timeout = 0 // the stream stays open; the idle watchdog bounds it
	watchdog := time.AfterFunc(idle, cancel)
	defer watchdog.Stop()
	resp, err := hc.Do(req)
	if err != nil {
		return false, redactURLError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return false, &StatusError{URL: redact.URL(u), Status: resp.StatusCode}
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		return false, fmt.Errorf("%s: answered %q, not an event stream", redact.URL(u), ct)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), maxPayload)
	var name, id string
	var data []byte
	for sc.Scan() {
		watchdog.Reset(idle)
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if (name == "unleash-connected" || name == "unleash-updated") && data != nil {
				if err := st.Apply(data); err != nil {
					st.LastID = "" // re-hydrate on the next connection
					return true, err
				}
				st.LastID = id
				changed()
			}
			name, data = "", nil
		case line[0] == ':':
		case bytes.HasPrefix(line, []byte("event:")):
			name = strings.TrimSpace(string(line[6:]))
		case bytes.HasPrefix(line, []byte("id:")):
			id = strings.TrimSpace(string(line[3:]))
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimPrefix(line[5:], []byte(" "))...)
		}
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		return true, fmt.Errorf("reading the stream of %s: %w", redact.URL(u), err)
	}
	return true, fmt.Errorf("%s ended the stream", redact.URL(u))
}
