// Package gosdk drives the official Unleash Go SDK against a real Bunting
// server. It is its own module so the SDK never links into Bunting.
package gosdk

import (
	"net/http"
	"testing"
	"time"

	unleash "github.com/Unleash/unleash-client-go/v4"
	ucontext "github.com/Unleash/unleash-client-go/v4/context"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// listener records what the SDK reports.
type listener struct {
	ready chan struct{}
	sent  chan struct{}
	errs  chan error
}

func (l *listener) OnError(err error) {
	select {
	case l.errs <- err:
	default:
	}
}
func (l *listener) OnWarning(error)      {}
func (l *listener) OnReady()             { close(l.ready) }
func (l *listener) OnUpdate()            {}
func (l *listener) OnCount(string, bool) {}
func (l *listener) OnSent(unleash.MetricsData) {
	select {
	case l.sent <- struct{}{}:
	default:
	}
}
func (l *listener) OnRegistered(unleash.ClientData) {}

func do(t *testing.T, h *servertest.Harness, method, path string, body any, want int) map[string]any {
	t.Helper()
	res := h.Do(t, method, path, h.AdminToken, body).Want(t, want)
	if len(res.Body) == 0 || res.Body[0] != '{' {
		return nil
	}
	return res.Map(t)
}

func TestGoSDKReadsFlagsAndPostsMetrics(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		const f = "/api/admin/projects/default/features"
		do(t, h, "POST", f, map[string]any{"name": "go-on"}, 201)
		do(t, h, "POST", f, map[string]any{"name": "go-off"}, 201)
		do(t, h, "POST", f, map[string]any{"name": "go-users"}, 201)
		do(t, h, "POST", f+"/go-on/environments/development/strategies", map[string]any{"name": "default",
			"variants": []any{map[string]any{"name": "green", "weight": 1000}}}, 200)
		do(t, h, "POST", f+"/go-on/environments/development/on", nil, 200)
		do(t, h, "POST", f+"/go-users/environments/development/strategies", map[string]any{"name": "flexibleRollout",
			"parameters":  map[string]any{"rollout": "100"},
			"constraints": []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"alice"}}}}, 200)
		do(t, h, "POST", f+"/go-users/environments/development/on", nil, 200)

		l := &listener{ready: make(chan struct{}), sent: make(chan struct{}, 1), errs: make(chan error, 10)}
		client, err := unleash.NewClient(
			unleash.WithUrl(h.URL+"/api/"),
			unleash.WithAppName("bunting-go-sdk-test"),
			unleash.WithInstanceId("go-1"),
			unleash.WithCustomHeaders(http.Header{"Authorization": {h.ClientToken}}),
			unleash.WithRefreshInterval(200*time.Millisecond),
			unleash.WithMetricsInterval(300*time.Millisecond),
			unleash.WithListener(l),
			unleash.WithBackupPath(t.TempDir()), // no flags from an earlier run
		)
		if err != nil {
			t.Fatal(err)
		}
		defer client.Close()
		select {
		case <-l.ready:
		case err := <-l.errs:
			t.Fatalf("sdk error: %v", err)
		case <-time.After(10 * time.Second):
			t.Fatal("SDK never became ready")
		}
		alice := unleash.WithContext(ucontext.Context{UserId: "alice"})
		bob := unleash.WithContext(ucontext.Context{UserId: "bob"})
		if !client.IsEnabled("go-on", alice) || client.IsEnabled("go-off", alice) {
			t.Fatal("go-on/go-off evaluated wrongly")
		}
		if !client.IsEnabled("go-users", alice) || client.IsEnabled("go-users", bob) {
			t.Fatal("constraint evaluated wrongly")
		}
		if v := client.GetVariant("go-on", unleash.WithVariantContext(ucontext.Context{UserId: "alice"})); v.Name != "green" {
			t.Fatalf("variant %q", v.Name)
		}
		// A change reaches the SDK through the ETag-aware poll.
		do(t, h, "POST", f+"/go-on/environments/development/off", nil, 200)
		deadline := time.Now().Add(10 * time.Second)
		for client.IsEnabled("go-on", alice) {
			if time.Now().After(deadline) {
				t.Fatal("the SDK never saw go-on turned off")
			}
			time.Sleep(50 * time.Millisecond)
		}
		select {
		case <-l.sent:
		case <-time.After(10 * time.Second):
			t.Fatal("SDK never sent metrics")
		}
		var usage struct {
			Data []struct {
				AppName string
				Yes, No int
			}
		}
		deadline = time.Now().Add(10 * time.Second)
		for {
			h.Do(t, "GET", "/api/admin/client-metrics/features/go-users", h.AdminToken, nil).Want(t, 200).JSON(t, &usage)
			if len(usage.Data) == 1 && usage.Data[0].AppName == "bunting-go-sdk-test" && usage.Data[0].Yes >= 1 && usage.Data[0].No >= 1 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("metrics from the Go SDK: %+v", usage)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}
