package integrations

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/store"
)

// TestRecorderSharesAndIsolates: batches that arrive while a group is
// being written are written together next, in one call; when that call
// fails, each is written alone, so only the batch that cannot be written
// fails.
func TestRecorderSharesAndIsolates(t *testing.T) {
	var (
		mu    sync.Mutex
		calls [][]int64 // the outbox ids of each call to save
	)
	first := make(chan struct{})
	release := make(chan struct{})
	r := &recorder{slot: make(chan struct{}, 1), save: func(_ context.Context, outcomes []store.DeliveryOutcome) error {
		var ids []int64
		for _, o := range outcomes {
			ids = append(ids, o.OutboxID)
		}
		mu.Lock()
		calls = append(calls, ids)
		n := len(calls)
		mu.Unlock()
		if n == 1 {
			close(first)
			<-release // the other batches queue meanwhile
		}
		if slices.Contains(ids, 666) {
			return errors.New("refused")
		}
		return nil
	}}
	batch := func(ids ...int64) []store.DeliveryOutcome {
		var out []store.DeliveryOutcome
		for _, id := range ids {
			out = append(out, store.DeliveryOutcome{OutboxID: id, Done: true})
		}
		return out
	}
	ctx := context.Background()
	results := make(chan error, 1)
	go func() { results <- r.record(ctx, batch(1, 2)) }()
	<-first
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i, b := range [][]store.DeliveryOutcome{batch(3), batch(666), batch(4, 5)} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.record(ctx, b)
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r.mu.Lock()
		n := len(r.pending)
		r.mu.Unlock()
		if n == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d batches waiting, want 3", n)
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := <-results; err != nil {
		t.Fatalf("first batch: %v", err)
	}
	wg.Wait()
	if errs[0] != nil || errs[1] == nil || errs[2] != nil {
		t.Errorf("results %v, want only the second batch refused", errs)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 5 || len(calls[1]) != 4 {
		t.Fatalf("calls %v, want [1 2], the three queued batches together, then each alone", calls)
	}
	alone := slices.Clone(calls[2:])
	slices.SortFunc(alone, func(a, b []int64) int { return int(a[0] - b[0]) })
	if !slices.Equal(calls[0], []int64{1, 2}) || len(alone[0]) != 1 || alone[0][0] != 3 || len(alone[1]) != 2 || alone[2][0] != 666 {
		t.Errorf("calls %v", calls)
	}
}
