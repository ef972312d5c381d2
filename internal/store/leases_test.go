package store_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

// A lease is held by one holder at a time until it expires or is given
// up, whatever its name: one no migration wrote is made on first use.
func TestLeases(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		q := servertest.OpenStore(t, db).Q(context.Background())
		want := func(what string, got bool, err error, want bool) {
			t.Helper()
			if err != nil || got != want {
				t.Fatalf("%s: %v %v, want %v", what, got, err, want)
			}
		}
		holder := func(want string) {
			t.Helper()
			if got, err := q.LeaseHolder("job"); err != nil || got != want {
				t.Fatalf("holder: %q %v, want %q", got, err, want)
			}
		}
		holder("")
		soon := time.Now().Add(time.Minute)
		ok, err := q.AcquireLease("job", "a", soon)
		want("a takes a new lease", ok, err, true)
		holder("a")
		ok, err = q.AcquireLease("job", "b", soon)
		want("b takes a's running lease", ok, err, false)
		ok, err = q.AcquireLease("other", "b", soon)
		want("b takes another lease", ok, err, true)
		ok, err = q.AcquireLease("job", "a", soon.Add(time.Minute))
		want("a renews", ok, err, true)
		if err := q.ReleaseLease("job", "b"); err != nil {
			t.Fatal(err)
		}
		holder("a")
		if err := q.ReleaseLease("job", "a"); err != nil {
			t.Fatal(err)
		}
		holder("")
		ok, err = q.AcquireLease("job", "b", time.Now().Add(-time.Second))
		want("b takes the given-up lease", ok, err, true)
		holder("") // already expired
		ok, err = q.AcquireLease("job", "a", soon)
		want("a takes b's expired lease", ok, err, true)
		holder("a")
	})
}

// The migration to one leases table keeps who held the three workers'
// leases (each then had a table of its own).
func TestLeaseMigrationKeepsHolders(t *testing.T) {
	for _, db := range []servertest.Database{servertest.NewSQLite(t), servertest.NewEmptyPostgres(t)} {
		t.Run(db.Kind, func(t *testing.T) {
			driver, dsn := "sqlite", db.Path
			if db.Kind == "postgres" {
				driver, dsn = "pgx", db.URL
			}
			raw, err := sql.Open(driver, dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			ctx := context.Background()
			if err := store.MigrateUpTo(ctx, raw, db.Kind, 700); err != nil {
				t.Fatal(err)
			}
			until := time.Now().Add(time.Hour).UnixMilli()
			for _, stmt := range []string{
				`UPDATE signal_processing_lease SET holder = 'signals-holder', expires_at = $1`,
				`UPDATE integration_lease SET holder = 'deliveries-holder', expires_at = $1`,
				`UPDATE change_request_lease SET holder = 'schedules-holder', expires_at = $1`,
			} {
				if _, err := raw.Exec(stmt, until); err != nil {
					t.Fatal(err)
				}
			}
			q := servertest.OpenStore(t, db).Q(ctx)
			for name, want := range map[string]string{"actions": "signals-holder", "deliveries": "deliveries-holder", "schedules": "schedules-holder"} {
				if got, err := q.LeaseHolder(name); err != nil || got != want {
					t.Errorf("lease %s: held by %q (%v), want %q", name, got, err, want)
				}
			}
		})
	}
}
