package compat_test

import (
	"sync"
	"testing"

	"github.com/Unleash/unleash-client-go/v4"
	"github.com/Unleash/unleash-client-go/v4/context"

	"github.com/bunting-flags/bunting/compat/harness"
)

// goSDK adapts the Go SDK (github.com/Unleash/unleash-client-go/v4 v4.5.0)
// to harness.SDK.
type goSDK struct {
	client   *unleash.Client
	listener *goSDKListener
}

// startGoSDK starts the Go SDK against an endpoint (an upstream's client API
// or a proxy's), refreshing and sending metrics every second, and waits until
// it is ready.
func startGoSDK(t *testing.T, at harness.Endpoint, appName string) *goSDK {
	t.Helper()
	listener := &goSDKListener{ready: make(chan struct{})}
	client, err := unleash.NewClient(
		unleash.WithUrl(at.URL),
		unleash.WithAppName(appName),
		unleash.WithInstanceId(appName+"-1"),
		unleash.WithCustomHeaders(map[string][]string{"Authorization": {at.Token}}),
		unleash.WithRefreshInterval(timeSecond),
		unleash.WithMetricsInterval(timeSecond),
		unleash.WithBackupPath(t.TempDir()),
		unleash.WithListener(listener),
	)
	if err != nil {
		t.Fatalf("Go SDK: %v", err)
	}
	t.Cleanup(func() { _ = client.Close() })
	select {
	case <-listener.ready:
	case <-afterSDKTimeout():
		t.Fatalf("the Go SDK was not ready in time; errors: %v", listener.errorList())
	}
	return &goSDK{client: client, listener: listener}
}

// Evaluate implements harness.SDK.
func (g *goSDK) Evaluate(checks []harness.Check) ([]harness.Evaluation, error) {
	out := make([]harness.Evaluation, len(checks))
	for i, c := range checks {
		ctx := context.Context{UserId: c.Context.UserID, SessionId: c.Context.SessionID, Properties: c.Context.Properties}
		v := g.client.GetVariant(c.Flag, unleash.WithVariantContext(ctx))
		variant := harness.ProxyVariant{Name: v.Name, Enabled: v.Enabled}
		if v.Payload.Type != "" {
			variant.Payload = &harness.Payload{Type: v.Payload.Type, Value: v.Payload.Value}
		}
		out[i] = harness.Evaluation{
			Flag:    c.Flag,
			Enabled: g.client.IsEnabled(c.Flag, unleash.WithContext(ctx)),
			Variant: variant,
		}
	}
	return out, nil
}

// goSDKListener records what the Go SDK reports; without a listener its
// channels would fill up and block it.
type goSDKListener struct {
	mu        sync.Mutex
	ready     chan struct{}
	readyOnce sync.Once
	errors    []string
	sent      int
}

func (l *goSDKListener) OnError(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errors = append(l.errors, err.Error())
}

func (l *goSDKListener) OnWarning(err error) { l.OnError(err) }

func (l *goSDKListener) OnReady() { l.readyOnce.Do(func() { close(l.ready) }) }

func (l *goSDKListener) OnUpdate() {}

func (l *goSDKListener) OnCount(string, bool) {}

func (l *goSDKListener) OnImpression(unleash.ImpressionEvent) {}

func (l *goSDKListener) OnSent(unleash.MetricsData) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.sent++
}

func (l *goSDKListener) OnRegistered(unleash.ClientData) {}

func (l *goSDKListener) errorList() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.errors...)
}
