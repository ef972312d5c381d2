package integrations_test

import (
	"context"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

// The delivery log is bounded: rows older than the retention go, and each
// integration keeps at most its newest count rows.
func TestDeliveryLogRetention(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		st := servertest.OpenStore(t, db)
		ctx := context.Background()
		now := time.Now()
		var ids [2]int64
		err := st.Tx(ctx, func(tx *store.Tx) error {
			for i := range ids {
				id, err := tx.InsertIntegration(store.Integration{Provider: "webhook", Enabled: true, CreatedAt: now})
				if err != nil {
					return err
				}
				ids[i] = id
			}
			return tx.Event(store.NewEvent{Type: "addon-config-created", Actor: store.Actor{Name: "t"}})
		})
		if err != nil {
			t.Fatal(err)
		}
		err = st.Record(ctx, func(tx *store.Tx) error {
			for i := range 30 {
				at := now.Add(-time.Duration(30-i) * time.Hour) // 30 h ago … 1 h ago
				for _, id := range ids {
					if err := tx.InsertDeliveryAttempt(store.DeliveryAttempt{IntegrationID: id, DeliveryID: "msg", Attempt: 1,
						State: "success", StateDetails: "ok", CreatedAt: at}); err != nil {
						return err
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		// Keep one day and at most 10 rows each: the 10 newest remain.
		err = st.Record(ctx, func(tx *store.Tx) error {
			_, err := tx.PruneDeliveryLog(now.Add(-24*time.Hour), 10)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			rows, err := st.Q(ctx).DeliveryAttempts(id, 100, 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 10 || rows[9].CreatedAt.Before(now.Add(-11*time.Hour)) {
				t.Fatalf("integration %d keeps %d rows, oldest %v", id, len(rows), rows[len(rows)-1].CreatedAt)
			}
		}
		// Age alone: keep 100, but nothing older than 5 h.
		err = st.Record(ctx, func(tx *store.Tx) error {
			_, err := tx.PruneDeliveryLog(now.Add(-5*time.Hour-time.Minute), 100)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if rows, _ := st.Q(ctx).DeliveryAttempts(ids[0], 100, 0); len(rows) != 5 {
			t.Fatalf("after the age limit: %d rows", len(rows))
		}
	})
}
