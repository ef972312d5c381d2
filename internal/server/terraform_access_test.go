package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// terraformExchange is one request Unleash's Terraform provider sent to
// Bunting, with the answer it got and accepted (one line of
// testdata/terraform/access/provider-v3.jsonl; a line with a step marks
// the start of apply, plan or destroy).
type terraformExchange struct {
	Step         string          `json:"step"`
	Method       string          `json:"method"`
	Path         string          `json:"path"`
	RequestBody  json.RawMessage `json:"requestBody"`
	Status       int             `json:"status"`
	ResponseBody json.RawMessage `json:"responseBody"`
}

// TestTerraformProviderAccessResources replays, against the real server
// on both databases, every request Unleash's Terraform provider v3 (built
// from Unleash/terraform-provider-unleash at 0730694, with its generated
// client Unleash/unleash-server-api-go v0.7.1) sent to Bunting while it
// applied testdata/terraform/access/main.tf — unleash_user (with and
// without a password), unleash_group, unleash_role (a custom project role
// with environment permissions and a custom root role),
// unleash_project_access, unleash_service_account and the data sources
// unleash_role, unleash_permission and unleash_user — then planned with no
// changes, applied a second stage of changes, planned again with no
// changes, and destroyed. Each answer must have the recorded status and
// the recorded shape: the same keys (an added key such as "username": null
// is what made the provider crash), the same JSON types and the same
// lengths of lists. testdata/terraform/record.sh access re-records the file.
func TestTerraformProviderAccessResources(t *testing.T) {
	t.Parallel()
	replayTerraform(t, "testdata/terraform/access/provider-v3.jsonl", 90)
}

// TestTerraformProviderResources replays what Unleash's Terraform provider
// v3 (the same build) sent while it applied
// testdata/terraform/resources/main.tf — unleash_project (with a mode),
// unleash_environment, unleash_project_environment (with change requests
// on in stage 2), unleash_context_field (with legal values),
// unleash_api_token (client and frontend tokens, for one project, several
// projects and all, with an expiry that stage 2 moves), unleash_user,
// unleash_service_account and unleash_service_account_token — then
// planned with no changes, applied stage 2, planned again with no changes
// and destroyed. The provider reads an API token back by finding its
// secret in the token list, and plans to create it again when it is not
// there, so besides the shape, every list must carry the secrets of the
// client and frontend tokens created before it (the replay's own
// secrets, which also stand in for the recorded ones in paths).
func TestTerraformProviderResources(t *testing.T) {
	t.Parallel()
	replayTerraform(t, "testdata/terraform/resources/provider-v3.jsonl", 100, func(c *server.Config) {
		// The recording server started with the admin token only.
		c.InitClientTokens, c.InitFrontendTokens = nil, nil
	})
}

// replayTerraform sends every recorded request of file to the real server
// on both databases, as the provider's admin token, and checks each answer
// against the recorded one: the same status and the same shape: the same
// keys (an added key such as "username": null is what made the provider
// crash), the same JSON types and the same lengths of lists. The secrets
// of the API tokens the replay creates stand in for the recorded ones in
// later requests, and a recorded answer that carried such a secret must
// carry the replay's. At least min exchanges must be replayed.
func replayTerraform(t *testing.T, file string, min int, opts ...servertest.Option) {
	exchanges := readTerraformExchanges(t, file)
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		step, n := "", 0
		secrets := map[string]string{} // recorded → replayed
		swap := func(s string) string {
			for rec, got := range secrets {
				s = strings.ReplaceAll(s, url.PathEscape(rec), url.PathEscape(got))
				s = strings.ReplaceAll(s, rec, got)
			}
			return s
		}
		for _, ex := range exchanges {
			if ex.Step != "" {
				step = ex.Step
				continue
			}
			n++
			var body any
			if len(ex.RequestBody) > 0 {
				body = []byte(swap(string(ex.RequestBody)))
			}
			// The provider sends the token without "Bearer", as Unleash's
			// clients do.
			path := swap(ex.Path)
			res := h.Do(t, ex.Method, path, h.AdminToken, body, "X-Unleash-AppName", "terraform-provider-unleash")
			where := fmt.Sprintf("%s: %s %s", step, ex.Method, ex.Path)
			if res.Status != ex.Status {
				t.Fatalf("%s: status %d, the provider got %d; body %s", where, res.Status, ex.Status, res.Body)
			}
			if len(ex.ResponseBody) == 0 {
				continue
			}
			var want, got any
			if err := json.Unmarshal(ex.ResponseBody, &want); err != nil {
				t.Fatalf("%s: recorded answer: %v", where, err)
			}
			if err := json.Unmarshal(res.Body, &got); err != nil {
				t.Fatalf("%s: answer %q is not JSON: %v", where, res.Body, err)
			}
			if diff := sameShape("", want, got); diff != "" {
				t.Errorf("%s: the answer's shape differs from what the provider accepted: %s\nanswer: %s", where, diff, res.Body)
			}
			if ex.Method == "POST" && strings.HasPrefix(ex.Path, "/api/admin/api-tokens") && ex.Status == 201 {
				rec, _ := want.(map[string]any)["secret"].(string)
				mine, _ := got.(map[string]any)["secret"].(string)
				if rec != "" && mine != "" {
					secrets[rec] = mine
				}
				continue
			}
			for rec, mine := range secrets {
				if strings.Contains(string(ex.ResponseBody), `"`+rec+`"`) && !strings.Contains(string(res.Body), `"`+mine+`"`) {
					t.Errorf("%s: the provider read the secret of a token it made here; this answer does not carry it: %s", where, res.Body)
				}
			}
		}
		if n < min {
			t.Fatalf("only %d exchanges replayed", n)
		}
	}, opts...)
}

func readTerraformExchanges(t *testing.T, path string) []terraformExchange {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []terraformExchange
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var ex terraformExchange
		if err := json.Unmarshal(sc.Bytes(), &ex); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, ex)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameShape compares two decoded JSON documents: the same JSON type at
// every place, the same keys in every object, the same length of every
// list. Values may differ (times, generated ids in links). It returns ""
// when they match, else where they first differ.
func sameShape(at string, want, got any) string {
	kind := func(v any) string { return fmt.Sprintf("%T", v) }
	if kind(want) != kind(got) {
		return fmt.Sprintf("%s: %s, the provider got %s", cmpOr(at, "the answer"), kind(got), kind(want))
	}
	switch w := want.(type) {
	case map[string]any:
		g := got.(map[string]any)
		keys := func(m map[string]any) []string {
			var out []string
			for k := range m {
				out = append(out, k)
			}
			sort.Strings(out)
			return out
		}
		if wk, gk := keys(w), keys(g); !slices.Equal(wk, gk) {
			return fmt.Sprintf("%s: keys %s, the provider got %s", cmpOr(at, "the answer"), strings.Join(gk, ","), strings.Join(wk, ","))
		}
		for _, k := range keys(w) {
			if d := sameShape(at+"."+k, w[k], g[k]); d != "" {
				return d
			}
		}
	case []any:
		g := got.([]any)
		if len(w) != len(g) {
			return fmt.Sprintf("%s: %d items, the provider got %d", cmpOr(at, "the answer"), len(g), len(w))
		}
		for i := range w {
			if d := sameShape(fmt.Sprintf("%s[%d]", at, i), w[i], g[i]); d != "" {
				return d
			}
		}
	}
	return ""
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
