package proxy_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bunting-flags/bunting/internal/testutil"
)

// usageTotals sums the yes counts and the variant counts of every metrics
// post upstream, by flag ("flag/variant" for variants).
func usageTotals(u *fakeUpstream) (yes, no, variants map[string]float64) {
	yes, no, variants = map[string]float64{}, map[string]float64{}, map[string]float64{}
	for _, m := range u.metricsPosts() {
		for name, v := range m["bucket"].(map[string]any)["toggles"].(map[string]any) {
			tc := v.(map[string]any)
			yes[name] += tc["yes"].(float64)
			no[name] += tc["no"].(float64)
			for vn, n := range tc["variants"].(map[string]any) {
				variants[name+"/"+vn] += n.(float64)
			}
		}
	}
	return yes, no, variants
}

// An SDK's metrics post counts only the proxy's flags and their variants:
// random names, a NUL name, unknown variants are dropped (with 200 OK, as
// an SDK cannot do anything about them).
func TestSDKMetricsCountOnlyKnownFlags(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	r := startReady(t, testConfig(u))
	toggles := map[string]any{
		"enabled-simple": map[string]any{"yes": 2, "no": 1, "variants": map[string]any{"disabled": 3, "made-up": 5}},
		"with-variant":   map[string]any{"yes": 1, "no": 0, "variants": map[string]any{"blue": 1}},
		"nope\u0000":     map[string]any{"yes": 1, "no": 1},
	}
	for i := range 50 {
		toggles[fmt.Sprintf("random-%d", i)] = map[string]any{"yes": 1, "no": 1, "variants": map[string]any{"v": 1}}
	}
	body, err := json.Marshal(map[string]any{"appName": "web", "bucket": map[string]any{
		"start": "2026-11-22T01:00:00Z", "stop": "2026-11-22T01:00:10Z", "toggles": toggles}})
	require.NoError(t, err)
	resp, answer := r.post(t, "/proxy/client/metrics", string(body))
	require.Equal(t, http.StatusOK, resp.StatusCode, answer)
	// Toggle lists count known flags only.
	resp, _ = r.post(t, "/proxy", `{"toggles":["with-variant","not-a-flag"]}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)

	testutil.Eventually(t, 5*time.Second, "the counts upstream", func() bool {
		yes, _, _ := usageTotals(u)
		return yes["enabled-simple"] == 2 && yes["with-variant"] == 2
	})
	yes, no, variants := usageTotals(u)
	assert.ElementsMatch(t, []string{"enabled-simple", "with-variant"}, keys(yes))
	assert.Equal(t, 1.0, no["enabled-simple"])
	assert.Equal(t, map[string]float64{"enabled-simple/disabled": 3, "with-variant/blue": 2}, variants)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A metrics post upstream refuses as invalid (400, 413, …) is dropped,
// not put back: later usage still arrives. A post that fails on the way
// (503, 401, 429) keeps its counts for the next one.
func TestRejectedMetricsPostIsDropped(t *testing.T) {
	for _, c := range []struct {
		status int
		kept   bool
	}{{http.StatusBadRequest, false}, {http.StatusRequestEntityTooLarge, false}, {http.StatusUnprocessableEntity, false},
		{http.StatusServiceUnavailable, true}, {http.StatusUnauthorized, true}, {http.StatusTooManyRequests, true}} {
		t.Run(fmt.Sprint(c.status), func(t *testing.T) {
			u := newFakeUpstream(t, fixture)
			u.metricsFail, u.metricsFailStatus = 1, c.status
			cfg := testConfig(u)
			cfg.MetricsInterval = 50 * time.Millisecond
			r := startReady(t, cfg)
			r.post(t, "/proxy", `{"toggles":["enabled-simple"]}`)
			// The first post fails; wait for it, then count once more.
			testutil.Eventually(t, 5*time.Second, "the failed post", func() bool {
				u.mu.Lock()
				defer u.mu.Unlock()
				return u.metricsFail == 0
			})
			r.post(t, "/proxy", `{"toggles":["enabled-simple"]}`)
			want := 1.0
			if c.kept {
				want = 2
			}
			testutil.Eventually(t, 5*time.Second, "the later count upstream", func() bool {
				yes, _, _ := usageTotals(u)
				return yes["enabled-simple"] >= want
			})
			// A count of another flag: every post sends all that is pending,
			// so once it arrives, anything wrongly kept has arrived too.
			r.post(t, "/proxy", `{"toggles":["with-variant"]}`)
			testutil.Eventually(t, 5*time.Second, "the other flag's count upstream", func() bool {
				yes, _, _ := usageTotals(u)
				return yes["with-variant"] >= 1
			})
			yes, _, _ := usageTotals(u)
			assert.Equal(t, want, yes["enabled-simple"])
		})
	}
}

// A bucket too large for one post (a proxy with thousands of flags) is
// sent in several posts under 64 kB each, and every count arrives.
func TestLargeBucketIsSplitAcrossPosts(t *testing.T) {
	var features []string
	for i := range 3000 {
		features = append(features, fmt.Sprintf(`{"name":"a-rather-long-flag-name-to-fill-the-post-%04d","enabled":true,"strategies":[{"name":"default"}]}`, i))
	}
	u := newFakeUpstream(t, `{"version":2,"features":[`+strings.Join(features, ",")+`]}`)
	cfg := testConfig(u)
	cfg.MetricsInterval = 100 * time.Millisecond
	r := startReady(t, cfg)
	resp, _ := r.get(t, "/proxy")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	testutil.Eventually(t, 5*time.Second, "every flag's count upstream", func() bool {
		yes, _, _ := usageTotals(u)
		return len(yes) == 3000
	})
	posts := u.metricsPosts()
	assert.Greater(t, len(posts), 3, "the bucket is split")
	for _, m := range posts {
		b, err := json.Marshal(m)
		require.NoError(t, err)
		assert.Less(t, len(b), 64<<10)
	}
	yes, _, _ := usageTotals(u)
	for name, n := range yes {
		assert.Equal(t, 1.0, n, name)
	}
}
