package proxy

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http"
	"runtime"
	"time"

	"github.com/bunting-flags/bunting/internal/redact"
	"github.com/bunting-flags/bunting/internal/upstream"
)

// maxFailures caps the backoff multiplier, as the reference does.
const maxFailures = 10

// unauthorizedFactor slows polling after a 401/403: upstream refuses the
// token, but an operator may fix it, so polling never stops.
const unauthorizedFactor = 12

// Run syncs with upstream every refreshInterval and posts usage metrics
// every metricsInterval until ctx ends. It returns nil on cancellation.
func (p *Proxy) Run(ctx context.Context) error {
	done := make(chan struct{}, 2)
	go func() { p.metricsLoop(ctx); done <- struct{}{} }()
	if p.cfg.ExpBootstrap.URL != "" && !p.Ready() {
		go func() { p.bootstrap(ctx); done <- struct{}{} }()
	} else {
		done <- struct{}{}
	}
	go p.relay.run(ctx)
	p.upstreamLoop(ctx)
	<-done
	<-done
	return nil
}

func (p *Proxy) syncLoop(ctx context.Context) {
	failures := 0
	etag := ""
	for {
		var err error
		etag, err = p.syncOnce(ctx, etag)
		delay := p.cfg.RefreshInterval
		switch {
		case err == nil:
			failures = max(failures-1, 0)
			delay *= time.Duration(1 + failures)
		case ctx.Err() != nil:
			return
		case upstream.IsUnauthorized(err):
			delay *= unauthorizedFactor
			p.log.Error("upstream refuses the API token (upstreamApiToken, UPSTREAM_API_TOKEN); still serving the last configuration and retrying slowly",
				"err", err, "retryIn", delay.String(), "ready", p.Ready())
		default:
			failures = min(failures+1, maxFailures)
			delay *= time.Duration(1 + failures)
			p.log.Warn("upstream sync failed; still serving the last configuration", "err", err, "retryIn", delay.String(), "ready", p.Ready())
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// syncOnce fetches once and installs a changed configuration.
func (p *Proxy) syncOnce(ctx context.Context, etag string) (string, error) {
	f, err := p.upstream.FetchFeatures(ctx, etag, p.lastSum)
	if err != nil {
		result := "error"
		if upstream.IsUnauthorized(err) {
			result = "unauthorized"
		}
		p.metrics.syncResult(result, false, false)
		return etag, err
	}
	if f.Features == nil {
		// 304, or the same bytes: the served snapshot stays (a 304 to a
		// backup-started proxy is impossible: it sends no ETag yet).
		p.metrics.syncResult("unchanged", true, false)
		if p.snapshot.Load() != nil {
			p.fromAPI.Store(true)
		}
		return f.ETag, nil
	}
	p.fromAPI.Store(true)
	p.lastSum = f.Sum
	// The backup is written first so that the body (as large as the
	// payload, or twice that with its buffer's spare room) is garbage
	// before compiling allocates the snapshot.
	if p.storage != nil {
		if err := p.storage.Set(ctx, p.backupKey(), f.Raw); err != nil {
			p.log.Warn("could not save the backup", "err", err)
		}
	}
	cf, etag := f.Features, f.ETag
	f = upstream.Fetched{}
	p.collectGarbage()
	p.install(p.compile(cf), "upstream")
	p.metrics.syncResult("changed", true, true)
	p.log.Debug("configuration updated from upstream", "flags", p.snapshot.Load().Len())
	p.compactMemory()
	return etag, nil
}

// loadBackup serves the stored payload until upstream answers.
func (p *Proxy) loadBackup() {
	if p.storage == nil {
		return
	}
	raw, err := p.storage.Get(context.Background(), p.backupKey())
	if err != nil {
		p.log.Warn("could not read the backup", "err", err)
		return
	}
	if len(raw) == 0 {
		return
	}
	cf, err := upstream.DecodeFeatures(raw)
	if err != nil {
		p.log.Warn("ignoring an unreadable backup", "err", err)
		return
	}
	if len(cf.Features) == 0 {
		return
	}
	p.lastSum = sha256.Sum256(raw)
	raw = nil
	p.collectGarbage()
	p.install(p.compile(cf), "backup")
	raw, cf = nil, nil
	p.compactMemory()
}

// bootstrap loads expBootstrap.url unless upstream answers first.
func (p *Proxy) bootstrap(ctx context.Context) {
	hdr := http.Header{}
	if a := p.cfg.ExpBootstrap.Authorization; a != "" {
		hdr.Set("Authorization", a)
	}
	var err error
	for attempt := range 3 {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(attempt) * time.Second):
			}
		}
		var f upstream.Fetched
		f, err = p.upstream.FetchURL(ctx, p.cfg.ExpBootstrap.URL, hdr)
		if err == nil && f.Features != nil {
			if p.fromAPI.Load() {
				return
			}
			cf := f.Features
			f = upstream.Fetched{}
			p.collectGarbage()
			p.install(p.compile(cf), "bootstrap")
			p.compactMemory()
			return
		}
		if ctx.Err() != nil {
			return
		}
	}
	p.log.Warn("bootstrap failed", "url", redact.URL(p.cfg.ExpBootstrap.URL), "err", err)
}

// metricsLoop registers once the proxy is ready and then posts usage
// every metricsInterval plus jitter. A failed post keeps its counts.
func (p *Proxy) metricsLoop(ctx context.Context) {
	if p.cfg.MetricsInterval <= 0 {
		return
	}
	select {
	case <-ctx.Done():
		return
	case <-p.readyCh:
	}
	registered := p.register(ctx)
	failures := 0
	for {
		delay := p.cfg.MetricsInterval
		if j := p.cfg.MetricsJitter; j > 0 {
			delay += rand.N(j + 1)
		}
		delay *= time.Duration(1 + failures)
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			p.finalFlush()
			return
		case <-t.C:
		}
		if !registered {
			registered = p.register(ctx)
		}
		if err := p.postMetrics(ctx); err != nil {
			failures = min(failures+1, maxFailures)
			p.log.Warn("posting usage metrics failed; counts kept for the next post", "err", err)
		} else {
			failures = max(failures-1, 0)
		}
	}
}

// register announces the proxy upstream; a failure is retried before the
// next metrics post.
func (p *Proxy) register(ctx context.Context) bool {
	names := append([]string{"default", "applicationHostname", "gradualRolloutRandom", "gradualRolloutUserId",
		"gradualRolloutSessionId", "userWithId", "remoteAddress", "flexibleRollout"}, p.strategyNames()...)
	err := p.upstream.Register(ctx, upstream.Registration{
		AppName:         p.cfg.UpstreamAppName,
		InstanceID:      p.instanceID,
		ConnectionID:    p.upstreamConfig().ConnectionID,
		SDKVersion:      "bunting-proxy:" + Version,
		Strategies:      names,
		Started:         p.started.UTC().Truncate(time.Millisecond),
		Interval:        p.cfg.MetricsInterval.Milliseconds(),
		Environment:     p.cfg.Environment,
		PlatformName:    "go",
		PlatformVersion: runtime.Version(),
		SpecVersion:     upstream.SpecVersion,
	})
	if err != nil && ctx.Err() == nil {
		p.log.Warn("registering with upstream failed; retrying with the next metrics post", "err", err)
	}
	return err == nil
}

// maxMetricsPostBytes bounds the JSON of one upstream metrics post: a
// bucket with more is sent in several posts, so that a proxy serving
// thousands of flags stays under upstream body limits (100 kB by default
// on Bunting and Unleash).
const maxMetricsPostBytes = 64 << 10

// postMetrics sends the current bucket, in parts of at most
// maxMetricsPostBytes. A part that fails on the way (network error, 5xx,
// 401, 429, …) goes back with the parts not sent yet, to be retried with
// the next post; a part upstream rejects as invalid (see
// upstream.IsRejected) is dropped, since sending it again cannot succeed
// and would keep later usage from being reported.
func (p *Proxy) postMetrics(ctx context.Context) error {
	b := p.usage.Flush()
	if b.Empty() {
		return nil
	}
	parts := splitBucket(b, maxMetricsPostBytes)
	for i := range parts {
		err := p.upstream.PostMetrics(ctx, upstream.Metrics{
			AppName:         p.cfg.UpstreamAppName,
			InstanceID:      p.instanceID,
			ConnectionID:    p.upstreamConfig().ConnectionID,
			Bucket:          &parts[i],
			Environment:     p.cfg.Environment,
			PlatformName:    "go",
			PlatformVersion: runtime.Version(),
			SpecVersion:     upstream.SpecVersion,
		})
		switch {
		case err == nil:
			p.metrics.posts.WithLabelValues("ok").Inc()
		case upstream.IsRejected(err):
			p.metrics.posts.WithLabelValues("rejected").Inc()
			p.log.Warn("upstream rejected usage metrics as invalid; their counts are dropped", "err", err, "flags", len(parts[i].Toggles))
		default:
			p.metrics.posts.WithLabelValues("error").Inc()
			for _, rest := range parts[i:] {
				p.usage.Restore(rest)
			}
			return err
		}
	}
	return nil
}

// splitBucket cuts b into buckets (same start and stop) whose JSON stays
// under about limit bytes each; a single flag larger than limit goes alone.
func splitBucket(b Bucket, limit int) []Bucket {
	var parts []Bucket
	size := limit
	for name, t := range b.Toggles {
		n := toggleSize(name, t)
		if size+n > limit {
			parts = append(parts, Bucket{Start: b.Start, Stop: b.Stop, Toggles: map[string]*ToggleCount{}})
			size = 100 // the envelope: appName, instanceId, start, stop, …
		}
		parts[len(parts)-1].Toggles[name] = t
		size += n
	}
	return parts
}

// finalFlush posts what is left when the proxy stops, briefly.
func (p *Proxy) finalFlush() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := p.postMetrics(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		p.log.Warn("final usage metrics post failed", "err", err)
	}
}

// backupKey names the stored backup: the app name, as the reference does,
// plus a short hash of the upstream and its filters, so a proxy never
// starts from a configuration made for another upstream or filter.
func (p *Proxy) backupKey() string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s|%s|%s|%v", p.cfg.UpstreamURL, p.cfg.ProjectName, p.cfg.NamePrefix, p.cfg.Tags)
	return fmt.Sprintf("%s-%08x", p.cfg.UpstreamAppName, h.Sum32())
}

// toggleSize bounds the JSON of one flag's counts in a metrics post
// (counts take at most 19 digits).
func toggleSize(name string, t *ToggleCount) int {
	n := jsonLen(name) + 72
	for v := range t.Variants {
		n += jsonLen(v) + 23
	}
	return n
}

// jsonLen bounds the length of s as a JSON string by encoding/json, quotes
// included: escaped bytes take up to 6.
func jsonLen(s string) int {
	n := 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20, c == '<', c == '>', c == '&':
			n += 6
		case c == '"', c == '\\', c >= 0x80:
			n += 2
		default:
			n++
		}
	}
	return n
}
