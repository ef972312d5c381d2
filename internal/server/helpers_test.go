package server_test

import (
	"encoding/json"
	"syscall"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
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

// processCPU is the CPU time this process has used, user and system (the
// benchmarks report it per request, as the shared machine makes wall time
// noisy).
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
