package compat_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/compat/harness"
)

// TestBuntingProxyWithUnleashUpstream runs Bunting's proxy against the real
// Unleash 8.2.0 server: flags configured through Unleash's admin API are
// served by the proxy, a change in Unleash reaches it, its evaluations agree
// with Unleash's own frontend API, and its registration and usage metrics are
// stored by Unleash.
func TestBuntingProxyWithUnleashUpstream(t *testing.T) {
	harness.Require(t)
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

	const appName = "bunting-proxy-on-unleash"
	proxy := harness.StartBuntingProxy(t, up, appName)
	client := proxy.Client()

	t.Run("serves the flags configured in Unleash", func(t *testing.T) {
		harness.Eventually(t, 10*time.Second, 250*time.Millisecond, "the first case", func() error {
			return harness.VerifyProxyCase(client, harness.Cases[0])
		})
		for _, c := range harness.Cases {
			harness.CheckProxyCase(t, client, c)
		}
	})

	t.Run("sees a flag switched on and off in Unleash", func(t *testing.T) {
		const flag = "compat.switch-unleash"
		ctx := harness.Cases[0].Context
		harness.AddSwitchFlag(t, admin, flag)
		harness.WaitProxyFlag(t, client, ctx, flag, true, 20*time.Second)
		admin.SetEnabled(t, harness.Project, flag, harness.Environment, false)
		harness.WaitProxyFlag(t, client, ctx, flag, false, 20*time.Second)
	})

	t.Run("agrees with Unleash's frontend API", func(t *testing.T) {
		var seenOn, seenOff bool
		harness.Eventually(t, 20*time.Second, 500*time.Millisecond, "same toggles from both", func() error {
			seenOn, seenOff = false, false
			for i := range 30 {
				ctx := harness.Context{UserID: fmt.Sprintf("user-%d", i), Properties: map[string]string{"region": "eu"}}
				ours, err := client.Get(ctx)
				if err != nil {
					return err
				}
				theirs, err := frontend.Get(ctx)
				if err != nil {
					return err
				}
				if err := sameToggles(ours, theirs); err != nil {
					return fmt.Errorf("user %s: %w", ctx.UserID, err)
				}
				if slices.ContainsFunc(ours, func(tg harness.ProxyToggle) bool { return tg.Name == flagHalf }) {
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
	})

	t.Run("usage metrics and registration reach Unleash", func(t *testing.T) {
		// Evaluations from the subtests above are counted by the proxy
		// and posted every second.
		usage := admin.WaitUsage(t, harness.FlagSimple, appName, 1, 0, 30*time.Second)
		if !slices.Contains(usage.Environments, harness.Environment) {
			t.Errorf("usage recorded in environments %v, want %s", usage.Environments, harness.Environment)
		}
		admin.WaitUsage(t, harness.FlagDisabled, appName, 0, 1, 30*time.Second)
		admin.WaitApplicationInstance(t, appName, appName+"-1", 60*time.Second)
	})
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
