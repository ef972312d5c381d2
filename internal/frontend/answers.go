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
// answerSlots × answerMaxBytes.
type answerCache struct {
	slots [answerSlots]atomic.Pointer[cachedAnswer]
	// seen holds, per slot, the hash of the last outcome that missed.
	seen [answerSlots]atomic.Uint64
}

const (
	answerSlots    = 32
	answerMaxBytes = 128 << 10
)

// cachedAnswer is one outcome (ids, withDisabled) and its answer; it
// never changes once stored.
type cachedAnswer struct {
	hash         uint64
	withDisabled bool
	ids          []engine.VariantID
	body         []byte
	etag         wire.ETag
}

// get returns the answer kept for the outcome, or nil.
func (c *answerCache) get(hash uint64, ids []engine.VariantID, withDisabled bool) *cachedAnswer {
	a := c.slots[hash%answerSlots].Load()
	if a == nil || a.hash != hash || a.withDisabled != withDisabled || !slices.Equal(a.ids, ids) {
		return nil
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
	c.slots[slot].Store(&cachedAnswer{hash: hash, withDisabled: withDisabled, ids: slices.Clone(ids), body: slices.Clone(body), etag: etag})
}
