package compat_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	unleash5 "github.com/Unleash/unleash-go-sdk/v5"
	api5 "github.com/Unleash/unleash-go-sdk/v5/api"
	unleash5ctx "github.com/Unleash/unleash-go-sdk/v5/context"

	"github.com/bunting-flags/bunting/compat/harness"
)

// goStreamListener collects the Go SDK v5's errors and readiness.
type goStreamListener struct {
	ready  chan struct{}
	once   sync.Once
	mu     sync.Mutex
	errors []error
}

func (l *goStreamListener) OnError(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.errors = append(l.errors, err)
}
func (l *goStreamListener) OnWarning(error)                  {}
func (l *goStreamListener) OnReady()                         { l.once.Do(func() { close(l.ready) }) }
func (l *goStreamListener) OnUpdate()                        {}
func (l *goStreamListener) OnCount(string, bool)             {}
func (l *goStreamListener) OnSent(unleash5.MetricsData)      {}
func (l *goStreamListener) OnRegistered(unleash5.ClientData) {}

// TestGoSDKStreamingWithBuntingServer runs the real Go SDK
// (github.com/Unleash/unleash-go-sdk/v5 v5.1.0) in its streaming mode
// against Bunting's server on both databases, with its polling interval set
// to an hour so that only the stream can bring changes: it sees a scripted
// sequence of changes (create, on/off, strategy edit, a server restart,
// segment edit, archive).
func TestGoSDKStreamingWithBuntingServer(t *testing.T) {
	harness.Require(t)
	t.Parallel()
	for _, database := range []string{harness.SQLite, harness.Postgres} {
		t.Run(database, func(t *testing.T) {
			up := harness.StartBuntingServer(t, database)
			admin := up.Admin()
			const flag, segFlag = "go-stream", "go-stream-seg"
			admin.CreateFeature(t, harness.Project, flag)

			listener := &goStreamListener{ready: make(chan struct{})}
			client, err := unleash5.NewClient(
				unleash5.WithUrl(up.APIURL()),
				unleash5.WithAppName("go-sdk-v5-streaming"),
				unleash5.WithInstanceId("go-sdk-v5-streaming-1"),
				unleash5.WithCustomHeaders(http.Header{"Authorization": {up.ClientToken}}),
				unleash5.WithExperimentalMode(map[string]string{"type": "streaming"}),
				unleash5.WithRefreshInterval(time.Hour),
				unleash5.WithDisableMetrics(true),
				unleash5.WithBackupPath(t.TempDir()),
				unleash5.WithListener(listener),
			)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = client.Close() })
			select {
			case <-listener.ready:
			case <-time.After(20 * time.Second):
				t.Fatalf("the Go SDK was not ready; errors: %v", listener.errors)
			}
			u1 := unleash5.WithContext(unleash5ctx.Context{UserId: "u1"})
			known := func(name string) bool {
				for _, f := range client.ListFeatures() {
					if f.Name == name {
						return true
					}
				}
				return false
			}
			wait := func(what string, ok func() bool) {
				t.Helper()
				harness.Eventually(t, 5*time.Second, 5*time.Millisecond, what, func() error {
					if ok() {
						return nil
					}
					return fmt.Errorf("not yet")
				})
			}
			wait("the hydration", func() bool { return known(flag) && !client.IsEnabled(flag, u1) })

			id := admin.AddStrategy(t, harness.Project, flag, harness.Environment, harness.Strategy{Name: "flexibleRollout",
				Parameters: map[string]string{"rollout": "0", "stickiness": "default", "groupId": flag}})
			admin.SetEnabled(t, harness.Project, flag, harness.Environment, true)
			wait("on at 0%", func() bool {
				f := client.ListFeatures()
				return len(f) > 0 && !client.IsEnabled(flag, u1) && enabledIn(f, flag)
			})
			if status, body := admin.Do(t, http.MethodPut, "/api/admin/projects/default/features/"+flag+"/environments/development/strategies/"+id,
				harness.Strategy{Name: "flexibleRollout", Parameters: map[string]string{"rollout": "100", "stickiness": "default", "groupId": flag}}); status != 200 {
				t.Fatalf("strategy edit: %d %s", status, body)
			}
			wait("the strategy edit", func() bool { return client.IsEnabled(flag, u1) })
			admin.SetEnabled(t, harness.Project, flag, harness.Environment, false)
			wait("off", func() bool { return !client.IsEnabled(flag, u1) })

			// A server restart: the SDK reconnects and a change made right
			// after it (while the SDK may still be reconnecting) arrives.
			up.Restart(t)
			admin.SetEnabled(t, harness.Project, flag, harness.Environment, true)
			harness.Eventually(t, 30*time.Second, 10*time.Millisecond, "the change after the restart", func() error {
				if client.IsEnabled(flag, u1) {
					return nil
				}
				return fmt.Errorf("not yet")
			})
			admin.SetEnabled(t, harness.Project, flag, harness.Environment, false)
			wait("off after the restart", func() bool { return !client.IsEnabled(flag, u1) })

			seg := admin.CreateSegment(t, "go-stream-seg", []harness.Constraint{{ContextName: "userId", Operator: "IN", Values: []string{"u2"}}})
			admin.CreateFeature(t, harness.Project, segFlag)
			if status, body := admin.Do(t, http.MethodPost, "/api/admin/projects/default/features/"+segFlag+"/environments/development/strategies",
				map[string]any{"name": "default", "segments": []int{seg}}); status != 200 {
				t.Fatalf("segment strategy: %d %s", status, body)
			}
			admin.SetEnabled(t, harness.Project, segFlag, harness.Environment, true)
			wait("a flag with a segment", func() bool {
				return known(segFlag) && enabledIn(client.ListFeatures(), segFlag) && !client.IsEnabled(segFlag, u1)
			})
			if status, body := admin.Do(t, http.MethodPut, fmt.Sprintf("/api/admin/segments/%d", seg), map[string]any{"name": "go-stream-seg",
				"constraints": []harness.Constraint{{ContextName: "userId", Operator: "IN", Values: []string{"u1", "u2"}}}}); status != 204 && status != 200 {
				t.Fatalf("segment edit: %d %s", status, body)
			}
			wait("the segment edit", func() bool { return client.IsEnabled(segFlag, u1) })
			if status, body := admin.Do(t, http.MethodDelete, "/api/admin/projects/default/features/"+segFlag, nil); status != 202 && status != 200 {
				t.Fatalf("archive: %d %s", status, body)
			}
			wait("the archive", func() bool { return !known(segFlag) })
		})
	}
}

func enabledIn(features []api5.Feature, name string) bool {
	for _, f := range features {
		if f.Name == name {
			return f.Enabled
		}
	}
	return false
}
