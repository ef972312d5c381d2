package compat_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/bunting-flags/bunting/compat/harness"
)

// checkClientAPIMatches configures the scenario on a fresh Bunting server
// and compares its GET /api/client/features with Unleash's, for an SDK that
// announces client specification 5.2.0 (segments apart) and for one that
// announces none (segment constraints inlined), and its frontend API
// (/api/frontend) with Unleash's. Only the scenario's flags
// are compared; meta (revision ids, ETag hashes) is left out, and the known
// differences that no SDK notices are evened out (see knownDifferences).
func checkClientAPIMatches(t *testing.T, unleash *harness.Upstream) {
	bunting := harness.StartBuntingServer(t, harness.SQLite)
	harness.ApplyScenario(t, bunting.Admin())
	addHalfRollout(t, bunting.Admin())
	for _, spec := range []string{"5.2.0", ""} {
		t.Run("client spec "+cmp.Or(spec, "absent"), func(t *testing.T) {
			want := scenarioPayload(t, unleash, spec)
			got := scenarioPayload(t, bunting, spec)
			if diff := gocmp.Diff(want, got); diff != "" {
				t.Errorf("GET /api/client/features differs (-unleash +bunting):\n%s", diff)
			}
		})
	}
	t.Run("frontend API", func(t *testing.T) {
		ours := harness.NewProxyClient(bunting.BaseURL+"/api/frontend", bunting.FrontendToken)
		theirs := harness.NewProxyClient(unleash.BaseURL+"/api/frontend", unleash.FrontendToken)
		for _, c := range harness.Cases {
			if err := harness.VerifyEnabledCase(ours, c); err != nil {
				t.Error(err)
			}
		}
		checkAgreesWithFrontendAPI(t, ours, theirs)
	})
}

// scenarioPayload fetches the client features and keeps the scenario flags.
func scenarioPayload(t *testing.T, up *harness.Upstream, spec string) map[string]any {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, up.APIURL()+"/client/features", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", up.ClientToken)
	if spec != "" {
		req.Header.Set("Unleash-Client-Spec", spec)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s: %v", up.Kind, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: GET /api/client/features: status %d, %v, body %s", up.Kind, resp.StatusCode, err, data)
	}
	var payload map[string]any
	if err := json.Unmarshal(data, &payload); err != nil {
		t.Fatalf("%s: decode %s: %v", up.Kind, data, err)
	}
	delete(payload, "meta")
	features, _ := payload["features"].([]any)
	var kept []any
	for _, f := range features {
		name := fmt.Sprint(f.(map[string]any)["name"])
		if slices.Contains(harness.ScenarioFlags, name) || name == flagHalf {
			kept = append(kept, f)
		}
	}
	slices.SortFunc(kept, func(a, b any) int {
		return cmp.Compare(fmt.Sprint(a.(map[string]any)["name"]), fmt.Sprint(b.(map[string]any)["name"]))
	})
	payload["features"] = kept
	knownDifferences(payload)
	return payload
}

// knownDifferences evens out, on both sides, the differences between
// Bunting's and Unleash's client features that SDKs do not notice. Each is
// listed in the README; anything else fails the comparison.
//   - A strategy without variants: Unleash sends "variants": [], Bunting
//     leaves the key out.
//   - query.inlineSegmentConstraints false: Unleash sends it, Bunting leaves
//     it out.
//   - A constraint's inverted and caseInsensitive: Bunting always sends
//     them, Unleash only when the admin call set them.
func knownDifferences(payload map[string]any) {
	for _, f := range payload["features"].([]any) {
		strategies, _ := f.(map[string]any)["strategies"].([]any)
		for _, s := range strategies {
			strategy := s.(map[string]any)
			if _, ok := strategy["variants"]; !ok {
				strategy["variants"] = []any{}
			}
			constraintDefaults(strategy["constraints"])
		}
	}
	segments, _ := payload["segments"].([]any)
	for _, s := range segments {
		constraintDefaults(s.(map[string]any)["constraints"])
	}
	if query, ok := payload["query"].(map[string]any); ok {
		if _, ok := query["inlineSegmentConstraints"]; !ok {
			query["inlineSegmentConstraints"] = false
		}
	}
}

// constraintDefaults fills in the constraint booleans that default to false.
func constraintDefaults(constraints any) {
	list, _ := constraints.([]any)
	for _, c := range list {
		constraint := c.(map[string]any)
		for _, key := range []string{"inverted", "caseInsensitive"} {
			if _, ok := constraint[key]; !ok {
				constraint[key] = false
			}
		}
	}
}
