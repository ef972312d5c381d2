package server

import (
	"io"
	"strings"
	"testing"
	"time"
)

// The connection limits come from the environment and the flags (which
// win); a bad value names its variable.
func TestParseConfigConnectionLimits(t *testing.T) {
	t.Parallel()
	cfg, err := ParseConfig(nil, envMap(nil), io.Discard)
	if err != nil || cfg.HTTP.ReadTimeout != 30*time.Second || cfg.HTTP.WriteTimeout != time.Minute ||
		cfg.HTTP.IdleTimeout != 2*time.Minute || cfg.HTTP.ReadHeaderTimeout != 10*time.Second || cfg.HTTP.MaxHeaderBytes != 64<<10 {
		t.Fatalf("defaults: %+v, %v", cfg.HTTP, err)
	}
	cfg, err = ParseConfig([]string{"-write-timeout", "90s", "-max-header-bytes", "4096"},
		envMap(map[string]string{"HTTP_READ_TIMEOUT": "2500", "HTTP_WRITE_TIMEOUT": "10s", "HTTP_IDLE_TIMEOUT": "1m"}), io.Discard)
	if err != nil || cfg.HTTP.ReadTimeout != 2500*time.Millisecond || cfg.HTTP.WriteTimeout != 90*time.Second ||
		cfg.HTTP.IdleTimeout != time.Minute || cfg.HTTP.MaxHeaderBytes != 4096 {
		t.Fatalf("set: %+v, %v", cfg.HTTP, err)
	}
	for name, v := range map[string]string{"HTTP_READ_HEADER_TIMEOUT": "0", "HTTP_MAX_HEADER_BYTES": "lots"} {
		if _, err := ParseConfig(nil, envMap(map[string]string{name: v}), io.Discard); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%s: %v", name, v, err)
		}
	}
}
