package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// runFlagsCLI runs `bunting flags args...` against h with its admin token
// (from the environment, as people set it) and returns the exit code and
// the output.
func runFlagsCLI(t *testing.T, h *servertest.Harness, token string, args ...string) (int, string) {
	t.Helper()
	env := map[string]string{"BUNTING_URL": h.URL, "BUNTING_API_TOKEN": token}
	var out, errOut bytes.Buffer
	code := Run(context.Background(), append([]string{"flags"}, args...), func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &out, &errOut)
	return code, out.String() + errOut.String()
}

// TestFlagsExportDiffApply keeps the default project's development flags
// in a YAML file: export, no changes, edit (a new flag, a switch, a flag
// removed), diff says so with exit code 2, apply with -prune makes the
// server match, and diff is clean again.
func TestFlagsExportDiffApply(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		a := h.AdminToken
		for _, name := range []string{"alpha", "beta"} {
			h.Do(t, "POST", "/api/admin/projects/default/features", a, map[string]any{"name": name}).Want(t, 201)
			h.Do(t, "POST", "/api/admin/projects/default/features/"+name+"/environments/development/strategies", a,
				map[string]any{"name": "flexibleRollout", "parameters": map[string]any{"rollout": "25", "stickiness": "default", "groupId": name}}).Want(t, 200)
		}
		h.Do(t, "POST", "/api/admin/projects/default/features/alpha/environments/development/on", a, nil).Want(t, 200)

		dir := t.TempDir()
		file := filepath.Join(dir, "flags.yaml")
		if code, out := runFlagsCLI(t, h, a, "export", "-o", file); code != 0 {
			t.Fatalf("export: %d %s", code, out)
		}
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			t.Fatalf("the export is not YAML: %v\n%s", err, raw)
		}
		if code, out := runFlagsCLI(t, h, a, "diff", "-f", file); code != 0 || !strings.Contains(out, "No changes") {
			t.Fatalf("diff right after export: %d %s", code, out)
		}
		jsonFile := filepath.Join(dir, "flags.json")
		if code, out := runFlagsCLI(t, h, a, "export", "--project", "default", "--environment", "development", "-o", jsonFile); code != 0 {
			t.Fatalf("export to JSON: %d %s", code, out)
		}
		if code, out := runFlagsCLI(t, h, a, "diff", "-f", jsonFile); code != 0 {
			t.Fatalf("diff of the JSON file: %d %s", code, out)
		}

		// Edit: gamma is new, alpha is switched off, beta is gone.
		features := doc["features"].([]any)
		doc["features"] = append(features[:1:1], map[string]any{"name": "gamma", "type": "release"})
		doc["featureStrategies"] = []any{doc["featureStrategies"].([]any)[0], map[string]any{"name": "default", "featureName": "gamma"}}
		doc["featureEnvironments"] = []any{
			map[string]any{"name": "alpha", "featureName": "alpha", "enabled": false},
			map[string]any{"name": "gamma", "featureName": "gamma", "enabled": true},
		}
		edited, err := yaml.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, edited, 0o644); err != nil {
			t.Fatal(err)
		}
		code, out := runFlagsCLI(t, h, a, "diff", "-f", file)
		for _, want := range []string{"+ create  gamma", "~ change  alpha (enabled)", "keep    beta", "1 to create, 1 to change, 0 to archive"} {
			if code != 2 || !strings.Contains(out, want) {
				t.Fatalf("diff after editing: %d, want 2 and %q in\n%s", code, want, out)
			}
		}
		if code, out := runFlagsCLI(t, h, a, "diff", "-f", file, "--prune"); code != 2 || !strings.Contains(out, "- archive beta") {
			t.Fatalf("diff -prune: %d %s", code, out)
		}
		// A read-only token may check; it may not apply.
		viewer := viewerToken(t, h)
		if code, out := runFlagsCLI(t, h, viewer, "diff", "-f", file); code != 2 || !strings.Contains(out, "needs permissions this token lacks") || !strings.Contains(out, "Create flags") {
			t.Fatalf("diff with a viewer's token: %d %s", code, out)
		}
		if code, out := runFlagsCLI(t, h, viewer, "apply", "-f", file); code != 1 || !strings.Contains(out, "Create flags") {
			t.Fatalf("apply with a viewer's token: %d %s", code, out)
		}
		if code, out := runFlagsCLI(t, h, a, "apply", "-f", file, "--prune"); code != 0 || !strings.Contains(out, "Applied.") {
			t.Fatalf("apply: %d %s", code, out)
		}
		res, p := clientPayloadOf(t, h)
		if res != 200 || len(p) != 2 || p["alpha"] || !p["gamma"] {
			t.Fatalf("client features after apply: %d %v", res, p)
		}
		var archived struct{ Features []struct{ Name string } }
		h.Do(t, "GET", "/api/admin/archive/features", a, nil).Want(t, 200).JSON(t, &archived)
		if len(archived.Features) != 1 || archived.Features[0].Name != "beta" {
			t.Fatalf("archived: %+v", archived)
		}
		if code, out := runFlagsCLI(t, h, a, "diff", "-f", file, "--prune"); code != 0 || !strings.Contains(out, "No changes") {
			t.Fatalf("diff after apply: %d %s", code, out)
		}
		if code, out := runFlagsCLI(t, h, a, "apply", "-f", file); code != 0 || strings.Contains(out, "Applied.") {
			t.Fatalf("apply without changes: %d %s", code, out)
		}
	})
}

// clientPayloadOf is each flag's enabled state as the SDKs in development
// read it.
func clientPayloadOf(t *testing.T, h *servertest.Harness) (int, map[string]bool) {
	t.Helper()
	var p struct {
		Features []struct {
			Name    string
			Enabled bool
		}
	}
	res := h.Do(t, "GET", "/api/client/features", h.ClientToken, nil)
	if res.Status == 200 {
		res.JSON(t, &p)
	}
	out := map[string]bool{}
	for _, f := range p.Features {
		out[f.Name] = f.Enabled
	}
	return res.Status, out
}

// TestFlagsErrors: every failure is exit code 1 with a message saying
// what is wrong, and the server is left as it was.
func TestFlagsErrors(t *testing.T) {
	t.Parallel()
	h := servertest.Start(t, servertest.NewSQLite(t))
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"features":[{"name":"x"}],"featureStrategies":[{"name":"noSuchStrategy","featureName":"x"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := filepath.Join(dir, "broken.yaml")
	if err := os.WriteFile(broken, []byte("features: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		token string
		args  []string
		want  string
	}{
		{h.AdminToken, []string{"diff"}, "needs -f FILE"},
		{"", []string{"export"}, "BUNTING_API_TOKEN"},
		{"*:*.wrong", []string{"export"}, "401"},
		{h.ClientToken, []string{"export"}, "403"},
		{h.AdminToken, []string{"diff", "-f", filepath.Join(dir, "missing.json")}, "no such file"},
		{h.AdminToken, []string{"diff", "-f", broken}, "not valid YAML"},
		{h.AdminToken, []string{"apply", "-f", bad}, "noSuchStrategy"},
		{h.AdminToken, []string{"export", "--environment", "nowhere"}, "nowhere"},
		{h.AdminToken, []string{"diff", "-f", bad, "--project", "nope"}, "nope"},
		{h.AdminToken, []string{"export", "extra"}, "unexpected argument"},
	} {
		code, out := runFlagsCLI(t, h, c.token, c.args...)
		if code != 1 || !strings.Contains(out, c.want) {
			t.Errorf("flags %v: exit %d, want 1 and %q in\n%s", c.args, code, c.want, out)
		}
	}
	if code, _ := runFlagsCLI(t, h, h.AdminToken, "nonsense"); code != 2 {
		t.Errorf("an unknown flags command: exit %d, want 2", code)
	}
	h.Do(t, "GET", "/api/admin/projects/default/features/x", h.AdminToken, nil).WantError(t, 404, "NotFoundError")
}

// viewerToken is a service account's token with the Viewer root role.
func viewerToken(t *testing.T, h *servertest.Harness) string {
	t.Helper()
	var acct struct{ ID int64 }
	h.Do(t, "POST", "/api/admin/service-account", h.AdminToken, map[string]any{"username": "ci", "name": "ci", "rootRole": 3}).Want(t, 201).JSON(t, &acct)
	var tok struct{ Secret string }
	h.Do(t, "POST", fmt.Sprintf("/api/admin/service-account/%d/token", acct.ID), h.AdminToken, map[string]any{"description": "ci"}).Want(t, 201).JSON(t, &tok)
	return tok.Secret
}
