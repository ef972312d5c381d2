package server_test

import (
	"context"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

// seedFeature creates a flag through the store (with its event), so the
// extras tests do not depend on the feature routes.
func seedFeature(t *testing.T, h *servertest.Harness, project, name, typ string) {
	t.Helper()
	err := h.Store.Tx(context.Background(), func(tx *store.Tx) error {
		f := store.Feature{Name: name, Project: project, Type: typ, CreatedAt: tx.Now()}
		if err := tx.InsertFeature(f); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "feature-created", Actor: store.Actor{Name: "test"}, FeatureName: name, Project: project, Data: f})
	})
	if err != nil {
		t.Fatalf("seed feature %s: %v", name, err)
	}
}

// eventsOfType returns the events of one type, newest first.
func eventsOfType(t *testing.T, h *servertest.Harness, typ string) []map[string]any {
	t.Helper()
	var body struct{ Events []map[string]any }
	h.Do(t, "POST", "/api/admin/events/search", h.AdminToken, map[string]any{"type": typ}).Want(t, 200).JSON(t, &body)
	return body.Events
}

// accountToken creates a service account with a root role and returns a token for it.
func accountToken(t *testing.T, h *servertest.Harness, username string, role int) string {
	t.Helper()
	var acct struct{ ID int64 }
	h.Do(t, "POST", "/api/admin/service-account", h.AdminToken, map[string]any{"username": username, "name": username, "rootRole": role}).Want(t, 201).JSON(t, &acct)
	var tok struct{ Secret string }
	h.Do(t, "POST", "/api/admin/service-account/"+itoa(acct.ID)+"/token", h.AdminToken, map[string]any{"description": "test"}).Want(t, 201).JSON(t, &tok)
	if len(tok.Secret) < 10 || tok.Secret[:5] != "user:" {
		t.Fatalf("token secret %q", tok.Secret)
	}
	return tok.Secret
}

func itoa(n int64) string {
	b := []byte{}
	if n == 0 {
		return "0"
	}
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}
