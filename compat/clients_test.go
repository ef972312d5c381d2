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

// throughProxy describes an SDK reading from a proxy's /proxy/client API.
func throughProxy(appName string, proxy *harness.Proxy) sdkRun {
	return sdkRun{AppName: appName, MetricsApp: proxy.AppName}
}

// checkSDK runs the client scenario against an SDK: it evaluates every case,
// sees a flag switched on and off through the admin API, and its usage
// metrics (and registration) are stored upstream.
func checkSDK(t *testing.T, admin *harness.Admin, sdk harness.SDK, run sdkRun) {
	switchFlag := "compat.switch-" + run.AppName
	ctx := harness.Cases[0].Context

	t.Run("evaluates the scenario", func(t *testing.T) {
		harness.CheckSDKScenario(t, sdk)
	})
	t.Run("sees a flag switched on and off", func(t *testing.T) {
		harness.AddSwitchFlag(t, admin, switchFlag)
		harness.WaitSDKFlag(t, sdk, ctx, switchFlag, true, changeTimeout)
		admin.SetEnabled(t, harness.Project, switchFlag, harness.Environment, false)
		harness.WaitSDKFlag(t, sdk, ctx, switchFlag, false, changeTimeout)
	})
	t.Run("its metrics are stored", func(t *testing.T) {
		// The switch flag was evaluated by this client only, both on and off.
		admin.WaitUsage(t, switchFlag, run.MetricsApp, 1, 1, metricsTimeout)
		admin.WaitUsage(t, harness.FlagSimple, run.MetricsApp, 1, 0, metricsTimeout)
	})
	if run.Registers {
		t.Run("its registration is stored", func(t *testing.T) {
			admin.WaitApplicationInstance(t, run.AppName, run.AppName+"-1", registrationTimeout)
		})
	}
}

// checkProxy runs the client scenario against a proxy whose upstream is up:
// GET and POST /proxy answer every case, a flag switched on and off through
// the admin API shows, and the proxy's usage metrics and registration are
// stored upstream.
func checkProxy(t *testing.T, up *harness.Upstream, proxy *harness.Proxy) {
	admin := up.Admin()
	client := proxy.Client()
	switchFlag := "compat.switch-" + proxy.AppName
	ctx := harness.Cases[0].Context

	t.Run("serves the scenario", func(t *testing.T) {
		harness.Eventually(t, changeTimeout, 250*time.Millisecond, "the first case", func() error {
			return harness.VerifyProxyCase(client, harness.Cases[0])
		})
		for _, c := range harness.Cases {
			harness.CheckProxyCase(t, client, c)
		}
	})
	t.Run("sees a flag switched on and off", func(t *testing.T) {
		harness.AddSwitchFlag(t, admin, switchFlag)
		harness.WaitProxyFlag(t, client, ctx, switchFlag, true, changeTimeout)
		admin.SetEnabled(t, harness.Project, switchFlag, harness.Environment, false)
		harness.WaitProxyFlag(t, client, ctx, switchFlag, false, changeTimeout)
	})
	t.Run("its metrics and registration are stored upstream", func(t *testing.T) {
		// POST /proxy with a toggle list counts with every proxy, the
		// reference included: FlagSimple yes, FlagDisabled no.
		admin.WaitUsage(t, harness.FlagSimple, proxy.AppName, 1, 0, metricsTimeout)
		admin.WaitUsage(t, harness.FlagDisabled, proxy.AppName, 0, 1, metricsTimeout)
		admin.WaitApplicationInstance(t, proxy.AppName, proxy.AppName+"-1", registrationTimeout)
	})
	t.Run("its yes counts arrive upstream exactly", func(t *testing.T) {
		checkExactYesCount(t, admin, client, proxy.AppName)
	})
}

// checkExactYesCount creates a flag that is on only for one user, asks the
// proxy for it with POST /proxy and a toggle list (which every proxy counts)
// until it is on and then ten times more, and checks that the upstream
// stores exactly as many yes answers as the proxy gave. Other requests never
// use that user, so nothing else can count a yes for the flag.
func checkExactYesCount(t *testing.T, admin *harness.Admin, client *harness.ProxyClient, appName string) {
	flag := "compat.counted-" + appName
	user := harness.Context{UserID: "counter-" + appName}
	admin.CreateFeature(t, harness.Project, flag)
	admin.AddStrategy(t, harness.Project, flag, harness.Environment, harness.Strategy{
		Name:        "default",
		Constraints: []harness.Constraint{{ContextName: "userId", Operator: "IN", Values: []string{user.UserID}}},
	})
	admin.SetEnabled(t, harness.Project, flag, harness.Environment, true)

	yes := 0
	ask := func() (bool, error) {
		toggles, err := client.Post(user, []string{flag})
		if err != nil {
			return false, err
		}
		if len(toggles) != 1 || toggles[0].Name != flag {
			return false, fmt.Errorf("POST /proxy for %s answered %+v", flag, toggles)
		}
		if toggles[0].Enabled {
			yes++
		}
		return toggles[0].Enabled, nil
	}
	harness.Eventually(t, changeTimeout, 250*time.Millisecond, "the proxy knows "+flag, func() error {
		on, err := ask()
		if err == nil && !on {
			err = fmt.Errorf("%s is still off", flag)
		}
		return err
	})
	for range 10 {
		if on, err := ask(); err != nil || !on {
			t.Fatalf("POST /proxy for %s: on=%v, err=%v", flag, on, err)
		}
	}
	harness.Eventually(t, metricsTimeout, 500*time.Millisecond, "exactly the proxy's yes answers upstream", func() error {
		usage, err := admin.Usage(t, flag)
		if err != nil {
			return err
		}
		if usage.Yes > yes {
			t.Fatalf("upstream counted %d yes for %s, more than the %d the proxy answered", usage.Yes, flag, yes)
		}
		if usage.Yes != yes {
			return fmt.Errorf("upstream has %d yes, want %d", usage.Yes, yes)
		}
		return nil
	})
}
