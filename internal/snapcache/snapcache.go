// Package snapcache keeps what a handler derives from an engine snapshot
// (an answer encoding, usage counters) for the newest few snapshots it
// served, so that a request finds it without a lock and a change builds
// it once.
package snapcache

import (
	"slices"
	"sync/atomic"

	"github.com/bunting-flags/bunting/engine"
)

// Cache keeps values for at most its size of snapshots, newest first.
// It is safe for concurrent use.
type Cache[T any] struct {
	size    int
	entries atomic.Pointer[[]entry[T]]
}

type entry[T any] struct {
	snap  *engine.Snapshot
	value T
}

// New returns a cache for size snapshots (at least one).
func New[T any](size int) *Cache[T] { return &Cache[T]{size: max(size, 1)} }

// Get returns the value of s, built with build the first time s is asked
// for (concurrent first requests may each build it; one value is kept).
// The oldest snapshot's value is dropped when the cache is full.
func (c *Cache[T]) Get(s *engine.Snapshot, build func(*engine.Snapshot) T) T {
	var v T
	built := false
	for {
		cur := c.entries.Load()
		if cur != nil {
			for _, e := range *cur {
				if e.snap == s {
					return e.value
				}
			}
		}
		if !built {
			v, built = build(s), true
		}
		next := []entry[T]{{s, v}}
		if cur != nil {
			next = append(next, (*cur)[:min(len(*cur), c.size-1)]...)
		}
		if c.entries.CompareAndSwap(cur, &next) {
			return v
		}
	}
}

// Forget drops the value of s, a snapshot that will not be served again
// (a server serving one snapshot per token scope replaces them one by
// one, and each kept value holds its snapshot).
func (c *Cache[T]) Forget(s *engine.Snapshot) {
	for {
		cur := c.entries.Load()
		if cur == nil || !slices.ContainsFunc(*cur, func(e entry[T]) bool { return e.snap == s }) {
			return
		}
		next := slices.DeleteFunc(slices.Clone(*cur), func(e entry[T]) bool { return e.snap == s })
		if c.entries.CompareAndSwap(cur, &next) {
			return
		}
	}
}

// Snapshots returns the snapshots whose values are kept, newest first.
func (c *Cache[T]) Snapshots() []*engine.Snapshot {
	cur := c.entries.Load()
	if cur == nil {
		return nil
	}
	out := make([]*engine.Snapshot, len(*cur))
	for i, e := range *cur {
		out[i] = e.snap
	}
	return out
}
