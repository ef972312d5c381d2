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

// BenchmarkEventSearchInStore measures the store's event search, without
// HTTP, over BUNTING_EVENTS_N events (default 1,000,000) written through
// the store, on SQLite and PostgreSQL: each filter is a sub-benchmark
// reporting p50 and p99 latency. BUNTING_EVENTS_DB=sqlite (or postgres)
// runs one database only.
func BenchmarkEventSearchInStore(b *testing.B) {
	n, _ := strconv.Atoi(os.Getenv("BUNTING_EVENTS_N"))
	if n <= 0 {
		n = 1_000_000
	}
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			if only := os.Getenv("BUNTING_EVENTS_DB"); only != "" && only != kind {
				b.Skip("BUNTING_EVENTS_DB selects " + only)
			}
			db := servertest.NewSQLite(b)
			if kind == "postgres" {
				db = servertest.NewPostgres(b)
			}
			st := servertest.OpenStore(b, db)
			start := time.Now()
			seedEvents(b, st, n)
			b.Logf("seeded %d events in %v", n, time.Since(start))
			// Vacuum and refresh statistics, as autovacuum does after a bulk load.
			if kind == "postgres" {
				if _, err := st.DB().Exec(`VACUUM ANALYZE`); err != nil {
					b.Fatal(err)
				}
			}
			filters := []struct {
				name string
				f    store.EventFilter
			}{
				{"none", store.EventFilter{Limit: 100}},
				{"type", store.EventFilter{Type: "feature-created", Limit: 100}},
				{"project", store.EventFilter{Project: "project-7", Limit: 100}},
				{"feature", store.EventFilter{Feature: "flag-4242", Limit: 100}},
				{"query", store.EventFilter{Query: "user3", Limit: 100}},
				{"query-rare", store.EventFilter{Query: "flag-4242", Limit: 100}},
				{"type+project", store.EventFilter{Type: "feature-updated", Project: "project-3", Limit: 100}},
				{"offset", store.EventFilter{Type: "feature-created", Limit: 100, Offset: 5000}},
			}
			for _, f := range filters {
				b.Run(f.name, func(b *testing.B) {
					lat := make([]time.Duration, 0, b.N)
					for b.Loop() {
						s := time.Now()
						if _, _, err := st.Q(context.Background()).Events(f.f); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(s))
					}
					slices.Sort(lat)
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
				})
			}
		})
	}
}
