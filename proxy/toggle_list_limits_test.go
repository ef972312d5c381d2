package proxy_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bunting-flags/bunting/proxy"
)

// toggleList is a POST body listing names.
func toggleList(names []string) string {
	return `{"toggles":["` + strings.Join(names, `","`) + `"]}`
}

// A toggle list is answered once per distinct name, and a list longer than
// proxy.MaxToggleNames is a 400 naming the limit, on /proxy and /proxy/all.
func TestToggleListIsBounded(t *testing.T) {
	u := newFakeUpstream(t, fixture)
	cfg := testConfig(u)
	cfg.EnableAllEndpoint = true
	r := startReady(t, cfg)

	var repeated []string
	for i := range proxy.MaxToggleNames {
		repeated = append(repeated, []string{"enabled-simple", "nope", "with-variant"}[i%3])
	}
	for _, path := range []string{"/proxy", "/proxy/all"} {
		resp, body := r.post(t, path, toggleList(repeated))
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		assert.Equal(t, []string{"enabled-simple", "nope", "with-variant"}, names(toggles(t, body)))

		tooMany := make([]string, proxy.MaxToggleNames+1)
		for i := range tooMany {
			tooMany[i] = fmt.Sprint("name-", i)
		}
		resp, body = r.post(t, path, toggleList(tooMany))
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
		assert.Contains(t, body, `"name":"ValidationError"`)
		assert.Contains(t, body, fmt.Sprintf("at most %d names", proxy.MaxToggleNames))
	}
}
