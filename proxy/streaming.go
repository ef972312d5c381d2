package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/stream"
	"github.com/bunting-flags/bunting/internal/upstream"
)

// Following upstream's stream, and relaying it to server-side SDKs.

const (
	// streamIdle is how long the upstream stream may stay silent
	// (keep-alives included) before the proxy takes it as dead.
	streamIdle = 60 * time.Second
	// streamFailuresBeforePolling is how many streams in a row may fail
	// to open before the proxy polls for a while.
	streamFailuresBeforePolling = 3
	// streamRetryAfter is how long the proxy polls before it tries the
	// stream again.
	streamRetryAfter = time.Minute
	// relayKeepalive and relayMaxConnections bound the relayed streams.
	relayKeepalive      = 15 * time.Second
	relayMaxConnections = 10000
	// relayHistory is how many configurations the relay keeps to resume
	// from (each one's payload, not its compiled snapshot).
	relayHistory = 8
)

// upstreamLoop keeps the configuration current: by following upstream's
// stream when upstreamStreaming is on (the default), falling back to
// polling every refreshInterval when upstream does not stream (open-source
// Unleash answers 404), refuses the stream (401, 429) or keeps failing,
// and trying the stream again after streamRetryAfter.
func (p *Proxy) upstreamLoop(ctx context.Context) {
	if !p.cfg.UpstreamStreaming {
		p.syncLoop(ctx)
		return
	}
	var st upstream.StreamState
	failures := 0
	for ctx.Err() == nil {
		connected, err := p.upstream.Follow(ctx, &st, streamIdle, func() { p.installStreamed(ctx, &st) })
		if ctx.Err() != nil {
			return
		}
		var se *upstream.StatusError
		switch {
		case connected:
			failures = 0
			p.log.Info("upstream stream ended; reconnecting", "err", err)
		case errors.As(err, &se) || failures+1 >= streamFailuresBeforePolling:
			failures = 0
			p.log.Info("upstream does not stream here; polling instead, and trying the stream again later", "err", err, "retryIn", streamRetryAfter.String())
			p.metrics.syncResult("stream_unavailable", false, false)
			poll, cancel := context.WithTimeout(ctx, streamRetryAfter)
			p.syncLoop(poll)
			cancel()
			continue
		default:
			failures++
			p.log.Warn("upstream sync failed: could not open the stream; still serving the last configuration and retrying", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(failures*250+50) * time.Millisecond):
		}
	}
}

// installStreamed compiles and serves the configuration the stream has
// built, unless it is the one served already.
func (p *Proxy) installStreamed(ctx context.Context, st *upstream.StreamState) {
	raw := st.Payload()
	sum := sha256.Sum256(raw)
	if sum == p.lastSum && p.snapshot.Load() != nil {
		p.metrics.syncResult("unchanged", true, false)
		return
	}
	cf, err := upstream.DecodeFeatures(raw)
	if err != nil {
		p.log.Warn("ignoring a streamed configuration", "err", err)
		return
	}
	p.fromAPI.Store(true)
	p.lastSum = sum
	if p.storage != nil {
		if err := p.storage.Set(ctx, p.backupKey(), raw); err != nil {
			p.log.Warn("could not save the backup", "err", err)
		}
	}
	p.install(p.compile(cf), "upstream stream")
	p.metrics.syncResult("changed", true, true)
	p.log.Debug("configuration updated from upstream", "flags", p.snapshot.Load().Len(), "via", "stream")
}

// relay serves the proxy's configuration to server-side SDKs as Edge does,
// on /api/client/streaming and /api/client/delta (Unleash's delta format),
// for the expServerSideSdkConfig tokens. Its event ids are the proxy's
// own: a counter that starts at the proxy's start time in milliseconds, so
// that ids from before a restart are never mistaken for current ones.
type relay struct {
	hub *stream.Hub
	rev atomic.Int64
}

// newRelay returns nil when no server-side SDK may connect.
func newRelay(p *Proxy) *relay {
	if !p.servesPayload() {
		return nil
	}
	r := &relay{hub: stream.New(stream.Config{MaxConnections: relayMaxConnections, Keepalive: relayKeepalive, History: relayHistory}, relayState)}
	r.rev.Store(time.Now().UnixMilli())
	return r
}

// relayScope is the one scope of the relay: the whole configuration.
type relayScope struct{}

func (relayScope) Key() string { return "" }

func relayState(snapshot any, _ stream.Scope) *stream.State {
	st := &stream.State{Segments: map[int][]byte{}}
	cf := snapshot.(*engine.ClientFeatures)
	for _, f := range cf.Features {
		if b, err := json.Marshal(f); err == nil {
			st.Flags = append(st.Flags, stream.Flag{Name: f.Name, Project: f.Project, JSON: b})
		}
	}
	for _, sg := range cf.Segments {
		if b, err := json.Marshal(sg); err == nil {
			st.Segments[sg.ID] = b
		}
	}
	return st
}

// publish hands a newly installed snapshot's payload to the relayed
// streams (the payload only: the relay's history must not keep old
// compiled snapshots alive).
func (r *relay) publish(s *engine.Snapshot) {
	if cf := s.Features(); r != nil && cf != nil {
		r.hub.Publish(r.rev.Add(1), cf)
	}
}

func (r *relay) run(ctx context.Context) {
	if r != nil {
		defer r.hub.CloseAll()
		r.hub.Run(ctx.Done())
	}
}

// serveStreaming relays the stream to a server-side SDK (its method and
// token are checked by the route table).
func (p *Proxy) serveStreaming(w http.ResponseWriter, r *http.Request) error {
	if p.relay == nil {
		return p.unauthorized()
	}
	since, hasSince := stream.ParseEventID(r.Header.Get("Last-Event-ID"))
	sub, err := p.relay.hub.Subscribe(relayScope{}, since, hasSince)
	if errors.Is(err, stream.ErrTooManyConnections) {
		return apierr.RateLimited(5, "This proxy already relays the most streams it may. Poll /api/client/features or /api/client/delta instead.")
	}
	if err != nil {
		return errNotReady
	}
	defer sub.Close()
	stream.Serve(w, r, sub, nil)
	return nil
}

// serveDelta answers a server-side SDK's delta poll.
func (p *Proxy) serveDelta(w http.ResponseWriter, r *http.Request) error {
	if p.relay == nil {
		return p.unauthorized()
	}
	since, hasSince := stream.ParseEventID(r.Header.Get("If-None-Match"))
	answer, err := p.relay.hub.Delta(relayScope{}, since, hasSince)
	if err != nil {
		return errNotReady
	}
	answer.Write(w, r)
	return nil
}
