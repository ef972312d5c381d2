package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

// TestRecordDeliveries records more outcomes than one statement carries,
// finished and to be retried, with a log row each: the finished outbox
// rows go, the others wait with one more attempt, and the log has every
// row in the outcomes' order.
func TestRecordDeliveries(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		st := servertest.OpenStore(t, db)
		ctx := context.Background()
		var id int64
		err := st.Tx(ctx, func(tx *store.Tx) (err error) {
			id, err = tx.InsertIntegration(store.Integration{Provider: "webhook", Enabled: true, Events: []string{"feature-created"}, CreatedAt: time.Now()})
			if err != nil {
				return err
			}
			if err := tx.Event(store.NewEvent{Type: "addon-config-created", Actor: store.Actor{Name: "t"}}); err != nil {
				return err
			}
			for range 250 {
				if err := tx.Event(store.NewEvent{Type: "feature-created", Actor: store.Actor{Name: "t"}, FeatureName: "f", Project: "default"}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		batch, err := st.Q(ctx).Deliveries(id, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(batch) != 250 {
			t.Fatalf("%d deliveries, want 250", len(batch))
		}
		retryAt := time.Now().Add(time.Hour).Truncate(time.Millisecond)
		outcomes := make([]store.DeliveryOutcome, len(batch))
		for i, d := range batch {
			eventID := d.Event.ID
			o := store.DeliveryOutcome{OutboxID: d.ID, Done: i%7 != 3, Log: store.DeliveryAttempt{IntegrationID: id,
				DeliveryID: store.DeliveryID(eventID, id), EventID: &eventID, Attempt: 1, State: "success",
				StateDetails: "Delivered.", Details: []byte(`{"n":1}`), CreatedAt: time.Now()}}
			if !o.Done {
				o.RetryAt, o.Log.State = retryAt, "failed"
			}
			outcomes[i] = o
		}
		if err := st.Record(ctx, func(tx *store.Tx) error { return tx.RecordDeliveries(outcomes) }); err != nil {
			t.Fatal(err)
		}
		left, err := st.Q(ctx).Deliveries(id, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var want []int64
		for _, o := range outcomes {
			if !o.Done {
				want = append(want, o.OutboxID)
			}
		}
		if len(left) != len(want) {
			t.Fatalf("%d outbox rows left, want %d", len(left), len(want))
		}
		for i, d := range left {
			if d.ID != want[i] || d.Attempts != 1 || !d.NextAttemptAt.Equal(retryAt) {
				t.Errorf("left %d: id %d attempts %d next %s, want id %d attempts 1 next %s", i, d.ID, d.Attempts, d.NextAttemptAt, want[i], retryAt)
			}
		}
		log, err := st.Q(ctx).DeliveryAttempts(id, 1000, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(log) != len(outcomes) {
			t.Fatalf("%d log rows, want %d", len(log), len(outcomes))
		}
		for i, a := range log { // newest first
			o := outcomes[len(outcomes)-1-i]
			if a.DeliveryID != o.Log.DeliveryID || a.State != o.Log.State || *a.EventID != *o.Log.EventID || string(a.Details) != `{"n":1}` {
				t.Errorf("log row %d: %s %s event %d %s, want %s %s event %d", i, a.DeliveryID, a.State, *a.EventID, a.Details, o.Log.DeliveryID, o.Log.State, *o.Log.EventID)
			}
		}
	})
}
