package store_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

// seedEvents writes n events spread over 50 types, 20 projects and 5,000
// flags, in large transactions.
func seedEvents(b testing.TB, st *store.Store, n int) {
	b.Helper()
	types := []string{"feature-created", "feature-updated", "feature-environment-enabled", "feature-environment-disabled", "feature-strategy-add"}
	const batch = 20000
	for done := 0; done < n; done += batch {
		err := st.Tx(context.Background(), func(tx *store.Tx) error {
			for i := done; i < min(n, done+batch); i++ {
				err := tx.Event(store.NewEvent{Type: types[i%len(types)], Actor: store.Actor{Name: "user" + strconv.Itoa(i%37)},
					FeatureName: "flag-" + strconv.Itoa(i%5000), Project: "project-" + strconv.Itoa(i%20), Environment: "production",
					Data: map[string]any{"name": "flag-" + strconv.Itoa(i%5000), "n": i}})
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// TestEventSearchLatency measures search latency over many events. It runs
// only with BUNTING_EVENTS_N set (for example 1000000), as a measurement.
func TestEventSearchLatency(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("BUNTING_EVENTS_N"))
	if n == 0 {
		t.Skip("set BUNTING_EVENTS_N to measure event search")
	}
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		if only := os.Getenv("BUNTING_EVENTS_DB"); only != "" && only != db.Kind {
			t.Skip("BUNTING_EVENTS_DB selects " + only)
		}
		st := servertest.OpenStore(t, db)
		start := time.Now()
		seedEvents(t, st, n)
		t.Logf("seeded %d events in %v", n, time.Since(start))
		// Vacuum and refresh statistics, as autovacuum does after a bulk load.
		if db.Kind == "postgres" {
			if _, err := st.DB().Exec(`VACUUM ANALYZE`); err != nil {
				t.Fatal(err)
			}
		}
		filters := map[string]store.EventFilter{
			"none":         {Limit: 100},
			"type":         {Type: "feature-created", Limit: 100},
			"project":      {Project: "project-7", Limit: 100},
			"feature":      {Feature: "flag-4242", Limit: 100},
			"query":        {Query: "user3", Limit: 100},
			"query-rare":   {Query: "flag-4242", Limit: 100},
			"type+project": {Type: "feature-updated", Project: "project-3", Limit: 100},
			"offset":       {Type: "feature-created", Limit: 100, Offset: 5000},
		}
		for name, f := range filters {
			var lat []time.Duration
			for range 30 {
				s := time.Now()
				if _, _, err := st.Q(context.Background()).Events(f); err != nil {
					t.Fatal(err)
				}
				lat = append(lat, time.Since(s))
			}
			slices.Sort(lat)
			t.Logf("%-13s p50 %8v p99 %8v", name, lat[len(lat)/2], lat[len(lat)*99/100])
		}
	})
}
