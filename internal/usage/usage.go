// Package usage keeps what SDKs report — usage counts per flag and the
// SDK instances that report them — and serves the applications view.
//
// Reports are validated and counted in memory (per flag, application,
// environment and hour, variants too), and the SDK gets its answer at
// once. Every FlushInterval, on graceful shutdown, and early when the
// pending keys reach MaxPendingKeys, the counts are written in one
// transaction: additive upserts of the hourly counts, each flag's
// lastSeenAt once per environment, the instances' last-seen times, and an
// application-created event for each application the database did not
// know. Usage is statistics: a process killed without shutdown loses at
// most one flush interval of it, while flag configuration and events keep
// their own durability. Several instances sharing a PostgreSQL database
// each flush their own counts, and the stored totals are the sums.
package usage

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// Service counts SDK reports in memory, writes them in batches, and reads
// the applications view.
type Service struct {
	cfg   Config
	store *store.Store
	log   *slog.Logger

	mu sync.Mutex
	// cur collects reports; queued is a batch handed to the writer (full,
	// or taken by a flush) and not yet written. At most these two exist,
	// so pending memory is bounded by twice MaxPendingKeys.
	cur, queued *batch
	// failures counts the failed writes of queued.
	failures int

	// flushMu makes flushes one at a time.
	flushMu sync.Mutex
	// wake asks the flush loop to write a full batch now.
	wake chan struct{}
	// lastCleanup is when stale instances were last deleted.
	lastCleanup time.Time

	dropped atomic.Int64
	flushes *prometheus.CounterVec
}

// New builds the service on st.
func New(cfg Config, st *store.Store, log *slog.Logger) *Service {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{cfg: cfg, store: st, log: log, cur: newBatch(), wake: make(chan struct{}, 1),
		flushes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bunting_usage_flushes_total", Help: "Writes of SDK usage counted in memory, by result.",
		}, []string{"result"})}
}

// Collectors are the service's Prometheus metrics.
func (s *Service) Collectors() []prometheus.Collector {
	return []prometheus.Collector{
		s.flushes,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "bunting_usage_pending_keys", Help: "Distinct usage keys counted in memory and not yet written."},
			func() float64 { return float64(s.PendingKeys()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "bunting_usage_dropped_keys_total", Help: "Usage keys dropped: past USAGE_MAX_PENDING_KEYS while a full batch waited to be written, or in a batch given up after failed writes."},
			func() float64 { return float64(s.dropped.Load()) }),
	}
}

// Keys of the pending counts.
type (
	// bucketKey is one application's reports in one environment and hour.
	bucketKey struct {
		app, env string
		hour     int64
	}
	instanceKey struct{ app, instance string }
)

// bucket is the counts of one bucketKey, by flag.
type bucket struct {
	flags map[string]*flagCounts
	// last is when the latest report was counted in it: the flags' last
	// seen time.
	last time.Time
}

// flagCounts are one flag's counts in a bucket.
type flagCounts struct {
	yes, no  int64
	variants []variantCount
}

// newApp is an application first seen in a batch, with what its
// application-created event says.
type newApp struct {
	at                   time.Time
	instance, sdkVersion string
	strategies           []string
}

// batch is the counts and sightings of one flush.
type batch struct {
	buckets   map[bucketKey]*bucket
	instances map[instanceKey]*store.Instance
	apps      map[string]newApp
	usage     map[store.AppUsage]struct{}
	// n is the number of keys: buckets, flags and variants in them,
	// instances, applications and usages.
	n int
}

func newBatch() *batch {
	return &batch{buckets: map[bucketKey]*bucket{}, instances: map[instanceKey]*store.Instance{},
		apps: map[string]newApp{}, usage: map[store.AppUsage]struct{}{}}
}

// PendingKeys is how many keys are counted in memory and not yet written.
func (s *Service) PendingKeys() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.cur.n
	if s.queued != nil {
		n += s.queued.n
	}
	return n
}

// Dropped is how many keys were dropped because memory was full.
func (s *Service) Dropped() int64 { return s.dropped.Load() }

// reserve prepares s.cur for a report that adds at most need keys (s.mu
// held): when they would not fit under the cap, the batch is queued for
// writing and the flush loop woken, unless a batch is queued already.
// So a report goes to one batch, which room then bounds.
func (s *Service) reserve(need int) {
	if s.cur.n+need <= s.cfg.MaxPendingKeys || s.queued != nil || s.cur.n == 0 {
		return
	}
	s.queued, s.cur = s.cur, newBatch()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// room reports whether s.cur may take one more key (s.mu held). At the
// cap, which only a batch that could not be queued reaches, the key is
// dropped and counted.
func (s *Service) room() bool {
	if s.cur.n < s.cfg.MaxPendingKeys {
		return true
	}
	s.dropped.Add(1)
	return false
}

// satAdd adds two non-negative counts, stopping at the largest int64.
func satAdd(a, b int64) int64 {
	if a > 1<<63-1-b {
		return 1<<63 - 1
	}
	return a + b
}

// AddMetrics reads and validates a metrics report (MetricsBody) and
// counts the usage of the flags (and variants) that flags says the token
// sees; the others are dropped, as Unleash drops unknown flags. The SDK
// instance is recorded as seen.
func (s *Service) AddMetrics(body []byte, src Source, flags Flags) error {
	r, err := decodeMetrics(body, flags)
	if err != nil {
		return err
	}
	defer r.release()
	if err := checkReporter(r.app, r.instance, r.sdk); err != nil {
		return err
	}
	now := s.store.Now()
	at := now
	if r.stop != nil {
		at = *r.stop
	}
	key := bucketKey{r.app, src.Environment, at.UTC().Truncate(time.Hour).UnixMilli()}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reserve(1 + len(r.known) + len(r.variants) + seeKeys(src.Projects))
	if len(r.known) > 0 {
		s.count(key, r, now)
	}
	s.see(store.Instance{AppName: r.app, InstanceID: r.instance, Environment: src.Environment,
		SDKVersion: r.sdk, SDKType: src.SDKType, ClientIP: src.ClientIP, LastSeen: now}, src.Projects)
	return nil
}

// count adds a report's known counts to its bucket in s.cur (s.mu held).
func (s *Service) count(key bucketKey, r *report, now time.Time) {
	b := s.cur.buckets[key]
	if b == nil {
		if !s.room() {
			return
		}
		b = &bucket{flags: make(map[string]*flagCounts, len(r.known))}
		s.cur.buckets[key] = b
		s.cur.n++
	}
	b.last = now
	for _, k := range r.known {
		fc := b.flags[k.flag]
		if fc == nil {
			if !s.room() {
				continue
			}
			fc = &flagCounts{}
			b.flags[k.flag] = fc
			s.cur.n++
		}
		fc.yes, fc.no = satAdd(fc.yes, k.yes), satAdd(fc.no, k.no)
	variants:
		for _, v := range r.variants[k.vFrom:k.vTo] {
			for i := range fc.variants {
				if fc.variants[i].name == v.name {
					fc.variants[i].n = satAdd(fc.variants[i].n, v.n)
					continue variants
				}
			}
			if s.room() {
				fc.variants = append(fc.variants, v)
				s.cur.n++
			}
		}
	}
}

// seeKeys is at most how many keys see adds: the application, its
// usage in each project and the instance.
func seeKeys(projects []string) int { return 2 + len(projects) }

// AddRegistration validates a registration and records the SDK instance.
// Server SDKs must list their strategies (requireStrategies); front-end
// SDKs need not.
func (s *Service) AddRegistration(b *RegisterBody, src Source, requireStrategies bool) error {
	if err := b.check(requireStrategies); err != nil {
		return err
	}
	now := s.store.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reserve(seeKeys(src.Projects))
	s.see(store.Instance{AppName: b.AppName, InstanceID: b.InstanceID, Environment: src.Environment, SDKVersion: b.SDKVersion,
		SDKType: src.SDKType, ClientIP: src.ClientIP, Strategies: b.Strategies, Interval: *b.Interval, StartedAt: b.Started.t, LastSeen: now}, src.Projects)
	return nil
}

// see records an SDK instance in s.cur (s.mu held): the application, the
// projects and environment its token gives it, and the instance itself.
// Within a batch the latest sighting wins, keeping a registration's
// strategies, interval and start when a report follows it.
func (s *Service) see(in store.Instance, projects []string) {
	if in.InstanceID == "" {
		in.InstanceID = "default"
	}
	if _, ok := s.cur.apps[in.AppName]; !ok && s.room() {
		s.cur.apps[in.AppName] = newApp{at: in.LastSeen, instance: in.InstanceID, sdkVersion: in.SDKVersion, strategies: in.Strategies}
		s.cur.n++
	}
	for _, p := range projects {
		u := store.AppUsage{App: in.AppName, Project: p, Environment: in.Environment}
		if _, ok := s.cur.usage[u]; !ok && s.room() {
			s.cur.usage[u] = struct{}{}
			s.cur.n++
		}
	}
	key := instanceKey{in.AppName, in.InstanceID}
	old, ok := s.cur.instances[key]
	if !ok {
		if !s.room() {
			return
		}
		s.cur.instances[key] = &in
		s.cur.n++
		return
	}
	if in.Strategies == nil {
		in.Strategies, in.Interval, in.StartedAt = old.Strategies, old.Interval, old.StartedAt
	}
	if in.SDKVersion == "" {
		in.SDKVersion = old.SDKVersion
	}
	*old = in
}

// Run writes the pending counts every FlushInterval, and at once when
// they reach the cap, until ctx ends. The caller flushes once more after
// the last report was accepted (Flush), as the server does on shutdown.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.wake:
		}
		// A flush under way finishes even when ctx ends meanwhile: what it
		// writes would otherwise be written again by the final flush.
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
		if err := s.Flush(fctx); err != nil {
			s.log.Warn("writing SDK usage failed; it is kept for the next attempt", "err", err)
		}
		cancel()
	}
}

// flushTimeout bounds one write.
const flushTimeout = 30 * time.Second

// maxFailures is how many times a batch is written before it is given
// up: a write that keeps failing must not keep every later count out.
const maxFailures = 3

// Flush writes what is pending now: a queued batch and then the counts
// collected so far, each in one transaction. A batch whose write fails
// stays queued for the next flush (new keys beyond the cap are dropped
// meanwhile), and is given up after maxFailures attempts.
func (s *Service) Flush(ctx context.Context) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	for range 2 {
		s.mu.Lock()
		if s.queued == nil && s.cur.n > 0 {
			s.queued, s.cur = s.cur, newBatch()
		}
		b := s.queued
		s.mu.Unlock()
		if b == nil {
			return nil
		}
		err := s.write(ctx, b)
		s.mu.Lock()
		if err == nil {
			s.queued, s.failures = nil, 0
		} else if s.failures++; s.failures >= maxFailures {
			s.log.Error("SDK usage could not be written and is dropped", "keys", b.n, "attempts", s.failures, "err", err)
			s.dropped.Add(int64(b.n))
			s.queued, s.failures = nil, 0
		}
		s.mu.Unlock()
		if err != nil {
			s.flushes.WithLabelValues("error").Inc()
			return err
		}
		s.flushes.WithLabelValues("ok").Inc()
	}
	return nil
}

// cleanupInterval is how often a flush also deletes stale instances.
const cleanupInterval = 10 * time.Minute

// write writes one batch in one transaction.
func (s *Service) write(ctx context.Context, b *batch) error {
	var (
		counts   []store.UsageCount
		variants []store.VariantCount
	)
	seen := map[store.FlagSeen]time.Time{} // by flag and environment (At unset)
	for k, bk := range b.buckets {
		for flag, c := range bk.flags {
			counts = append(counts, store.UsageCount{Feature: flag, App: k.app, Environment: k.env, Hour: k.hour, Yes: c.yes, No: c.no})
			for _, v := range c.variants {
				variants = append(variants, store.VariantCount{Feature: flag, App: k.app, Environment: k.env, Hour: k.hour, Variant: v.name, Count: v.n})
			}
			if c.yes > 0 || c.no > 0 {
				sk := store.FlagSeen{Feature: flag, Environment: k.env}
				if bk.last.After(seen[sk]) {
					seen[sk] = bk.last
				}
			}
		}
	}
	lastSeen := make([]store.FlagSeen, 0, len(seen))
	for sk, at := range seen {
		sk.At = at
		lastSeen = append(lastSeen, sk)
	}
	instances := make([]store.Instance, 0, len(b.instances))
	for _, in := range b.instances {
		instances = append(instances, *in)
	}
	firstSeen := make(map[string]time.Time, len(b.apps))
	for name, a := range b.apps {
		firstSeen[name] = a.at
	}
	usage := make([]store.AppUsage, 0, len(b.usage))
	for u := range b.usage {
		usage = append(usage, u)
	}
	now := s.store.Now()
	cleanup := now.Sub(s.lastCleanup) >= cleanupInterval
	err := s.store.Tx(ctx, func(tx *store.Tx) error {
		q := tx.Telemetry()
		if err := q.AddUsage(counts); err != nil {
			return err
		}
		if err := q.AddVariantUsage(variants); err != nil {
			return err
		}
		added, err := q.AddApplications(firstSeen)
		if err != nil {
			return err
		}
		for _, name := range added {
			a := b.apps[name]
			if err := tx.Event(store.NewEvent{Type: "application-created", Actor: domain.SystemActor,
				Data: map[string]any{"appName": name, "instanceId": a.instance, "strategies": a.strategies, "sdkVersion": a.sdkVersion}}); err != nil {
				return err
			}
		}
		if err := q.AddApplicationUsage(usage); err != nil {
			return err
		}
		if err := q.SeeInstances(instances); err != nil {
			return err
		}
		if cleanup {
			if _, err := q.DeleteInstancesSeenBefore(now.Add(-s.cfg.InstanceStaleAfter)); err != nil {
				return err
			}
		}
		return q.MarkSeen(lastSeen)
	})
	if err == nil && cleanup {
		s.lastCleanup = now
	}
	return err
}
