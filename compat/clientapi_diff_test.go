package compat_test

import (
	"cmp"
	"slices"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/bunting-flags/bunting/compat/differential"
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
	data, err := differential.FetchClientFeatures(up, spec)
	if err != nil {
		t.Fatal(err)
	}
	keep := func(name string) bool { return slices.Contains(harness.ScenarioFlags, name) || name == flagHalf }
	payload, err := differential.ClientFeatures(data, keep, nil)
	if err != nil {
		t.Fatalf("%s: %v", up.Kind, err)
	}
	return payload
}
