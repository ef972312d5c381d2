package proxy

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/bunting-flags/bunting/engine"
)

// ToggleCount is the usage of one flag in a metrics bucket.
type ToggleCount struct {
	Yes      int64            `json:"yes"`
	No       int64            `json:"no"`
	Variants map[string]int64 `json:"variants"`
}

// Bucket is the usage collected between two metrics posts, in the
// client-metrics format.
type Bucket struct {
	Start   time.Time               `json:"start"`
	Stop    time.Time               `json:"stop"`
	Toggles map[string]*ToggleCount `json:"toggles"`
}

// Empty reports whether the bucket holds no counts.
func (b *Bucket) Empty() bool { return len(b.Toggles) == 0 }

func (b *Bucket) toggle(name string) *ToggleCount {
	t := b.Toggles[name]
	if t == nil {
		t = &ToggleCount{Variants: map[string]int64{}}
		// A clone: name may be a slice of a request body that the
		// bucket must not keep alive.
		b.Toggles[strings.Clone(name)] = t
	}
	return t
}

// add merges counts into the bucket.
func (b *Bucket) add(name string, yes, no int64, variants map[string]int64) {
	t := b.toggle(name)
	t.Yes = saturatingAdd(t.Yes, yes)
	t.No = saturatingAdd(t.No, no)
	for v, n := range variants {
		t.Variants[v] = saturatingAdd(t.Variants[v], n)
	}
}

// saturatingAdd adds two counts (never negative), stopping at the largest
// int64: SDKs may post any count, and a sum that wrapped around to a
// negative number would make upstream refuse the whole bucket.
func saturatingAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// nowMillis is the current UTC time at millisecond precision, as the
// reference SDKs write bucket times.
func nowMillis() time.Time { return time.Now().UTC().Truncate(time.Millisecond) }

// Usage counts flag evaluations for the upstream metrics post. Recording
// is cheap and lock-light: each snapshot gets sharded counters indexed by
// flag position, so a request touches plain integers under an uncontended
// shard lock. Usage is safe for concurrent use.
type Usage struct {
	now func() time.Time

	mu        sync.Mutex
	start     time.Time
	extra     Bucket // SDK posts and restored buckets, by flag name
	snapshots []*snapshotUsage
	// keep is how many idle snapshot counters survive a flush (the newest
	// ones, which the evaluation handler may still hand out); 0 means
	// keepSnapshots.
	keep int
}

// NewUsage returns an empty usage counter.
func NewUsage() *Usage {
	u := &Usage{now: nowMillis}
	u.start = u.now()
	u.extra.Toggles = map[string]*ToggleCount{}
	return u
}

// snapshotUsage holds the counters of one snapshot.
type snapshotUsage struct {
	snap   *engine.Snapshot
	shards []usageShard
}

type usageShard struct {
	mu      sync.Mutex
	dirty   bool
	yes, no []uint32
	// wholes counts the evaluations of every flag at once (recordIDs), and
	// wholeYes[i] how many of them had flag i on; the others were off.
	wholes   uint32
	wholeYes []uint32
	// variants[id] counts how often variant id was the outcome, of an
	// evaluation of every flag or of a toggle list; the variant belongs to
	// flag Snapshot.VariantFlag(id) (the shared disabled variants' counts,
	// at 0 and 1, are not used).
	variants []uint32
	_        [64]byte // keep shards on separate cache lines
}

// Counter returns a new counter of the evaluations served from s, drained
// by the next Flush; the evaluation handler asks for one per snapshot
// (FrontendOptions.Counter).
func (u *Usage) Counter(s *engine.Snapshot) UsageCounter { return u.forSnapshot(s) }

func (u *Usage) forSnapshot(s *engine.Snapshot) *snapshotUsage {
	n := 2 * runtime.GOMAXPROCS(0)
	su := &snapshotUsage{snap: s, shards: make([]usageShard, n)}
	for i := range su.shards {
		sh := &su.shards[i]
		sh.yes = make([]uint32, s.Len())
		sh.no = make([]uint32, s.Len())
		sh.wholeYes = make([]uint32, s.Len())
		sh.variants = make([]uint32, s.VariantCount())
	}
	u.mu.Lock()
	u.snapshots = append(u.snapshots, su)
	u.mu.Unlock()
	return su
}

// lock takes a free shard, starting at a random one.
func (su *snapshotUsage) lock() *usageShard {
	n := len(su.shards)
	i := int(rand.Uint32()) % n
	for range n {
		sh := &su.shards[i]
		if sh.mu.TryLock() {
			return sh
		}
		i = (i + 1) % n
	}
	sh := &su.shards[i]
	sh.mu.Lock()
	return sh
}

// Record counts results; only Found results are counted here.
func (su *snapshotUsage) Record(results []engine.Result) {
	sh := su.lock()
	sh.dirty = true
	for i := range results {
		r := &results[i]
		if r.Index < 0 || r.Index >= len(sh.yes) {
			continue
		}
		if r.Enabled {
			sh.yes[r.Index]++
		} else {
			sh.no[r.Index]++
		}
		if v := r.Variant; v != nil && v.Enabled && v.ID >= 0 && v.ID < len(sh.variants) {
			sh.variants[v.ID]++
		}
	}
	sh.mu.Unlock()
}

// RecordIDs counts the outcomes of EvaluateAllIDs: ids[i] is flag i's.
func (su *snapshotUsage) RecordIDs(ids []engine.VariantID) {
	sh := su.lock()
	sh.dirty = true
	sh.wholes++
	yes, variants := sh.wholeYes[:len(ids)], sh.variants
	// Counting every outcome without a branch on it: which flags are on
	// changes from flag to flag, a branch would mostly be mispredicted.
	for i, id := range ids {
		var on uint32
		if id != engine.OffVariantID {
			on = 1
		}
		yes[i] += on
		variants[id]++
	}
	sh.mu.Unlock()
}

// drain moves the counters into b and reports whether any were set.
func (su *snapshotUsage) drain(b *Bucket) bool {
	touched := false
	for i := range su.shards {
		sh := &su.shards[i]
		sh.mu.Lock()
		if sh.dirty {
			touched = true
			sh.dirty = false
			for idx := range sh.yes {
				y, n := sh.yes[idx]+sh.wholeYes[idx], sh.no[idx]+sh.wholes-sh.wholeYes[idx]
				if y != 0 || n != 0 {
					t := b.toggle(su.snap.Name(idx))
					t.Yes += int64(y)
					t.No += int64(n)
					sh.yes[idx], sh.no[idx], sh.wholeYes[idx] = 0, 0, 0
				}
			}
			sh.wholes = 0
			for id, n := range sh.variants {
				if flag := su.snap.VariantFlag(id); n != 0 && flag >= 0 {
					b.toggle(su.snap.Name(flag)).Variants[su.snap.Variant(id).Name] += int64(n)
				}
				sh.variants[id] = 0
			}
		}
		sh.mu.Unlock()
	}
	return touched
}

// Add merges counts posted by an SDK. Every name becomes an entry of the
// next upstream post, so callers pass only names of flags they serve (the
// proxy drops the others; see addSDKUsage). Counts saturate at the largest
// int64.
func (u *Usage) Add(name string, yes, no int64, variants map[string]int64) {
	u.mu.Lock()
	u.extra.add(name, yes, no, variants)
	u.mu.Unlock()
}

// keepSnapshots is how many idle snapshot counters survive a flush.
const keepSnapshots = 8

func (u *Usage) keepIdle() int {
	if u.keep > 0 {
		return u.keep
	}
	return keepSnapshots
}

// Flush returns the counts collected since the last flush and starts a
// new bucket.
func (u *Usage) Flush() Bucket {
	u.mu.Lock()
	defer u.mu.Unlock()
	b := u.extra
	b.Stop = u.now()
	b.Start = u.start
	u.extra = Bucket{Toggles: map[string]*ToggleCount{}}
	u.start = b.Stop
	kept := u.snapshots[:0]
	for i, su := range u.snapshots {
		touched := su.drain(&b)
		if touched || i >= len(u.snapshots)-u.keepIdle() {
			kept = append(kept, su)
		}
	}
	clear(u.snapshots[len(kept):])
	u.snapshots = kept
	return b
}

// Restore puts back a bucket whose post failed, so its counts go with the
// next one; the bucket's start becomes the start of the current one.
func (u *Usage) Restore(b Bucket) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for name, t := range b.Toggles {
		u.extra.add(name, t.Yes, t.No, t.Variants)
	}
	if !b.Start.IsZero() && b.Start.Before(u.start) {
		u.start = b.Start
	}
}
