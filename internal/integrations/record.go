package integrations

import (
	"context"
	"sync"
	"time"

	"github.com/bunting-flags/bunting/internal/store"
)

// recorder writes the outcomes of the lanes' batches. Batches that arrive
// while another group is being written wait, and the next writer records
// all of them in one transaction (one commit, one log INSERT): with every
// change delivered to several integrations, their lanes finish batches at
// about the same time, and one commit for all costs less than one each
// (PostgreSQL; SQLite's group commit shares the sync but not the work of
// each transaction). A lane waits for its own outcomes to be written
// before it reads its outbox again, so nothing is sent twice for want of
// a record, and it never waits for another lane's sending, only for the
// write that carries both.
type recorder struct {
	// save writes outcomes in one transaction.
	save func(ctx context.Context, outcomes []store.DeliveryOutcome) error
	slot chan struct{} // held by the lane writing a group

	mu      sync.Mutex
	pending []*pendingRecord
}

// pendingRecord is one lane's batch waiting for its group.
type pendingRecord struct {
	outcomes []store.DeliveryOutcome
	done     chan error
}

// recordTimeout bounds the writing of a group.
const recordTimeout = 10 * time.Second

func newRecorder(st *store.Store) *recorder {
	return &recorder{slot: make(chan struct{}, 1), save: func(ctx context.Context, outcomes []store.DeliveryOutcome) error {
		return st.Record(ctx, func(tx *store.Tx) error { return tx.RecordDeliveries(outcomes) })
	}}
}

// record returns once outcomes are written (or could not be). It is not
// cut short by ctx: what was sent must be recorded, so that it is not
// sent again after a restart.
func (r *recorder) record(ctx context.Context, outcomes []store.DeliveryOutcome) error {
	p := &pendingRecord{outcomes: outcomes, done: make(chan error, 1)}
	r.mu.Lock()
	r.pending = append(r.pending, p)
	r.mu.Unlock()
	for {
		select {
		case err := <-p.done:
			return err
		case r.slot <- struct{}{}:
			r.mu.Lock()
			group := r.pending
			r.pending = nil
			r.mu.Unlock()
			r.write(ctx, group)
			<-r.slot
		}
	}
}

// write records a group in one transaction; if that fails, each batch is
// tried alone, so that one batch the database refuses does not hold up
// the other lanes.
func (r *recorder) write(ctx context.Context, group []*pendingRecord) {
	if len(group) == 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	if len(group) > 1 {
		var all []store.DeliveryOutcome
		for _, p := range group {
			all = append(all, p.outcomes...)
		}
		if err := r.saveWithin(ctx, all); err == nil {
			for _, p := range group {
				p.done <- nil
			}
			return
		}
	}
	for _, p := range group {
		p.done <- r.saveWithin(ctx, p.outcomes)
	}
}

// saveWithin is save bounded by recordTimeout.
func (r *recorder) saveWithin(ctx context.Context, outcomes []store.DeliveryOutcome) error {
	ctx, cancel := context.WithTimeout(ctx, recordTimeout)
	defer cancel()
	return r.save(ctx, outcomes)
}
