package serverbench

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// eventsToLoad is how many events BenchmarkEventSearch loads
// (BUNTING_EVENTS_N, default 1,000,000).
func eventsToLoad() int {
	if n, err := strconv.Atoi(os.Getenv("BUNTING_EVENTS_N")); err == nil && n > 0 {
		return n
	}
	return 1_000_000
}

// BenchmarkEventSearch loads a million events straight into the database
// (SQL, for setup speed: 5 types, 20 projects, 5,000 flags, 37 creators),
// rebuilds the search tables the way the migration does, then sends
// POST /api/admin/events/search with each filter and reports p50 and p99
// latency over HTTP.
func BenchmarkEventSearch(b *testing.B) {
	n := eventsToLoad()
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			db := servertest.NewSQLite(b)
			if kind == "postgres" {
				db = servertest.NewPostgres(b)
			}
			h := servertest.Start(b, db)
			start := time.Now()
			bulkLoadEvents(b, h, kind, n)
			b.Logf("loaded %d events in %v", n, time.Since(start).Round(time.Millisecond))
			filters := []struct {
				name string
				body map[string]any
			}{
				{"none", map[string]any{}},
				{"type", map[string]any{"type": "feature-created"}},
				{"project", map[string]any{"project": "project-7"}},
				{"feature", map[string]any{"feature": "flag-4242"}},
				{"type+project", map[string]any{"type": "feature-updated", "project": "project-3"}},
				{"query-common", map[string]any{"query": "user3"}},
				{"query-rare", map[string]any{"query": "flag-4242"}},
				{"offset", map[string]any{"type": "feature-created", "offset": 5000}},
			}
			for _, f := range filters {
				b.Run(f.name, func(b *testing.B) {
					lat := make([]time.Duration, 0, b.N)
					for i := 0; i < b.N; i++ {
						t0 := time.Now()
						h.Do(b, "POST", "/api/admin/events/search", h.AdminToken, f.body).Want(b, 200)
						lat = append(lat, time.Since(t0))
					}
					slices.Sort(lat)
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Microseconds())/1000, "p99-ms")
				})
			}
		})
	}
}

// bulkLoadEvents inserts n synthetic events with one SQL statement, then
// rebuilds event_counts (and SQLite's trigram index) from them.
func bulkLoadEvents(b *testing.B, h *servertest.Harness, kind string, n int) {
	b.Helper()
	now := time.Now().UnixMilli()
	cols := `type, created_by, created_by_user_id, created_at, data, pre_data, tags, feature_name, project, environment`
	var stmts []string
	if kind == "sqlite" {
		stmts = []string{
			fmt.Sprintf(`WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < %d)
			INSERT INTO events (%s) SELECT
				CASE i %% 5 WHEN 0 THEN 'feature-created' WHEN 1 THEN 'feature-updated' WHEN 2 THEN 'feature-environment-enabled'
					WHEN 3 THEN 'feature-environment-disabled' ELSE 'feature-strategy-add' END,
				'user' || (i %% 37), i %% 37, %d - (%d - i) * 1000,
				'{"name":"flag-' || (i %% 5000) || '","n":' || i || '}', NULL, '[]',
				'flag-' || (i %% 5000), 'project-' || (i %% 20), 'production'
			FROM seq`, n, cols, now, n),
			`INSERT INTO events_fts (rowid, body) SELECT id, type || ' ' || created_by || ' ' || COALESCE(data, '') || ' ' || COALESCE(pre_data, '') || ' ' || tags FROM events`,
		}
	} else {
		stmts = []string{fmt.Sprintf(`INSERT INTO events (%s) SELECT
				(ARRAY['feature-created','feature-updated','feature-environment-enabled','feature-environment-disabled','feature-strategy-add'])[i %% 5 + 1],
				'user' || (i %% 37), i %% 37, %d - (%d - i) * 1000,
				'{"name":"flag-' || (i %% 5000) || '","n":' || i || '}', NULL, '[]',
				'flag-' || (i %% 5000), 'project-' || (i %% 20), 'production'
			FROM generate_series(1, %d) AS i`, cols, now, n, n),
			`ANALYZE events`,
		}
	}
	stmts = append(stmts, `DELETE FROM event_counts`,
		`INSERT INTO event_counts (type, project, feature_name, n)
			SELECT type, COALESCE(project, ''), COALESCE(feature_name, ''), COUNT(*) FROM events
			GROUP BY type, COALESCE(project, ''), COALESCE(feature_name, '')`)
	for _, s := range stmts {
		if _, err := h.Store.DB().Exec(s); err != nil {
			b.Fatalf("bulk load: %v\n%s", err, s)
		}
	}
}
