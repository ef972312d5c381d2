package harness

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

// PostgresURL is the server the compatibility tests create their databases
// on: BUNTING_COMPAT_POSTGRES_URL, else TEST_POSTGRES_URL (set by .ci/run),
// else the machine's 127.0.0.1:5432 as user postgres.
func PostgresURL() string {
	for _, name := range []string{"BUNTING_COMPAT_POSTGRES_URL", "TEST_POSTGRES_URL"} {
		if v := os.Getenv(name); v != "" {
			return v
		}
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

// CreateDatabase creates a fresh, uniquely named database and drops it when
// the test ends. It returns the URL of the new database (with the query of
// the server URL, e.g. sslmode).
func CreateDatabase(t testing.TB, prefix string) string {
	t.Helper()
	admin := PostgresURL()
	db, err := sql.Open("pgx", admin)
	if err != nil {
		t.Fatalf("postgres %s: %v", redact(admin), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		t.Fatalf("PostgreSQL is not reachable at %s (the Unleash server needs it): %v", redact(admin), err)
	}
	name := prefix + "_" + randomHex(6)
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		db.Close()
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("postgres url: %v", err)
	}
	u.Path = "/" + name
	return u.String()
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}
