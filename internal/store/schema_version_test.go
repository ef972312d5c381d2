package store_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

// knownVersions reads the migration versions this build embeds, from the
// files themselves.
func knownVersions(t *testing.T) (map[int64]bool, int64) {
	t.Helper()
	entries, err := os.ReadDir("migrations/sqlite")
	if err != nil {
		t.Fatal(err)
	}
	known, highest := map[int64]bool{}, int64(0)
	for _, e := range entries {
		if v, err := goose.NumericComponent(e.Name()); err == nil && strings.HasSuffix(e.Name(), ".sql") {
			known[v] = true
			highest = max(highest, v)
		}
	}
	return known, highest
}

// A database a newer Bunting migrated (a goose version this binary lacks,
// above its highest or in a gap below it) is refused at start with a
// message naming both versions, on both databases; it is left as it was.
func TestNewerSchemaIsRefused(t *testing.T) {
	known, highest := knownVersions(t)
	gap := int64(1)
	for known[gap] {
		gap++
	}
	if gap > highest {
		t.Fatalf("no gap below %d to test with", highest)
	}
	for _, c := range []struct {
		name    string
		version int64
		wantDB  int64
	}{
		{"above", highest + 1, highest + 1},
		{"gap", gap, highest},
	} {
		t.Run(c.name, func(t *testing.T) {
			servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
				st := servertest.OpenStore(t, db)
				if _, err := st.DB().Exec(`INSERT INTO goose_db_version (version_id, is_applied) VALUES ($1, true)`, c.version); err != nil {
					t.Fatal(err)
				}
				st.Close()

				_, err := store.Open(context.Background(), store.Config{URL: db.URL, Path: db.Path})
				var newer *store.NewerSchemaError
				if !errors.As(err, &newer) {
					t.Fatalf("opening a database with schema version %d (this binary knows up to %d): %v", c.version, highest, err)
				}
				if newer.Database != c.wantDB || newer.Binary != highest || len(newer.Unknown) != 1 || newer.Unknown[0] != c.version {
					t.Fatalf("error fields %+v", newer)
				}
				msg := err.Error()
				for _, want := range []string{"newer Bunting", fmt.Sprintf("%05d", c.wantDB), fmt.Sprintf("%05d", highest), fmt.Sprintf("%05d", c.version)} {
					if !strings.Contains(msg, want) {
						t.Errorf("the message lacks %q: %s", want, msg)
					}
				}
			})
		})
	}
}
