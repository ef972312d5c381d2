package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/buildinfo"
	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// GET /api/admin/ui-config answers the running build's version the way
// Unleash does (version, versionInfo.current.oss with the commit as build
// metadata, buildDate) and where the server is reached; it needs a
// signed-in admin principal like the rest of the admin API.
func TestUIConfigVersion(t *testing.T) {
	t.Parallel()
	h := servertest.Start(t, servertest.NewSQLite(t), func(c *server.Config) { c.BasePath = "/bunting" })
	got := h.Do(t, "GET", "/bunting/api/admin/ui-config", h.AdminToken, nil).Want(t, 200).Map(t)
	b := buildinfo.Get()
	if got["version"] != b.Version || got["version"] == "" {
		t.Errorf("version %v, want %q", got["version"], b.Version)
	}
	if got["baseUriPath"] != "/bunting" || !strings.HasPrefix(got["unleashUrl"].(string), "http://127.0.0.1:") || !strings.HasSuffix(got["unleashUrl"].(string), "/bunting") {
		t.Errorf("baseUriPath %v, unleashUrl %v", got["baseUriPath"], got["unleashUrl"])
	}
	vi, _ := got["versionInfo"].(map[string]any)
	current, _ := vi["current"].(map[string]any)
	wantOSS := b.Version
	if b.Commit != "" {
		wantOSS += "+" + b.ShortCommit()
	}
	if current["oss"] != wantOSS || vi["isLatest"] != true {
		t.Errorf("versionInfo %v, want current.oss %q", vi, wantOSS)
	}
	if d, ok := vi["buildDate"].(string); ok {
		if _, err := time.Parse(time.RFC3339, d); err != nil || b.Date.IsZero() {
			t.Errorf("buildDate %q: %v", d, err)
		}
	} else if !b.Date.IsZero() {
		t.Errorf("no buildDate, want %s", b.Date)
	}
	h.Do(t, "GET", "/bunting/api/admin/ui-config", "", nil).Want(t, 401)
	h.Do(t, "GET", "/bunting/api/admin/ui-config", h.ClientToken, nil).Want(t, 403)
}
