package proxy_test

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bunting-flags/bunting/internal/testutil"
)

// Without server-side SDK tokens the proxy drops each snapshot's decoded
// payload once compiled; it answers exactly as a proxy that keeps it.
func TestPayloadIsReleasedUnlessServedAndAnswersDoNotChange(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	cfg := testConfig(u)
	cfg.EnableAllEndpoint = true
	keeping := startReady(t, cfg)
	cfg.ExpServerSideSDKTokens = nil
	releasing := startReady(t, cfg)

	require.NotEmpty(t, keeping.p.Snapshot().Features().Features, "the payload served at /proxy/client/features is kept")
	assert.Empty(t, releasing.p.Snapshot().Features().Features, "the payload is released")
	for _, path := range []string{"/proxy", "/proxy?userId=u1&properties[region]=eu", "/proxy/all"} {
		for _, method := range []string{http.MethodGet, http.MethodPost} {
			body := ""
			if method == http.MethodPost {
				body = `{"context":{"userId":"u1"},"toggles":["enabled-simple","with-variant","missing"]}`
			}
			want, wantBody := keeping.do(t, method, path, body, "Authorization", clientKey, "Content-Type", "application/json")
			got, gotBody := releasing.do(t, method, path, body, "Authorization", clientKey, "Content-Type", "application/json")
			assert.Equal(t, want.StatusCode, got.StatusCode, "%s %s", method, path)
			assert.Equal(t, wantBody, gotBody, "%s %s", method, path)
		}
	}
	assert.Contains(t, func() string { _, b := releasing.get(t, "/proxy"); return b }(), `"impressionData":true`)

	// A new payload is compiled, served and released in turn.
	u.setPayload(strings.Replace(fixture, `"enabled-simple"`, `"renamed-simple"`, 1))
	testutil.Eventually(t, 5*time.Second, "the new payload", func() bool {
		_, b := releasing.get(t, "/proxy")
		return strings.Contains(b, `"renamed-simple"`)
	})
	assert.Empty(t, releasing.p.Snapshot().Features().Features)
}

// A long-running proxy does not keep the snapshots it served before: after
// a few configuration changes and a metrics post, the first one is garbage.
func TestOldSnapshotsAreNotKept(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	_, _ = r.get(t, "/proxy")
	first := weak.Make(r.p.Snapshot())
	for i := range 4 {
		name := fmt.Sprintf("renamed-%d", i)
		u.setPayload(strings.Replace(fixture, `"enabled-simple"`, `"`+name+`"`, 1))
		testutil.Eventually(t, 5*time.Second, "payload "+name, func() bool {
			_, b := r.get(t, "/proxy")
			return strings.Contains(b, `"`+name+`"`)
		})
	}
	posts := len(u.metricsPosts())
	testutil.Eventually(t, 5*time.Second, "a metrics post after the changes", func() bool { return len(u.metricsPosts()) > posts })
	testutil.Eventually(t, 5*time.Second, "the first snapshot collected", func() bool {
		runtime.GC()
		return first.Value() == nil
	})
}
