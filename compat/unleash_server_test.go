package compat_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/compat/harness"
)

// TestWithUnleashServer puts Bunting next to the real Unleash 8.2.0 server
// (started once for all subtests). Bunting's proxy uses it as its upstream:
// flags configured through Unleash's admin API are served, a change in
// Unleash arrives, the evaluations agree with Unleash's own frontend API, the
// proxy's registration and usage metrics are stored by Unleash, and SDKs
// reading from the proxy work. Bunting's server, given the same admin calls,
// serves the same client features as Unleash.
func TestWithUnleashServer(t *testing.T) {
	harness.Require(t)
	t.Parallel()
	up := harness.StartUnleash(t)
	admin := up.Admin()
	harness.ApplyScenario(t, admin)
	addHalfRollout(t, admin)
	frontend := harness.NewProxyClient(up.BaseURL+"/api/frontend", up.FrontendToken)

	// The expected outcomes are the scenario's own; Unleash must agree with
	// them first, or the comparisons below would prove nothing.
	t.Run("Unleash itself evaluates the scenario as expected", func(t *testing.T) {
		harness.Eventually(t, 15*time.Second, 250*time.Millisecond, "frontend API answers", func() error {
			return harness.VerifyEnabledCase(frontend, harness.Cases[0])
		})
		for _, c := range harness.Cases {
			if err := harness.VerifyEnabledCase(frontend, c); err != nil {
				t.Error(err)
			}
		}
	})

	t.Run("Bunting server's client API matches Unleash's", func(t *testing.T) {
		checkClientAPIMatches(t, up)
	})

	t.Run("Bunting proxy", func(t *testing.T) {
		proxy := harness.StartBuntingProxy(t, up, "bunting-proxy-on-unleash", nil)
		checkProxy(t, up, proxy)
		// Open-source Unleash does not stream (404): the proxy, which
		// follows the stream by default, polls instead, and works as above.
		if tail := proxy.Process.LogTail(400); !strings.Contains(tail, "polling instead") {
			t.Errorf("the proxy did not say it fell back to polling; its log ends with:\n%s", tail)
		}
		t.Run("agrees with Unleash's frontend API", func(t *testing.T) {
			checkAgreesWithFrontendAPI(t, proxy.Client(), frontend)
		})
		// Server-side SDKs reading /proxy/client/features evaluate the
		// scenario's segment flag right only if the proxy passes segments on.
		t.Run("serves the Node SDK", func(t *testing.T) {
			sdk := harness.StartNodeSDK(t, proxy.SDKEndpoint(), "node-sdk-via-bunting-proxy")
			checkSDK(t, up, sdk, throughProxy("node-sdk-via-bunting-proxy", proxy))
		})
		t.Run("serves the Go SDK", func(t *testing.T) {
			sdk := startGoSDK(t, proxy.SDKEndpoint(), "go-sdk-via-bunting-proxy")
			checkSDK(t, up, sdk, throughProxy("go-sdk-via-bunting-proxy", proxy))
		})
		t.Run("serves the browser SDK", func(t *testing.T) {
			sdk := harness.StartBrowserSDK(t, proxy, "browser-sdk-via-bunting-proxy")
			checkSDK(t, up, sdk, throughProxy("browser-sdk-via-bunting-proxy", proxy))
		})
	})

	t.Run("Bunting proxy with upstream filters", func(t *testing.T) {
		admin.TagFeature(t, harness.FlagConstrained, "simple", "compat-tagged")
		filters := []struct {
			name, variable, value string
			want                  []string
		}{
			{"name prefix", "UPSTREAM_NAME_PREFIX", "compat.se", []string{harness.FlagSegmented}},
			{"tag", "UPSTREAM_TAGS", "simple:compat-tagged", []string{harness.FlagConstrained}},
			{"project", "UPSTREAM_PROJECT_NAME", harness.Project, harness.Cases[0].Enabled()},
		}
		for _, f := range filters {
			t.Run(f.name, func(t *testing.T) {
				proxy := harness.StartBuntingProxy(t, up, "bunting-proxy-filtered", map[string]string{f.variable: f.value})
				toggles, err := proxy.Client().Get(harness.Cases[0].Context)
				if err != nil {
					t.Fatal(err)
				}
				if got := scenarioNames(toggles); !slices.Equal(got, sorted(f.want)) {
					t.Errorf("%s=%s: GET /proxy lists %v, want %v", f.variable, f.value, got, sorted(f.want))
				}
			})
		}
	})

	// The client checks, run here with Unleash's own clients against Unleash
	// itself, prove that they pass with the real programs;
	// TestRealClientsWithBuntingServer runs them against Bunting's server.
	t.Run("Node proxy (reference run)", func(t *testing.T) {
		proxy := harness.StartNodeProxy(t, up, "node-proxy-on-unleash")
		checkProxy(t, up, proxy)
		t.Run("serves the browser SDK", func(t *testing.T) {
			sdk := harness.StartBrowserSDK(t, proxy, "browser-sdk-via-node-proxy")
			checkSDK(t, up, sdk, throughProxy("browser-sdk-via-node-proxy", proxy))
		})
	})
	t.Run("Node SDK (reference run)", func(t *testing.T) {
		sdk := harness.StartNodeSDK(t, up.ClientEndpoint(), "node-sdk-on-unleash")
		checkSDK(t, up, sdk, direct("node-sdk-on-unleash"))
	})
	t.Run("Go SDK (reference run)", func(t *testing.T) {
		checkSDK(t, up, startGoSDK(t, up.ClientEndpoint(), "go-sdk-on-unleash"), direct("go-sdk-on-unleash"))
	})

	t.Run("features-batch export and import, both ways", func(t *testing.T) {
		checkFeaturesBatch(t, up)
	})

	// Last: its flags would otherwise be in the answers the subtests above
	// compare whole.
	t.Run("differential", func(t *testing.T) {
		runDifferential(t, up)
	})
}

// scenarioNames lists, sorted, the scenario flags among toggles.
func scenarioNames(toggles []harness.ProxyToggle) []string {
	var names []string
	for _, tg := range toggles {
		if slices.Contains(harness.ScenarioFlags, tg.Name) {
			names = append(names, tg.Name)
		}
	}
	return sorted(names)
}

func sorted(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	return out
}

// checkAgreesWithFrontendAPI compares the proxy's GET /proxy with Unleash's
// own evaluation (its frontend API) for thirty users, which includes the 50 %
// rollout with two variants.
func checkAgreesWithFrontendAPI(t *testing.T, ours, frontend *harness.ProxyClient) {
	var seenOn, seenOff bool
	harness.Eventually(t, changeTimeout, 500*time.Millisecond, "same toggles from both", func() error {
		seenOn, seenOff = false, false
		for i := range 30 {
			ctx := harness.Context{UserID: fmt.Sprintf("user-%d", i), Properties: map[string]string{"region": "eu"}}
			got, err := ours.Get(ctx)
			if err != nil {
				return err
			}
			want, err := frontend.Get(ctx)
			if err != nil {
				return err
			}
			if err := sameToggles(got, want); err != nil {
				return fmt.Errorf("user %s: %w", ctx.UserID, err)
			}
			if slices.ContainsFunc(got, func(tg harness.ProxyToggle) bool { return tg.Name == flagHalf }) {
				seenOn = true
			} else {
				seenOff = true
			}
		}
		return nil
	})
	if !seenOn || !seenOff {
		t.Errorf("the 50 %% rollout was on for some users: %v, off for some: %v; want both", seenOn, seenOff)
	}
}

// flagHalf is a 50 % rollout by userId with two variants; its outcome per
// user is whatever Unleash's own evaluation says.
const flagHalf = "compat.half"

func addHalfRollout(t *testing.T, admin *harness.Admin) {
	admin.CreateFeature(t, harness.Project, flagHalf)
	admin.AddStrategy(t, harness.Project, flagHalf, harness.Environment, harness.Strategy{
		Name:       "flexibleRollout",
		Parameters: map[string]string{"rollout": "50", "stickiness": "userId", "groupId": flagHalf},
		Variants: []harness.Variant{
			{Name: "left", Weight: 500, WeightType: "variable", Stickiness: "userId", Payload: &harness.Payload{Type: "number", Value: "1"}},
			{Name: "right", Weight: 500, WeightType: "variable", Stickiness: "userId", Payload: &harness.Payload{Type: "csv", Value: "a,b"}},
		},
	})
	admin.SetEnabled(t, harness.Project, flagHalf, harness.Environment, true)
}

// sameToggles compares two GET /proxy-style answers by name, enabled state,
// variant and payload, ignoring order and fields only one side sends.
func sameToggles(ours, theirs []harness.ProxyToggle) error {
	index := func(ts []harness.ProxyToggle) map[string]string {
		m := map[string]string{}
		for _, tg := range ts {
			v := "no variant"
			if tg.Variant != nil {
				v = fmt.Sprintf("%s/%v", tg.Variant.Name, tg.Variant.Enabled)
				if tg.Variant.Payload != nil {
					v += fmt.Sprintf("/%s:%s", tg.Variant.Payload.Type, tg.Variant.Payload.Value)
				}
			}
			m[tg.Name] = fmt.Sprintf("enabled=%v %s", tg.Enabled, v)
		}
		return m
	}
	a, b := index(ours), index(theirs)
	if !maps.Equal(a, b) {
		return fmt.Errorf("bunting proxy %v, unleash frontend API %v", a, b)
	}
	return nil
}
