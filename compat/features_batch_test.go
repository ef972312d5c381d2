package compat_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/bunting-flags/bunting/compat/differential"
	"github.com/bunting-flags/bunting/compat/harness"
)

// checkFeaturesBatch moves the scenario's flags both ways with the
// features-batch API: Unleash's export of development imports into a fresh
// Bunting server, whose SDKs then read the same configuration as Unleash's;
// Bunting's export of it imports into Unleash's production, whose SDKs then
// read the same configuration again.
func checkFeaturesBatch(t *testing.T, unleash *harness.Upstream) {
	flags := append(slices.Clone(harness.ScenarioFlags), flagHalf)
	exportQuery := map[string]any{"features": flags, "environment": harness.Environment}
	var doc map[string]any
	batchPost(t, http.DefaultClient, unleash.BaseURL, unleash.AdminToken, "export", exportQuery, &doc)

	bunting := harness.StartBuntingServer(t, harness.SQLite)
	// Segments are found by name: they must exist first, as on Unleash.
	bunting.Admin().CreateSegment(t, "compat-beta", []harness.Constraint{{ContextName: "userId", Operator: "IN", Values: []string{"u1", "u2"}}})
	into := map[string]any{"project": harness.Project, "environment": harness.Environment, "data": doc}
	var v struct{ Errors, Permissions []any }
	batchPost(t, http.DefaultClient, bunting.BaseURL, bunting.AdminToken, "validate", into, &v)
	if len(v.Errors)+len(v.Permissions) > 0 {
		t.Fatalf("Bunting's validate of Unleash's export: %+v", v)
	}
	batchPost(t, http.DefaultClient, bunting.BaseURL, bunting.AdminToken, "import", into, nil)
	want := scenarioPayload(t, unleash, "5.2.0")
	if diff := gocmp.Diff(want, scenarioPayload(t, bunting, "5.2.0")); diff != "" {
		t.Fatalf("after importing Unleash's export, GET /api/client/features differs (-unleash +bunting):\n%s", diff)
	}

	// A document neither can import: both name the same problems in the
	// same words.
	badDoc := map[string]any{"project": harness.Project, "environment": harness.Environment, "data": map[string]any{
		"features":          []any{map[string]any{"name": "compat.batch.twice"}, map[string]any{"name": "compat.batch.twice"}},
		"featureStrategies": []any{map[string]any{"name": "noSuchStrategy", "featureName": "compat.batch.twice"}},
		"tagTypes":          []any{},
	}}
	var theirs, ours map[string]any
	batchPost(t, http.DefaultClient, unleash.BaseURL, unleash.AdminToken, "validate", badDoc, &theirs)
	batchPost(t, http.DefaultClient, bunting.BaseURL, bunting.AdminToken, "validate", badDoc, &ours)
	if diff := gocmp.Diff(theirs, ours); diff != "" {
		t.Errorf("validate of a document with an unknown strategy type and a flag listed twice differs (-unleash +bunting):\n%s", diff)
	}

	// The reverse: Unleash refuses admin tokens on import, so a person's
	// token does it.
	var back map[string]any
	batchPost(t, http.DefaultClient, bunting.BaseURL, bunting.AdminToken, "export", exportQuery, &back)
	client, pat := unleashPersonalToken(t, unleash)
	back2 := map[string]any{"project": harness.Project, "environment": "production", "data": back}
	batchPost(t, client, unleash.BaseURL, pat, "validate", back2, &v)
	if len(v.Errors)+len(v.Permissions) > 0 {
		t.Fatalf("Unleash's validate of Bunting's export: %+v", v)
	}
	batchPost(t, client, unleash.BaseURL, pat, "import", back2, nil)
	if diff := gocmp.Diff(exportShape(doc), exportShape(back)); diff != "" {
		t.Errorf("the exports' property names differ (-unleash +bunting):\n%s", diff)
	}
	var tok struct{ Secret string }
	if status, body := unleash.Admin().Do(t, "POST", "/api/admin/api-tokens", map[string]any{"tokenName": "compat-batch-production",
		"type": "client", "environment": "production", "projects": []string{"*"}}); status != 201 || json.Unmarshal(body, &tok) != nil {
		t.Fatalf("production client token: %d %s", status, body)
	}
	production := *unleash
	production.ClientToken = tok.Secret
	harness.Eventually(t, 60*time.Second, 500*time.Millisecond, "Unleash's production serves the imported flags", func() error {
		data, err := differential.FetchClientFeatures(&production, "5.2.0")
		if err != nil {
			return err
		}
		keep := func(name string) bool { return slices.Contains(flags, name) }
		got, err := differential.ClientFeatures(data, keep, nil)
		if err != nil {
			return err
		}
		// The query echoes the token's environment and projects.
		delete(got, "query")
		if diff := gocmp.Diff(withoutQuery(want), got); diff != "" {
			return fmt.Errorf("Unleash's production after importing Bunting's export differs from development (-development +production):\n%s", diff)
		}
		return nil
	})
}

// batchPost posts body to /api/admin/features-batch/{route} and decodes a
// 200 answer into out.
func batchPost(t *testing.T, c *http.Client, base, token, route string, body, out any) {
	t.Helper()
	status, data := postJSON(t, c, base+"/api/admin/features-batch/"+route, token, body)
	if status != 200 {
		t.Fatalf("%s features-batch/%s: %d %s", base, route, status, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s features-batch/%s: %v: %s", base, route, err, data)
		}
	}
}

func postJSON(t *testing.T, c *http.Client, url, token string, body any) (int, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return res.StatusCode, data
}

// unleashPersonalToken creates an Admin person on Unleash, signs in and
// returns a personal access token.
func unleashPersonalToken(t *testing.T, up *harness.Upstream) (*http.Client, string) {
	t.Helper()
	const user, password = "compat-batch", "Compat-batch-password-1"
	if status, body := up.Admin().Do(t, "POST", "/api/admin/user-admin", map[string]any{"username": user, "rootRole": 1, "password": password,
		"sendEmail": false}); status != 201 {
		t.Fatalf("create a person on Unleash: %d %s", status, body)
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	if status, body := postJSON(t, c, up.BaseURL+"/auth/simple/login", "", map[string]any{"username": user, "password": password}); status != 200 {
		t.Fatalf("sign in on Unleash: %d %s", status, body)
	}
	status, body := postJSON(t, c, up.BaseURL+"/api/admin/user/tokens", "", map[string]any{"description": "compat",
		"expiresAt": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)})
	var pat struct{ Secret string }
	if status != 201 || json.Unmarshal(body, &pat) != nil || pat.Secret == "" {
		t.Fatalf("personal access token on Unleash: %d %s", status, body)
	}
	return &http.Client{Timeout: 30 * time.Second}, pat.Secret
}

// withoutQuery is a client features payload without its query echo.
func withoutQuery(payload map[string]any) map[string]any {
	out := maps.Clone(payload)
	delete(out, "query")
	return out
}

// exportShape is, per section of an export, the property names its items
// use.
func exportShape(doc map[string]any) map[string][]string {
	shape := map[string][]string{}
	for section, v := range doc {
		keys := map[string]bool{}
		items, _ := v.([]any)
		for _, it := range items {
			if m, ok := it.(map[string]any); ok {
				for k := range m {
					keys[k] = true
				}
			}
		}
		shape[section] = slices.Sorted(maps.Keys(keys))
	}
	return shape
}
