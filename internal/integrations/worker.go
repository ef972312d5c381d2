package integrations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/lease"
	"github.com/bunting-flags/bunting/internal/store"
)

// Delivery log states (Unleash's integrationEventSchema).
const (
	StateSuccess = "success"
	StateFailed  = "failed"
)

// Tuning of the lanes.
const (
	// batchSize is how many outbox rows a lane reads at a time; their
	// outcomes are written together, after at most batchTime of sending.
	batchSize = 100
	batchTime = 250 * time.Millisecond
	// linger is how long a lane that has just sent a batch short of
	// batchSize waits before it reads the next: while changes keep coming,
	// their deliveries gather into batches, so the reads and the record
	// of outcomes are shared by many deliveries rather than paid by each.
	// The first delivery after a quiet spell does not wait.
	linger = 20 * time.Millisecond
	// maxBackoff caps one retry's delay.
	maxBackoff = time.Hour
	// dispatchEvery is the shortest pause between two looks for work that
	// changes woke: commits come in bursts.
	dispatchEvery = 5 * time.Millisecond
)

// Run delivers until ctx ends. Only the instance holding the delivery
// lease works; it looks for work when a change is committed (here, or by
// another instance as LISTEN/NOTIFY or the revision poll report it) and
// every PollInterval, and runs one lane per integration with deliveries.
func (s *Service) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.PollInterval)
	defer t.Stop()
	var (
		lanesCtx  context.Context
		stopLanes = func() {}
		lastPrune time.Time
	)
	defer func() {
		stopLanes()
		s.waitLanes()
		s.lease.Release()
	}()
	for {
		changes := s.store.Changes()
		now := time.Now()
		held, change := s.lease.Keep(ctx, s.cfg.PollInterval)
		switch change {
		case lease.Gained:
			lanesCtx, stopLanes = withCancel(ctx)
		case lease.Lost:
			stopLanes()
		}
		if held {
			if err := s.dispatch(lanesCtx); err != nil && ctx.Err() == nil {
				s.log.Warn("integrations: looking for deliveries failed", "err", err)
			}
			if now.Sub(lastPrune) > time.Minute {
				lastPrune = now
				s.prune(ctx)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-changes:
			time.Sleep(dispatchEvery)
		case <-s.wake:
		case <-t.C:
		}
	}
}

// withCancel is context.WithCancel for a context whose cancel is kept for
// later (the lanes' while the lease is held).
func withCancel(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithCancel(ctx)
}

// prune bounds the delivery log by age and by count per integration.
func (s *Service) prune(ctx context.Context) {
	before := s.store.Now().Add(-time.Duration(s.cfg.LogRetentionDays) * 24 * time.Hour)
	err := s.store.Record(ctx, func(tx *store.Tx) error {
		_, err := tx.PruneDeliveryLog(before, s.cfg.LogRetentionCount)
		return err
	})
	if err != nil && ctx.Err() == nil {
		s.log.Warn("integrations: pruning the delivery log failed", "err", err)
	}
}

// lane delivers one integration's outbox in order.
type lane struct {
	poke chan struct{}
	done chan struct{}
}

// dispatch starts a lane for each integration with deliveries that has
// none, and pokes the running ones.
func (s *Service) dispatch(ctx context.Context) error {
	ids, err := s.store.Q(ctx).IntegrationsWithDeliveries()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		if l, ok := s.lanes[id]; ok {
			select {
			case l.poke <- struct{}{}:
			default:
			}
			continue
		}
		l := &lane{poke: make(chan struct{}, 1), done: make(chan struct{})}
		s.lanes[id] = l
		go s.runLane(ctx, id, l)
	}
	return nil
}

// waitLanes waits until every lane has stopped.
func (s *Service) waitLanes() {
	s.mu.Lock()
	var running []*lane
	for _, l := range s.lanes {
		running = append(running, l)
	}
	s.mu.Unlock()
	for _, l := range running {
		<-l.done
	}
}

// leave removes a lane that found nothing to do, unless it was poked
// meanwhile; it reports whether the lane ended.
func (s *Service) leave(id int64, l *lane) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-l.poke:
		return false
	default:
	}
	delete(s.lanes, id)
	return true
}

// runLane delivers integration id's outbox rows in order until none is
// left (or ctx ends), writing each batch's outcomes in one transaction
// (shared with the other lanes' batches ready at the same time).
func (s *Service) runLane(ctx context.Context, id int64, l *lane) {
	defer close(l.done)
	defer func() {
		s.mu.Lock()
		if s.lanes[id] == l {
			delete(s.lanes, id)
		}
		s.mu.Unlock()
	}()
	var (
		secretsOf string
		params    map[string]string
	)
	for ctx.Err() == nil {
		q := s.store.Q(ctx)
		in, err := q.Integration(id)
		if apierr.IsKind(err, apierr.KindNotFound) {
			return // deleted, with its outbox
		}
		if err != nil {
			s.pause(ctx, l, time.Second)
			continue
		}
		if !in.Enabled {
			s.dropDisabled(ctx, in)
			if s.leave(id, l) {
				return
			}
			continue
		}
		batch, err := q.Deliveries(id, batchSize)
		if err != nil {
			s.pause(ctx, l, time.Second)
			continue
		}
		if len(batch) == 0 {
			if s.leave(id, l) {
				return
			}
			continue
		}
		if params == nil || secretsOf != in.Secrets {
			secrets, err := s.secrets.open(ctx, in.Secrets)
			if err != nil {
				s.log.Error("integrations: cannot read an integration's secrets; its deliveries wait", "integration", id, "err", err)
				s.pause(ctx, l, time.Minute)
				continue
			}
			params, secretsOf = merge(in.Parameters, secrets), in.Secrets
		}
		var (
			outcomes []store.DeliveryOutcome
			wait     time.Time
		)
		started := time.Now()
		for _, d := range batch {
			if now := s.store.Now(); d.NextAttemptAt.After(now) {
				wait = d.NextAttemptAt
				break
			}
			o := s.attempt(ctx, in, params, d)
			outcomes = append(outcomes, o)
			if !o.Done {
				wait = o.RetryAt // the next ones wait for this one: event order
				break
			}
			if time.Since(started) > batchTime {
				break
			}
		}
		if len(outcomes) > 0 {
			// Written even when ctx ended, so that what was sent is not
			// sent again after a restart.
			if err := s.recorder.record(ctx, outcomes); err != nil {
				s.log.Warn("integrations: recording deliveries failed; they will be sent again", "integration", id, "err", err)
				s.pause(ctx, l, time.Second)
				continue
			}
		}
		if !wait.IsZero() {
			s.pause(ctx, l, wait.Sub(s.store.Now()))
		} else if len(batch) < batchSize {
			sleep(ctx, linger)
		}
	}
}

// sleep waits for d or the end of ctx (not for pokes: a lane lingering
// so that deliveries gather must not be woken by each of them).
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// pause waits for d, a poke or the end of ctx.
func (s *Service) pause(ctx context.Context, l *lane, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-l.poke:
	case <-t.C:
	}
}

// dropDisabled ends the deliveries of an integration that was disabled
// before they were sent, logging each as failed.
func (s *Service) dropDisabled(ctx context.Context, in store.Integration) {
	err := s.store.Record(ctx, func(tx *store.Tx) error {
		_, err := tx.DropDeliveries(in.ID, StateFailed, "Not sent: the integration was disabled before this delivery.", tx.Now())
		return err
	})
	if err != nil && ctx.Err() == nil {
		s.log.Warn("integrations: dropping a disabled integration's deliveries failed", "integration", in.ID, "err", err)
	}
}

func merge(plain, secrets map[string]string) map[string]string {
	out := make(map[string]string, len(plain)+len(secrets))
	for k, v := range plain {
		out[k] = v
	}
	for k, v := range secrets {
		out[k] = v
	}
	return out
}

// attempt sends one delivery and decides what becomes of it.
func (s *Service) attempt(ctx context.Context, in store.Integration, params map[string]string, d store.Delivery) store.DeliveryOutcome {
	id := store.DeliveryID(d.Event.ID, in.ID)
	res := s.send(ctx, in.Provider, params, d.Event, id)
	now := s.store.Now()
	eventID := d.Event.ID
	o := store.DeliveryOutcome{OutboxID: d.ID, Done: true}
	o.Log = store.DeliveryAttempt{IntegrationID: in.ID, DeliveryID: id, EventID: &eventID, Attempt: d.Attempts + 1, CreatedAt: now}
	details := res.details(id, d.Attempts+1)
	switch {
	case res.ok():
		o.Log.State, o.Log.StateDetails = StateSuccess, res.describe()
	case res.retry && ctx.Err() != nil:
		// Stopped mid-way: the next holder of the lease sends it again.
		o.Done, o.RetryAt = false, now
		o.Log.State, o.Log.StateDetails = StateFailed, res.describe()+" Interrupted by a shutdown; it will be sent again."
		details["retry"] = true
	case res.retry:
		delay := s.backoff(d.Attempts, res.retryAfter)
		if s.cfg.RetryWindow > 0 && now.Add(delay).Before(d.CreatedAt.Add(s.cfg.RetryWindow)) {
			o.Done, o.RetryAt = false, now.Add(delay)
			o.Log.State = StateFailed
			o.Log.StateDetails = fmt.Sprintf("%s Will retry at %s.", res.describe(), o.RetryAt.UTC().Format(time.RFC3339))
			details["retry"], details["nextAttemptAt"] = true, o.RetryAt.UTC()
			break
		}
		o.Log.State = StateFailed
		o.Log.StateDetails = fmt.Sprintf("%s Gave up after %d attempts over %s.", res.describe(), d.Attempts+1, now.Sub(d.CreatedAt).Round(time.Second))
		details["retry"] = false
	default:
		o.Log.State, o.Log.StateDetails = StateFailed, res.describe()+" Not retried."
		details["retry"] = false
	}
	o.Log.Details, _ = json.Marshal(details)
	if o.Log.State == StateFailed && ctx.Err() == nil {
		s.log.Warn("integrations: delivery failed", "integration", in.ID, "provider", in.Provider, "delivery", id,
			"target", res.target, "status", res.status, "err", res.err, "retry", !o.Done)
	}
	return o
}

// backoff is the delay before retry number attempts+1: RetryBase doubled
// per earlier attempt, capped at an hour, drawn from [d/2, d) (jitter),
// and at least what a Retry-After asked for (capped too).
func (s *Service) backoff(attempts int, retryAfter time.Duration) time.Duration {
	d := s.cfg.RetryBase
	for i := 0; i < attempts && d < maxBackoff; i++ {
		d *= 2
	}
	d = min(d, maxBackoff)
	d = d/2 + rand.N(d/2+1)
	return max(d, min(retryAfter, maxBackoff))
}

// result is what one attempt got.
type result struct {
	target     string // scheme and host, never the path or query
	status     int
	answer     string
	err        string
	retry      bool
	retryAfter time.Duration
	took       time.Duration
}

func (r result) ok() bool { return r.err == "" && r.status >= 200 && r.status < 300 }

// describe says in a sentence what happened.
func (r result) describe() string {
	switch {
	case r.err != "":
		return "Not delivered: " + r.err + "."
	case r.ok():
		return fmt.Sprintf("Delivered: the receiver answered %d.", r.status)
	case r.status >= 300 && r.status < 400:
		return fmt.Sprintf("The receiver answered %d, a redirect, which is not followed.", r.status)
	}
	return fmt.Sprintf("The receiver answered %d.", r.status)
}

// details is the log row's details object.
func (r result) details(id string, attempt int) map[string]any {
	d := map[string]any{"deliveryId": id, "attempt": attempt, "target": r.target, "durationMs": r.took.Milliseconds()}
	if r.status != 0 {
		d["statusCode"] = r.status
	}
	if r.answer != "" {
		d["answer"] = r.answer
	}
	if r.err != "" {
		d["error"] = r.err
	}
	return d
}

// send builds and sends one delivery.
func (s *Service) send(ctx context.Context, provider string, params map[string]string, ev store.Event, id string) result {
	at := s.store.Now()
	req, err := s.build(provider, params, ev, id, at)
	var res result
	if req.url != nil {
		res.target = (&url.URL{Scheme: req.url.Scheme, Host: req.url.Host}).String()
	}
	if err != nil {
		res.err = err.Error()
		return res
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer cancel()
	hr, err := http.NewRequestWithContext(s.targets.withRule(ctx, req.url), http.MethodPost, req.url.String(), req.bodyReader())
	if err != nil {
		res.err = "the request cannot be made"
		return res
	}
	hr.Header = req.header
	start := time.Now()
	resp, err := s.client.Do(hr)
	res.took = time.Since(start)
	if err != nil {
		res.err, res.retry = sendError(err, s.cfg.RequestTimeout)
		return res
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // so the connection is reused
	res.status, res.answer = resp.StatusCode, excerpt(body)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		res.retry = true
		res.retryAfter = retryAfter(resp.Header.Get("Retry-After"), s.store.Now())
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		if loc, err := url.Parse(resp.Header.Get("Location")); err == nil && loc.Host != "" {
			res.answer = "redirect to " + (&url.URL{Scheme: loc.Scheme, Host: loc.Host}).String() + " (not followed)"
		}
	}
	return res
}

// sendError describes a failed request without its URL (which may hold a
// secret) and says whether to retry: not when the target was refused.
func sendError(err error, timeout time.Duration) (string, bool) {
	if te, ok := targetError(err); ok {
		return "the target is refused: " + te.Error(), false
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %s", timeout), true
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return fmt.Sprintf("no answer within %s", timeout), true
	}
	return err.Error(), true
}

// retryAfter reads a Retry-After header (seconds or an HTTP date).
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// excerpt is the start of an answer's body as text, for the log.
func excerpt(b []byte) string {
	s := strings.TrimSpace(strings.ToValidUTF8(string(b), "�"))
	if len(s) > 256 {
		s = truncate(s, 256)
	}
	if !utf8.ValidString(s) {
		return ""
	}
	return s
}
