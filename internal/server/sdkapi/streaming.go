// The client API's real-time protocols: GET /api/client/streaming
// (server-sent events) and GET /api/client/delta (polled deltas), in
// Unleash's delta format, served from the hub of internal/stream.

package sdkapi

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/bunting-flags/bunting/internal/clientconfig"
	"github.com/bunting-flags/bunting/internal/config"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/server/route"
	"github.com/bunting-flags/bunting/internal/stream"
)

// StreamingConfig bounds GET /api/client/streaming.
type StreamingConfig struct {
	// Keepalive is how often an idle stream gets a comment line, so that
	// proxies and load balancers do not cut it (STREAMING_KEEPALIVE).
	Keepalive time.Duration
	// MaxConnections is how many streams one instance keeps open at once;
	// more are answered 429, which SDKs take as "poll instead"
	// (STREAMING_MAX_CONNECTIONS).
	MaxConnections int
}

// streamHistory is how many snapshots of the client data the server keeps
// to resume streams and delta polls from without a new hydration.
const streamHistory = 32

// streamQueue is how many messages may wait for one stream; a stream that
// falls further behind is closed and re-hydrates when it reconnects.
const streamQueue = 64

// Options are the streaming options, bound to c.
func (c *StreamingConfig) Options() []config.Option {
	return []config.Option{
		{Name: "streaming-keepalive", Env: []string{"STREAMING_KEEPALIVE"}, Flag: "streaming-keepalive", Default: "15s", Usage: "how often idle streams get a keep-alive comment", Value: config.Duration(&c.Keepalive)},
		{Name: "streaming-max-connections", Env: []string{"STREAMING_MAX_CONNECTIONS"}, Flag: "streaming-max-connections", Default: "10000", Usage: "most streams open at once on this instance; more get 429 (0: streaming off)", Value: config.Int(&c.MaxConnections, 0, 1<<30)},
	}
}

// Validate checks the limits.
func (c StreamingConfig) Validate() error {
	var errs []error
	if c.Keepalive <= 0 {
		errs = append(errs, errors.New("STREAMING_KEEPALIVE must be positive"))
	}
	if c.MaxConnections < 0 {
		errs = append(errs, errors.New("STREAMING_MAX_CONNECTIONS must not be negative (0 turns streaming off: every stream gets 429)"))
	}
	return errors.Join(errs...)
}

// streamScope is a client query as a hub scope. Deltas always carry
// segments by reference, as Unleash's do.
type streamScope struct{ q clientQuery }

func (sc streamScope) Key() string { return sc.q.key() }

func (s *API) newHub() *stream.Hub {
	return stream.New(stream.Config{MaxConnections: s.cfg.Streaming.MaxConnections, Queue: streamQueue, History: streamHistory, Keepalive: s.cfg.Streaming.Keepalive}, streamState)
}

// streamState is the scope's flags and the segments they use, encoded as
// GET /api/client/features serves them.
func streamState(snapshot any, sc stream.Scope) *stream.State {
	cfg, q := snapshot.(*clientconfig.Config), sc.(streamScope).q
	flags := cfg.Flags(q.env)
	// Sized for every flag of the environment (most scopes see most), and
	// in its name order.
	st := &stream.State{Flags: make([]stream.Flag, 0, len(flags)), Segments: map[int][]byte{}}
	for _, f := range flags {
		if !q.matches(f) {
			continue
		}
		st.Flags = append(st.Flags, stream.Flag{Name: f.Name, Project: f.Project, JSON: f.JSON})
		for _, id := range f.SegmentIDs() {
			if _, ok := st.Segments[id]; !ok {
				if sg := cfg.Segment(id); sg != nil {
					st.Segments[id] = sg.JSON
				}
			}
		}
	}
	return st
}

// RunStreaming follows the store's changes (commits here; other
// instances' through LISTEN/NOTIFY on PostgreSQL and the revision poll)
// and publishes each new snapshot to the hub, which pushes the deltas to
// the open streams. It also sends the keep-alives.
func (s *API) RunStreaming(ctx context.Context) {
	go s.store.Listen(ctx)
	go s.hub.Run(ctx.Done())
	defer s.hub.CloseAll()
	for {
		changed := s.store.Changes()
		// Without open streams nothing is loaded: a change costs a writer
		// no snapshot, and the stream and delta handlers publish the
		// current one themselves before they answer.
		if s.hub.Connections() == 0 {
			select {
			case <-ctx.Done():
				return
			case <-changed:
			}
			continue
		}
		if _, err := s.publishSnapshot(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("streaming: loading the client data failed", "err", err)
			select { // the next change or poll retries
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
	}
}

// publishSnapshot brings the hub up to the current snapshot.
func (s *API) publishSnapshot(ctx context.Context) (*clientconfig.Config, error) {
	cfg, err := s.client.configCtx(ctx)
	if err != nil {
		return nil, err
	}
	s.hub.Publish(cfg.Revision, cfg)
	if old := s.published.Swap(cfg.Lineage()); old != 0 && old != cfg.Lineage() {
		// Built anew: the configurations before it share none of its
		// flags, so the hub does not keep them.
		s.hub.Forget()
	}
	return cfg, nil
}

func (s *API) streamQuery(r *http.Request) (clientQuery, error) {
	q, err := parseClientQuery(r)
	q.inline = false
	return q, err
}

// clientStreaming serves GET /api/client/streaming: an unleash-connected
// hydration (or, with a Last-Event-ID still in the history, the events
// since then), then an unleash-updated event per change, and keep-alive
// comments in between. A revoked token or a deleted environment ends the
// stream.
func (s *API) clientStreaming(w http.ResponseWriter, r *http.Request) error {
	q, err := s.streamQuery(r)
	if err != nil {
		return err
	}
	if _, err := s.publishSnapshot(r.Context()); err != nil {
		return err
	}
	since, hasSince := stream.ParseEventID(r.Header.Get("Last-Event-ID"))
	sub, err := s.hub.Subscribe(streamScope{q}, since, hasSince)
	if errors.Is(err, stream.ErrTooManyConnections) {
		return apierr.RateLimited(5, "This instance already serves the most streams it may (STREAMING_MAX_CONNECTIONS). Poll /api/client/features or /api/client/delta instead.")
	}
	if err != nil {
		return apierr.Internal(err)
	}
	defer sub.Close()
	// A change committed between the publish above and Subscribe found no
	// stream open and was not published: publish again (a no-op when
	// nothing changed), so this stream gets it as an update.
	if _, err := s.publishSnapshot(r.Context()); err != nil {
		return err
	}
	secret := route.Bearer(r.Header.Get("Authorization"))
	stream.Serve(w, r, sub, func() bool {
		if p, err := s.tokens.Resolve(r.Context(), secret); err == nil && p == nil {
			return false // the token was revoked or expired
		}
		cfg, err := s.client.configCtx(r.Context())
		return err != nil || cfg.HasEnvironment(q.env) // a deleted environment ends its streams
	})
	return nil
}

// clientDelta serves GET /api/client/delta: with If-None-Match "<eventId>"
// at the latest revision 304, at a revision still in the history the events
// since then, otherwise a hydration. The ETag is the revision the answer
// brings the client to.
func (s *API) clientDelta(w http.ResponseWriter, r *http.Request) error {
	q, err := s.streamQuery(r)
	if err != nil {
		return err
	}
	if _, err := s.publishSnapshot(r.Context()); err != nil {
		return err
	}
	since, hasSince := stream.ParseEventID(r.Header.Get("If-None-Match"))
	answer, err := s.hub.Delta(streamScope{q}, since, hasSince)
	if err != nil {
		return apierr.Internal(err)
	}
	answer.Write(w, r)
	return nil
}

// StreamConnections returns how many streams this instance has open.
func (s *API) StreamConnections() int { return s.hub.Connections() }
