package frontend

import (
	"slices"
	"sync/atomic"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/wire"
)

// answerCache keeps, per snapshot, the answers to requests that name no
// flags by the outcome they were built for: contexts that differ (other
// users, sessions, addresses) mostly get the same outcome of every flag,
// and its answer is then sent as it was built, not built again. An
// outcome is kept when it is seen a second time, so that outcomes that
// never repeat (percentage rollouts by user) cost no copies, and only
// answers up to answerMaxBytes, so that a snapshot keeps at most
// answerSlots × answerMaxBytes. A kept answer gives way to another
// outcome of its slot only once that one's offers outnumber its own hits
// (counted up to answerCredit): two outcomes that share a slot would
// otherwise replace each other's copy over and over, each time copying a
// whole answer.
type answerCache struct {
	slots [answerSlots]atomic.Pointer[cachedAnswer]
	// seen holds, per slot, the hash of the last outcome that missed.
	seen [answerSlots]atomic.Uint64
}

const (
	answerSlots    = 32
	answerMaxBytes = 128 << 10
	answerCredit   = 8
)

// cachedAnswer is one outcome (ids, withDisabled) and its answer; it
// never changes once stored.
type cachedAnswer struct {
	hash         uint64
	withDisabled bool
	ids          []engine.VariantID
	body         []byte
	etag         wire.ETag
	// credit counts hits, up to answerCredit, less the offers of other
	// outcomes it withstood.
	credit atomic.Int32
}

// get returns the answer kept for the outcome, or nil.
func (c *answerCache) get(hash uint64, ids []engine.VariantID, withDisabled bool) *cachedAnswer {
	a := c.slots[hash%answerSlots].Load()
	if a == nil || a.hash != hash || a.withDisabled != withDisabled || !slices.Equal(a.ids, ids) {
		return nil
	}
	if a.credit.Load() < answerCredit { // read first: hits on one answer share its cache line
		a.credit.Add(1)
	}
	return a
}

// offer keeps a copy of an answer just built when its outcome missed
// before too.
func (c *answerCache) offer(hash uint64, ids []engine.VariantID, withDisabled bool, body []byte, etag wire.ETag) {
	slot := hash % answerSlots
	if len(body) > answerMaxBytes || c.seen[slot].Swap(hash) != hash {
		return
	}
	if kept := c.slots[slot].Load(); kept != nil && kept.credit.Add(-1) >= 0 {
		return
	}
	c.slots[slot].Store(&cachedAnswer{hash: hash, withDisabled: withDisabled, ids: slices.Clone(ids), body: slices.Clone(body), etag: etag})
}
