package ssoapi_test

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestTerraformUnleashOIDCReplay replays what Unleash's Terraform provider
// sent for unleash_oidc (create, plan, destroy, create, update, plan,
// destroy; testdata/terraform/README.md) against a fresh server on both
// databases. Each answer must have the recorded status and the recorded
// values of every property the provider reads back into its state, or
// the provider would fail the apply or plan a change forever.
func TestTerraformUnleashOIDCReplay(t *testing.T) {
	f, err := os.Open("testdata/terraform/unleash_oidc.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	type exchange struct {
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
		script = append(script, e)
	}
	if len(script) < 10 {
		t.Fatalf("the recording has %d exchanges", len(script))
	}
	// What the provider's Read, Create and Update put into the state.
	read := []string{"clientId", "discoverUrl", "enabled", "secret", "autoCreate", "defaultRootRoleId"}
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
			got := res.Map(t)
			for _, k := range read {
				if g, _ := json.Marshal(got[k]); string(g) != mustJSON(e.Response[k]) {
					t.Errorf("#%d %s %s: %s = %s, recorded %s", i, e.Method, e.Path, k, g, mustJSON(e.Response[k]))
				}
			}
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
