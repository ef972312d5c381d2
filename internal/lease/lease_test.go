package lease_test

import (
	"context"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/lease"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// Two instances keep one lease: one holds it; the other takes it when the
// first gives it up, and the first then learns it lost it.
func TestKeep(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		ctx := context.Background()
		st := servertest.OpenStore(t, db)
		a := lease.New(st, nil, "test", time.Minute)
		b := lease.New(st, nil, "test", time.Minute)
		keep := func(l *lease.Lease, every time.Duration, wantHeld bool, wantChange lease.Change) {
			t.Helper()
			if held, change := l.Keep(ctx, every); held != wantHeld || change != wantChange {
				t.Fatalf("Keep: %v %v, want %v %v", held, change, wantHeld, wantChange)
			}
		}
		keep(a, time.Hour, true, lease.Gained)
		keep(b, time.Hour, false, lease.Unchanged)
		keep(a, time.Hour, true, lease.Unchanged) // not tried again within an hour
		if holder, err := st.Q(ctx).LeaseHolder("test"); err != nil || holder != a.Instance() {
			t.Fatalf("holder %q %v, want a (%s)", holder, err, a.Instance())
		}
		a.Release()
		keep(b, time.Hour, true, lease.Gained)
		keep(a, 0, false, lease.Unchanged)
		if ok, err := a.Acquire(ctx); ok || err != nil {
			t.Fatalf("a took b's lease: %v %v", ok, err)
		}
		b.Release()
		keep(a, 0, true, lease.Gained)
		keep(b, 0, false, lease.Unchanged)
		if _, err := st.DB().Exec(`UPDATE leases SET holder = $1 WHERE name = 'test'`, b.Instance()); err != nil {
			t.Fatal(err)
		}
		keep(a, 0, false, lease.Lost)
	})
}
