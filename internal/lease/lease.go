// Package lease lets one instance at a time do a background job when
// several instances share a database: signal processing, integration
// deliveries and scheduled change requests each run only where their
// lease is held. The three workers took, renewed and gave up their lease
// the same way, so that way lives here once; the row itself is the
// store's (store.Q.AcquireLease).
//
// A lease lasts a fixed duration from each renewal. An instance that
// stops gives it up at once; one that dies keeps it until it expires, and
// then another instance takes over.
package lease

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"time"

	"github.com/bunting-flags/bunting/internal/store"
)

// Change is what a Keep did to the holding of the lease.
type Change int

const (
	// Unchanged: this instance holds the lease as it did, or still does
	// not (or the database could not say).
	Unchanged Change = iota
	// Gained: this instance has just taken the lease.
	Gained
	// Lost: another instance has taken the lease over.
	Lost
)

// Lease is one worker's view of one lease: its name, this instance's id
// as holder, and whether the last try held it. It is used by the worker's
// goroutine only.
type Lease struct {
	store    *store.Store
	log      *slog.Logger
	name     string
	instance string
	duration time.Duration

	held    bool
	renewed time.Time
}

// New describes the lease called name (its row in the leases table),
// taken for duration at each renewal, held by a random id for this
// instance. log receives the holding's changes (nil for none).
func New(st *store.Store, log *slog.Logger, name string, duration time.Duration) *Lease {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	return &Lease{store: st, log: log, name: name, instance: hex.EncodeToString(b[:]), duration: duration}
}

// Instance is this instance's id as the lease's holder.
func (l *Lease) Instance() string { return l.instance }

// Acquire takes or renews the lease now and reports whether this instance
// holds it, for a worker that checks the lease before each piece of work.
func (l *Lease) Acquire(ctx context.Context) (bool, error) {
	return l.store.Q(ctx).AcquireLease(l.name, l.instance, l.store.Now().Add(l.duration))
}

// Keep takes or renews the lease when this instance does not hold it or
// every has passed since the last try, and reports whether it holds it
// and how that changed. A failed try counts as not holding, without Lost
// (nobody else is known to hold it), and is logged unless ctx ended.
func (l *Lease) Keep(ctx context.Context, every time.Duration) (bool, Change) {
	now := time.Now()
	if l.held && now.Sub(l.renewed) < every {
		return true, Unchanged
	}
	ok, err := l.Acquire(ctx)
	change := Unchanged
	switch {
	case err != nil && ctx.Err() == nil:
		l.log.Warn("taking the lease failed", "lease", l.name, "err", err)
	case ok && !l.held:
		change = Gained
		l.log.Debug("this instance holds the lease", "lease", l.name, "instance", l.instance)
	case !ok && l.held:
		change = Lost
		l.log.Info("another instance took the lease over", "lease", l.name)
	}
	l.held, l.renewed = ok && err == nil, now
	return l.held, change
}

// Release gives the lease up if this instance holds it, so that another
// instance need not wait for it to expire; it is called when the worker
// stops, so it does not use the worker's (ended) context.
func (l *Lease) Release() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = l.store.Q(ctx).ReleaseLease(l.name, l.instance)
	l.held = false
}
