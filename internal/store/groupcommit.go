package store

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// groupCommit runs SQLite's write transactions. SQLite has one writer at a
// time and, with synchronous=FULL, syncs its log once per commit: that sync
// is most of a write's cost. Transactions that arrive while another one is
// being written wait in a queue; the next writer runs all of them inside
// one SQLite transaction, each in a savepoint of its own (a transaction
// whose function fails is rolled back alone, as if it had run by itself),
// and commits once: every transaction of the group is acknowledged after
// that one sync, or all fail together if it fails.
//
// Waiting for the writer's slot wakes up as soon as the writer finishes,
// where SQLite's busy handler sleeps and retries with growing back-off.
type groupCommit struct {
	s    *Store
	slot chan struct{} // held by the goroutine writing a group

	mu      sync.Mutex
	pending []*pendingTx
}

// pendingTx is a transaction waiting for its group.
type pendingTx struct {
	ctx  context.Context
	fn   func(tx *Tx) error
	done chan error
}

// Bounds of a group and of the wait for one.
const (
	maxGroup = 64
	// groupTimeout bounds the wait behind this server's other changes
	// (a large import can take seconds); then the change fails with
	// DatabaseBusy.
	groupTimeout = 10 * time.Second
)

// run queues fn and returns its result once its group has committed (or
// fn failed). The caller that gets the slot writes the group.
func (g *groupCommit) run(ctx context.Context, fn func(tx *Tx) error) error {
	p := &pendingTx{ctx: ctx, fn: fn, done: make(chan error, 1)}
	g.mu.Lock()
	g.pending = append(g.pending, p)
	g.mu.Unlock()
	timer := time.NewTimer(groupTimeout)
	defer timer.Stop()
	for {
		select {
		case err := <-p.done:
			return err
		case g.slot <- struct{}{}:
			g.mu.Lock()
			n := min(len(g.pending), maxGroup)
			group := slices.Clone(g.pending[:n])
			g.pending = slices.Delete(g.pending, 0, n)
			g.mu.Unlock()
			g.write(group)
			<-g.slot
		case <-ctx.Done():
			if g.withdraw(p) {
				return ctx.Err()
			}
			return <-p.done // its group is being written
		case <-timer.C:
			if g.withdraw(p) {
				return g.s.translate(errWriterTimeout)
			}
			return <-p.done
		}
	}
}

// withdraw takes p out of the queue; false when a group already took it.
func (g *groupCommit) withdraw(p *pendingTx) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	i := slices.Index(g.pending, p)
	if i >= 0 {
		g.pending = slices.Delete(g.pending, i, i+1)
	}
	return i >= 0
}

// write runs a group in one transaction and tells each member its result.
// A member's context no longer cancels its queries once the group runs:
// interrupting SQLite inside a transaction would roll back the others too.
func (g *groupCommit) write(group []*pendingTx) {
	if len(group) == 0 {
		return
	}
	s := g.s
	results := make([]error, len(group))
	txs := make([]*Tx, len(group))
	fail := func(err error) {
		for _, p := range group {
			p.done <- err
		}
	}
	sqlTx, err := s.db.BeginTx(context.Background(), nil)
	if err != nil {
		fail(s.translate(err))
		return
	}
	ok := 0
	for i, p := range group {
		if _, err := sqlTx.Exec(`SAVEPOINT member`); err != nil {
			_ = sqlTx.Rollback()
			fail(s.translate(err))
			return
		}
		tx := &Tx{sqlTx: sqlTx, at: Millis(s.now())}
		tx.Q = Q{ctx: context.WithoutCancel(p.ctx), q: sqlTx, s: s, tx: tx}
		if results[i] = s.runTx(tx, p.fn); results[i] != nil {
			if _, err := sqlTx.Exec(`ROLLBACK TO member`); err != nil {
				_ = sqlTx.Rollback()
				// After a full disk or an I/O error SQLite may have rolled
				// the whole transaction back itself (so the savepoint is
				// gone): the group fails with that error, which says why.
				if apierr.IsDatabase(results[i]) {
					err = results[i]
				}
				fail(s.translate(err))
				return
			}
		} else {
			txs[i], ok = tx, ok+1
		}
		if _, err := sqlTx.Exec(`RELEASE member`); err != nil {
			_ = sqlTx.Rollback()
			fail(s.translate(err))
			return
		}
	}
	if ok == 0 {
		_ = sqlTx.Rollback()
	} else if err := sqlTx.Commit(); err != nil {
		fail(s.translate(err))
		return
	}
	for i, p := range group {
		if txs[i] != nil {
			s.committed(txs[i])
		}
		p.done <- results[i]
	}
}
