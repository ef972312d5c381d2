package store_test

import (
	"context"
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

// BenchmarkRecordDeliveries writes the outcomes of a lane's batch of 100
// successful deliveries (outbox rows removed, log rows written) in one
// bookkeeping transaction, on SQLite and PostgreSQL.
func BenchmarkRecordDeliveries(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			db := servertest.NewSQLite(b)
			if kind == "postgres" {
				db = servertest.NewPostgres(b)
			}
			benchRecordDeliveries(b, db)
		})
	}
}

func benchRecordDeliveries(b *testing.B, db servertest.Database) {
	st := servertest.OpenStore(b, db)
	ctx := context.Background()
	var id int64
	err := st.Tx(ctx, func(tx *store.Tx) (err error) {
		id, err = tx.InsertIntegration(store.Integration{Provider: "webhook", Enabled: true, CreatedAt: time.Now()})
		if err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "addon-config-created", Actor: store.Actor{Name: "b"}})
	})
	if err != nil {
		b.Fatal(err)
	}
	details, _ := json.Marshal(map[string]any{"deliveryId": "msg_1_1", "attempt": 1, "target": "https://example.com", "statusCode": 204, "durationMs": 1})
	var cpu time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		err := st.Tx(ctx, func(tx *store.Tx) error {
			for range 100 {
				if err := tx.Event(store.NewEvent{Type: "feature-created", Actor: store.Actor{Name: "b"}, FeatureName: "f", Project: "default"}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		batch, err := st.Q(ctx).Deliveries(id, 100)
		if err != nil || len(batch) != 100 {
			b.Fatalf("%d deliveries, %v", len(batch), err)
		}
		outcomes := make([]store.DeliveryOutcome, len(batch))
		for i, d := range batch {
			eventID := d.Event.ID
			outcomes[i] = store.DeliveryOutcome{OutboxID: d.ID, Done: true, Log: store.DeliveryAttempt{IntegrationID: id,
				DeliveryID: store.DeliveryID(eventID, id), EventID: &eventID, Attempt: 1, State: "success",
				StateDetails: "Delivered: the receiver answered 204.", Details: details, CreatedAt: time.Now()}}
		}
		b.StartTimer()
		before := cpuTime()
		if err := st.Record(ctx, func(tx *store.Tx) error { return tx.RecordDeliveries(outcomes) }); err != nil {
			b.Fatal(err)
		}
		cpu += cpuTime() - before
	}
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/batch")
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(100*b.N), "µs/delivery")
}

// cpuTime is the user+system CPU this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
