package ssoapi_test

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestTerraformUnleashOIDCReplay replays what Unleash's Terraform provider
// sent for unleash_oidc (testdata/terraform/README.md) against a fresh
// server on both databases: main.tf (create, plan, destroy, create,
// update, plan, destroy) and custom_role.tf (a default root role of 1,
// then a custom root role made by unleash_role as the default, plans
// without changes, destroy). Each answer must have the recorded status and
// the recorded values of every property the provider reads back into its
// state, or the provider would fail the apply or plan a change forever.
func TestTerraformUnleashOIDCReplay(t *testing.T) {
	for _, file := range []string{"unleash_oidc.jsonl", "unleash_oidc_custom_role.jsonl"} {
		t.Run(file, func(t *testing.T) { replayTerraform(t, "testdata/terraform/"+file) })
	}
}

// replayTerraform replays one recording (lines marking a step are skipped).
func replayTerraform(t *testing.T, path string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type exchange struct {
		Step     string          `json:"step"`
		Method   string          `json:"method"`
		Path     string          `json:"path"`
		Body     json.RawMessage `json:"body"`
		Status   int             `json:"status"`
		Response map[string]any  `json:"response"`
	}
	var script []exchange
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e exchange
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		if e.Step == "" {
			script = append(script, e)
		}
	}
	if len(script) < 10 {
		t.Fatalf("the recording has %d exchanges", len(script))
	}
	// What the provider's Read, Create and Update put into the state: the
	// OIDC settings', and a role's (the POST answer's roles, a GET's own).
	read := []string{"clientId", "discoverUrl", "enabled", "secret", "autoCreate", "defaultRootRoleId", "roles", "id", "name", "type", "description", "permissions"}
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		for i, e := range script {
			var body any
			if len(e.Body) > 0 {
				body = []byte(e.Body)
			}
			res := h.Do(t, e.Method, e.Path, h.AdminToken, body)
			if res.Status != e.Status {
				t.Fatalf("#%d %s %s: %s, recorded %d", i, e.Method, e.Path, res, e.Status)
			}
			if e.Response == nil {
				continue
			}
			got := res.Map(t)
			for _, k := range read {
				want, recorded := e.Response[k]
				if !recorded {
					continue
				}
				if g, _ := json.Marshal(got[k]); string(g) != mustJSON(want) {
					t.Errorf("#%d %s %s: %s = %s, recorded %s", i, e.Method, e.Path, k, g, mustJSON(want))
				}
			}
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
