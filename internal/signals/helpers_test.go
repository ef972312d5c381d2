package signals_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// fastRate lets tests post many signals in a row.
var fastRate servertest.Option = func(c *server.Config) { c.Signals.RatePerSecond = 1000 }

// endpoint creates a signal endpoint and one token, returning the
// endpoint's id and the token's secret.
func endpoint(t testing.TB, h *servertest.Harness, name string) (int64, string) {
	t.Helper()
	var e struct{ ID int64 }
	h.Do(t, "POST", "/api/admin/signal-endpoints", h.AdminToken, map[string]any{"name": name}).Want(t, 201).JSON(t, &e)
	var tok struct{ Token string }
	h.Do(t, "POST", fmt.Sprintf("/api/admin/signal-endpoints/%d/tokens", e.ID), h.AdminToken, map[string]any{"name": name + "-token"}).
		Want(t, 201).JSON(t, &tok)
	if e.ID == 0 || tok.Token == "" {
		t.Fatalf("endpoint %s: id %d token %q", name, e.ID, tok.Token)
	}
	return e.ID, tok.Token
}

// serviceAccount creates a service account with a root role through the
// admin API and returns its id.
func serviceAccount(t testing.TB, h *servertest.Harness, username, role string) int64 {
	t.Helper()
	var sa struct{ ID int64 }
	h.Do(t, "POST", "/api/admin/service-account", h.AdminToken, map[string]any{"username": username, "name": username, "rootRole": role}).
		Want(t, 201).JSON(t, &sa)
	if sa.ID == 0 {
		t.Fatal("service account without id")
	}
	return sa.ID
}

// flag creates a kill-switch flag in project default through the admin
// API and turns it on in development (which gives it a default strategy).
func flag(t testing.TB, h *servertest.Harness, name string) {
	t.Helper()
	h.Do(t, "POST", "/api/admin/projects/default/features", h.AdminToken, map[string]any{"name": name, "type": "kill-switch"}).Want(t, 201)
	h.Do(t, "POST", "/api/admin/projects/default/features/"+name+"/environments/development/on", h.AdminToken, nil).Want(t, 200)
}

// flagEnabled reads a flag's state in development through the admin API.
func flagEnabled(t testing.TB, h *servertest.Harness, name string) bool {
	t.Helper()
	var fe struct{ Enabled bool }
	h.Do(t, "GET", "/api/admin/projects/default/features/"+name+"/environments/development", h.AdminToken, nil).Want(t, 200).JSON(t, &fe)
	return fe.Enabled
}

// events returns the events of a type, newest first.
func events(t testing.TB, h *servertest.Harness, typ string) []store.Event {
	t.Helper()
	evs, _, err := h.Store.Q(context.Background()).Events(store.EventFilter{Type: typ, Limit: 100})
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	return evs
}

// signal posts a signal with a token.
func signal(t testing.TB, h *servertest.Harness, name, token string, body any) *servertest.Response {
	t.Helper()
	return h.Do(t, "POST", "/api/signal-endpoint/"+name, "Bearer "+token, body)
}

// allProcessed waits until every stored signal has been processed.
func allProcessed(t testing.TB, h *servertest.Harness) {
	t.Helper()
	testutil.Eventually(t, 30*time.Second, "signals left unprocessed", func() bool {
		n, err := h.Store.Q(context.Background()).CountUnprocessedSignals()
		if err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
}
