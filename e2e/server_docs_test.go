package e2e

import (
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestServerDocsPageWorksOffline gives the server's admin API page the same
// check as the proxy's: Swagger UI renders every operation of
// /docs/openapi.json and no request leaves the server.
func TestServerDocsPageWorksOffline(t *testing.T) {
	h := servertest.Start(t, servertest.NewSQLite(t))
	checkDocsPageOffline(t, h.URL, "/docs/openapi", "/docs/openapi.json")
}
