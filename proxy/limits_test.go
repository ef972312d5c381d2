package proxy_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/bunting-flags/bunting/proxy"
)

// The connection limits are proxy options like the others: defaults,
// environment (Go durations or milliseconds), flags that win, and bad
// values naming the variable and flag.
func TestConfigConnectionLimits(t *testing.T) {
	cfg, err := load(t, nil)
	require.NoError(t, err)
	assert.Equal(t, 30*time.Second, cfg.HTTP.ReadTimeout)
	assert.Equal(t, 60*time.Second, cfg.HTTP.WriteTimeout)
	assert.Equal(t, 120*time.Second, cfg.HTTP.IdleTimeout)
	assert.Equal(t, 10*time.Second, cfg.HTTP.ReadHeaderTimeout)
	assert.Equal(t, 64<<10, cfg.HTTP.MaxHeaderBytes)

	cfg, err = load(t, map[string]string{"HTTP_READ_TIMEOUT": "1500", "HTTP_WRITE_TIMEOUT": "2m", "HTTP_MAX_HEADER_BYTES": "8192"},
		"-idle-timeout", "5s", "-read-timeout", "3s")
	require.NoError(t, err)
	assert.Equal(t, 3*time.Second, cfg.HTTP.ReadTimeout, "the flag wins")
	assert.Equal(t, 2*time.Minute, cfg.HTTP.WriteTimeout)
	assert.Equal(t, 5*time.Second, cfg.HTTP.IdleTimeout)
	assert.Equal(t, 8192, cfg.HTTP.MaxHeaderBytes)

	_, err = load(t, map[string]string{"HTTP_IDLE_TIMEOUT": "forever"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "HTTP_IDLE_TIMEOUT")
	assert.Contains(t, err.Error(), "-idle-timeout")

	byHand := proxy.Config{UpstreamURL: "http://up.example/api", UpstreamAPIToken: "t", ClientKeys: []string{"k"}, RefreshInterval: time.Second}
	require.NoError(t, byHand.Validate())
	assert.Equal(t, 30*time.Second, byHand.HTTP.ReadTimeout, "a Config made by hand gets the default limits")
}
