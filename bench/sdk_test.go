package bench

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	unleash "github.com/Unleash/unleash-client-go/v4"
	sdkcontext "github.com/Unleash/unleash-client-go/v4/context"
	"github.com/bunting-flags/bunting/engine"
)

// sdkUnsupported are the operators of client-specification 6.1.0 that
// unleash-client-go v4.5.0 does not know (it treats them as errors).
var sdkUnsupported = map[string]bool{"REGEX": true, "IN_CIDR": true, "SEMVER_GTE": true, "SEMVER_LTE": true}

// startSDK starts the Go SDK against a loopback server that serves payload
// as /api/client/features, and waits until the SDK has loaded it.
// The SDK reports errors (for example unknown operators) to listener.
// v4.5.0 decodes strategy ids as integers, so they are left out of what it
// is served (Bunting ignores them).
func startSDK(tb testing.TB, payload *engine.ClientFeatures, listener any) *unleash.Client {
	tb.Helper()
	body, err := json.Marshal(withoutStrategyIDs(payload))
	if err != nil {
		tb.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/client/features") {
			w.Header().Set("Content-Type", "application/json")
			w.Write(body)
			return
		}
		w.WriteHeader(http.StatusAccepted) // register, metrics
	}))
	tb.Cleanup(srv.Close)
	client, err := unleash.NewClient(
		unleash.WithUrl(srv.URL+"/api/"),
		unleash.WithAppName("bunting-bench"),
		unleash.WithInstanceId("bench"),
		unleash.WithDisableMetrics(true),
		unleash.WithRefreshInterval(time.Hour),
		unleash.WithBackupPath(tb.TempDir()),
		unleash.WithListener(listener),
	)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { client.Close() })
	ready := make(chan struct{})
	go func() { client.WaitForReady(); close(ready) }()
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		tb.Fatal("the Go SDK did not load the payload within 10s")
	}
	if got := len(client.ListFeatures()); got != len(payload.Features) {
		tb.Fatalf("the Go SDK loaded %d features, want %d", got, len(payload.Features))
	}
	return client
}

// withoutStrategyIDs returns a deep copy of cf without strategy ids.
func withoutStrategyIDs(cf *engine.ClientFeatures) *engine.ClientFeatures {
	out := deepCopy(cf)
	for i := range out.Features {
		for j := range out.Features[i].Strategies {
			out.Features[i].Strategies[j].ID = ""
		}
	}
	return out
}

func deepCopy(cf *engine.ClientFeatures) *engine.ClientFeatures {
	data, err := json.Marshal(cf)
	if err != nil {
		panic(err)
	}
	var out engine.ClientFeatures
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return &out
}

// errorCounter is an SDK listener that counts the errors it reports.
type errorCounter struct {
	unleash.NoopListener
	errors atomic.Int64
}

// OnError counts an SDK error.
func (e *errorCounter) OnError(error) { e.errors.Add(1) }

// sdkContext converts an engine context to the SDK's.
func sdkContext(c *engine.Context) sdkcontext.Context {
	return sdkcontext.Context{
		UserId:        c.UserID,
		SessionId:     c.SessionID,
		RemoteAddress: c.RemoteAddress,
		Environment:   c.Environment,
		AppName:       c.AppName,
		CurrentTime:   c.CurrentTime,
		Properties:    c.Properties,
	}
}

// sdkHostname is the hostname the SDK's applicationHostname strategy uses,
// so both engines see the same machine name.
func sdkHostname() string {
	if h := os.Getenv("HOSTNAME"); h != "" {
		return h
	}
	h, _ := os.Hostname()
	return h
}

// sdkCompatible returns a copy of cf in which every operator v4.5.0 lacks
// is replaced by its nearest supported one (REGEX → STR_CONTAINS,
// IN_CIDR → IN, SEMVER_GTE/LTE → SEMVER_GT/LT), so that both engines do
// the same amount of work on the same payload in the benchmark.
func sdkCompatible(cf *engine.ClientFeatures) *engine.ClientFeatures {
	out := withoutStrategyIDs(cf)
	fix := func(cs []engine.Constraint) {
		for i := range cs {
			c := &cs[i]
			switch c.Operator {
			case "REGEX":
				c.Operator, c.Values, c.Value = "STR_CONTAINS", []string{strings.Trim(c.Value, `^$\d{}`)}, ""
			case "IN_CIDR":
				c.Operator = "IN"
			case "SEMVER_GTE":
				c.Operator = "SEMVER_GT"
			case "SEMVER_LTE":
				c.Operator = "SEMVER_LT"
			}
		}
	}
	for i := range out.Segments {
		fix(out.Segments[i].Constraints)
	}
	for i := range out.Features {
		for j := range out.Features[i].Strategies {
			fix(out.Features[i].Strategies[j].Constraints)
		}
	}
	return out
}
