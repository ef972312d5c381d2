package compat_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/compat/harness"
)

const (
	timeSecond = time.Second
	// sdkTimeout bounds an SDK's readiness.
	sdkTimeout = 20 * time.Second
	// changeTimeout bounds how long a change made through the admin API may
	// take to reach a client that polls every second.
	changeTimeout = 20 * time.Second
	// metricsTimeout bounds how long usage posted every second may take to
	// show in the admin API.
	metricsTimeout = 30 * time.Second
	// registrationTimeout bounds how long a client's registration may take
	// to show as an application instance (Unleash flushes them in batches).
	registrationTimeout = 60 * time.Second
	// flagNamesCacheAge is how long Unleash may take to accept usage of a
	// new flag: its metrics service caches flag names for 10 s and drops
	// counts for names it does not know.
	flagNamesCacheAge = 11 * time.Second
)

func afterSDKTimeout() <-chan time.Time { return time.After(sdkTimeout) }

// sdkRun says how an SDK under test is connected.
type sdkRun struct {
	// AppName is the SDK's own appName.
	AppName string
	// MetricsApp is the appName its usage is stored under upstream: its own,
	// or that of the proxy it reads from.
	MetricsApp string
	// Registers is whether its registration reaches the upstream (not when
	// it reads from a proxy).
	Registers bool
}

// direct describes an SDK connected straight to the upstream.
func direct(appName string) sdkRun {
	return sdkRun{AppName: appName, MetricsApp: appName, Registers: true}
}

// throughProxy describes an SDK reading from a proxy: a server-side SDK on
// its /proxy/client API, or the browser SDK on /proxy. The proxy reports the
// SDK's metrics upstream under its own appName. (A proxy that counts its
// own evaluations, as Bunting's does, also counts the browser SDK's
// fetches, so for the browser SDK this check cannot tell the two apart.)
func throughProxy(appName string, proxy *harness.Proxy) sdkRun {
	return sdkRun{AppName: appName, MetricsApp: proxy.AppName}
}

// checkSDK runs the client scenario against an SDK: it evaluates every case,
// sees a flag switched on and off through the admin API, and its usage
// metrics (and registration) are stored upstream.
func checkSDK(t *testing.T, up *harness.Upstream, sdk harness.SDK, run sdkRun) {
	admin := up.Admin()
	ctx := harness.Cases[0].Context
	// Only this SDK evaluates its usage flag, so its usage upstream can only
	// come from this SDK's metrics.
	usageFlag := "compat.usage-" + run.AppName
	harness.AddSwitchFlag(t, admin, usageFlag)

	t.Run("evaluates the scenario", func(t *testing.T) {
		harness.CheckSDKScenario(t, sdk)
	})
	t.Run("sees a flag switched on and off", func(t *testing.T) {
		switchFlag := "compat.switch-" + run.AppName
		harness.AddSwitchFlag(t, admin, switchFlag)
		harness.WaitSDKFlag(t, sdk, ctx, switchFlag, true, changeTimeout)
		admin.SetEnabled(t, harness.Project, switchFlag, harness.Environment, false)
		harness.WaitSDKFlag(t, sdk, ctx, switchFlag, false, changeTimeout)
	})
	t.Run("its metrics are stored", func(t *testing.T) {
		nudge := func() error {
			_, err := sdk.Evaluate([]harness.Check{{Flag: usageFlag, Context: ctx}, {Flag: harness.FlagDisabled, Context: ctx}})
			return err
		}
		harness.WaitSDKFlag(t, sdk, ctx, usageFlag, true, changeTimeout)
		admin.WaitUsage(t, usageFlag, run.MetricsApp, 1, 0, metricsTimeout, nudge)
		admin.WaitUsage(t, harness.FlagDisabled, run.MetricsApp, 0, 1, metricsTimeout, nudge)
	})
	if run.Registers {
		t.Run("its registration is stored", func(t *testing.T) {
			up.WaitRegistration(t, run.AppName, run.AppName+"-1", registrationTimeout)
		})
	}
}

// checkProxy runs the client scenario against a proxy whose upstream is up:
// GET and POST /proxy answer every case, a flag switched on and off through
// the admin API shows, and the proxy's usage metrics and registration are
// stored upstream, its yes counts exactly.
func checkProxy(t *testing.T, up *harness.Upstream, proxy *harness.Proxy) {
	admin := up.Admin()
	client := proxy.Client()
	ctx := harness.Cases[0].Context
	counted := newCountedFlag(t, up, proxy.AppName)

	t.Run("serves the scenario", func(t *testing.T) {
		harness.Eventually(t, changeTimeout, 250*time.Millisecond, "the first case", func() error {
			return harness.VerifyProxyCase(client, harness.Cases[0])
		})
		for _, c := range harness.Cases {
			harness.CheckProxyCase(t, client, c)
		}
	})
	t.Run("sees a flag switched on and off", func(t *testing.T) {
		switchFlag := "compat.switch-" + proxy.AppName
		harness.AddSwitchFlag(t, admin, switchFlag)
		harness.WaitProxyFlag(t, client, ctx, switchFlag, true, changeTimeout)
		admin.SetEnabled(t, harness.Project, switchFlag, harness.Environment, false)
		harness.WaitProxyFlag(t, client, ctx, switchFlag, false, changeTimeout)
	})
	t.Run("its metrics and registration are stored upstream", func(t *testing.T) {
		// POST /proxy with a toggle list counts with every proxy, the
		// reference included: FlagSimple yes, FlagDisabled no.
		nudge := func() error {
			_, err := client.Post(ctx, []string{harness.FlagSimple, harness.FlagDisabled})
			return err
		}
		admin.WaitUsage(t, harness.FlagSimple, proxy.AppName, 1, 0, metricsTimeout, nudge)
		admin.WaitUsage(t, harness.FlagDisabled, proxy.AppName, 0, 1, metricsTimeout, nudge)
		up.WaitRegistration(t, proxy.AppName, proxy.AppName+"-1", registrationTimeout)
	})
	t.Run("its yes counts arrive upstream exactly", func(t *testing.T) {
		counted.check(t, admin, client, proxy.AppName)
	})
}

// countedFlag is on for one user only, whom no other request uses, so every
// yes the upstream stores for it comes from the requests of check.
type countedFlag struct {
	name string
	user harness.Context
	// usableAt is when the upstream is sure to accept usage of the flag.
	usableAt time.Time
}

func newCountedFlag(t *testing.T, up *harness.Upstream, appName string) countedFlag {
	admin := up.Admin()
	f := countedFlag{name: "compat.counted-" + appName, user: harness.Context{UserID: "counter-" + appName}}
	admin.CreateFeature(t, harness.Project, f.name)
	admin.AddStrategy(t, harness.Project, f.name, harness.Environment, harness.Strategy{
		Name:        "default",
		Constraints: []harness.Constraint{{ContextName: "userId", Operator: "IN", Values: []string{f.user.UserID}}},
	})
	admin.SetEnabled(t, harness.Project, f.name, harness.Environment, true)
	f.usableAt = time.Now()
	if up.Kind == "unleash" {
		f.usableAt = f.usableAt.Add(flagNamesCacheAge)
	}
	return f
}

// check asks the proxy for the flag with POST /proxy and a toggle list
// (which every proxy counts) until it is on and then ten times more, and
// checks that the upstream stores, under the proxy's appName, exactly as
// many yes answers as the proxy gave.
func (f countedFlag) check(t *testing.T, admin *harness.Admin, client *harness.ProxyClient, appName string) {
	time.Sleep(time.Until(f.usableAt))
	yes := 0
	ask := func() (bool, error) {
		toggles, err := client.Post(f.user, []string{f.name})
		if err != nil {
			return false, err
		}
		if len(toggles) != 1 || toggles[0].Name != f.name {
			return false, fmt.Errorf("POST /proxy for %s answered %+v", f.name, toggles)
		}
		if toggles[0].Enabled {
			yes++
		}
		return toggles[0].Enabled, nil
	}
	harness.Eventually(t, changeTimeout, 250*time.Millisecond, "the proxy knows "+f.name, func() error {
		on, err := ask()
		if err == nil && !on {
			err = fmt.Errorf("%s is still off", f.name)
		}
		return err
	})
	for range 10 {
		if on, err := ask(); err != nil || !on {
			t.Fatalf("POST /proxy for %s: on=%v, err=%v", f.name, on, err)
		}
	}
	harness.Eventually(t, metricsTimeout, 500*time.Millisecond, "exactly the proxy's yes answers upstream", func() error {
		all, err := admin.Usage(t, f.name)
		if err != nil {
			return err
		}
		usage := all[appName]
		if usage.Yes > yes {
			t.Fatalf("upstream counted %d yes for %s, more than the %d the proxy answered", usage.Yes, f.name, yes)
		}
		if usage.Yes != yes {
			return fmt.Errorf("upstream has %d yes, want %d", usage.Yes, yes)
		}
		return nil
	})
}
