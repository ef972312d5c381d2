package server_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const (
	projectPath = "/api/admin/projects/default"
	featuresURL = projectPath + "/features"
)

func featurePath(name string) string { return featuresURL + "/" + name }

func envPath(name, env string) string { return featurePath(name) + "/environments/" + env }

// createFlag makes a flag in the default project.
func createFlag(t *testing.T, h *servertest.Harness, name string) {
	t.Helper()
	h.Do(t, "POST", featuresURL, h.AdminToken, map[string]any{"name": name}).Want(t, 201)
}

// userToken creates a user with a root role and a personal token for it.
func userToken(t *testing.T, h *servertest.Harness, username, role string) string {
	t.Helper()
	secret := "user:" + username + "-secret"
	err := h.Store.Tx(context.Background(), func(tx *store.Tx) error {
		id, err := tx.InsertUser(store.User{Username: &username, RootRole: role, CreatedAt: tx.Now()})
		if err != nil {
			return err
		}
		if _, err := tx.InsertUserToken(store.UserToken{UserID: id, CreatedAt: tx.Now()}, secret); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "user-created", Actor: store.Actor{Name: "test"}, Data: map[string]any{"username": username}})
	})
	if err != nil {
		t.Fatal(err)
	}
	return secret
}

// eventsOf returns the newest events of a type for a flag.
func eventsOf(t *testing.T, h *servertest.Harness, typ, feature string) []map[string]any {
	t.Helper()
	var body struct{ Events []map[string]any }
	h.Do(t, "POST", "/api/admin/events/search", h.AdminToken, map[string]any{"type": typ, "feature": feature}).Want(t, 200).JSON(t, &body)
	return body.Events
}

func envOf(t *testing.T, feature map[string]any, env string) map[string]any {
	t.Helper()
	for _, e := range feature["environments"].([]any) {
		if m := e.(map[string]any); m["name"] == env {
			return m
		}
	}
	t.Fatalf("environment %s not in %v", env, feature)
	return nil
}
