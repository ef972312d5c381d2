package integrations_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestSecretsSealedWithTheServerKey: without INTEGRATION_SECRET_KEY the
// secret parameters are sealed with the server's secrets key (SECRETS_KEY,
// or SQLite's key file), so the database alone does not open them; on
// PostgreSQL without SECRETS_KEY they are sealed with the key kept in the
// database, as before, and still open, and are delivered, once the
// server has a SECRETS_KEY.
func TestSecretsSealedWithTheServerKey(t *testing.T) {
	const auth = "Bearer integration-sekrit-123"
	stored := func(t *testing.T, h *servertest.Harness, id any) string {
		t.Helper()
		var s string
		if err := h.Store.DB().QueryRowContext(context.Background(), `SELECT secrets FROM integrations WHERE id = $1`, fmt.Sprint(id)).Scan(&s); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(s, "sekrit") {
			t.Fatalf("stored in clear: %q", s)
		}
		return s
	}
	boxed := func(s string) bool {
		return strings.HasPrefix(s, "v1:") && !strings.HasPrefix(s, "v1:d:") && !strings.HasPrefix(s, "v1:k:")
	}
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		rc := newReceiver(t, nil)
		var first *servertest.Harness
		if db.Kind == "postgres" {
			first = servertest.Start(t, db, allowLoopback, func(c *server.Config) { c.Secrets.Key = "" })
		} else {
			first = servertest.Start(t, db, allowLoopback)
		}
		addon := createAddon(t, first, webhook(rc.URL, map[string]any{"authorization": auth}, "feature-created"))
		sealed := stored(t, first, addon["id"])
		switch {
		case db.Kind == "postgres" && !strings.HasPrefix(sealed, "v1:d:"):
			t.Fatalf("without SECRETS_KEY on PostgreSQL: %q, want the database key's form", sealed)
		case db.Kind == "sqlite" && !boxed(sealed):
			t.Fatalf("on SQLite: %q, want the server key's form", sealed)
		}
		first.Stop()

		// The same database, now with the server key (SQLite: the same key file).
		h := servertest.Start(t, db, allowLoopback)
		body := webhook(rc.URL, map[string]any{"authorization": "*****"}, "feature-created")
		body["description"] = "moved"
		h.Do(t, "PUT", fmt.Sprintf("/api/admin/addons/%v", addon["id"]), h.AdminToken, body).Want(t, 200)
		if s := stored(t, h, addon["id"]); !boxed(s) {
			t.Errorf("after an update: %q, want the server key's form", s)
		}
		createFlag(t, h, "default", "sealed-delivery")
		hits := rc.waitHits(t, 1, 10*time.Second)
		if got := hits[0].Header.Get("Authorization"); got != auth {
			t.Errorf("delivered with Authorization %q", got)
		}
	})
}
