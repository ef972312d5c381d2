package adminapi

import (
	"net/http"
	"time"

	"github.com/bunting-flags/bunting/internal/buildinfo"
	"github.com/bunting-flags/bunting/internal/httpjson"
)

// Instance is what GET /api/admin/ui-config says about this server besides
// its build: where it is reached.
type Instance struct {
	// BaseURL is the externally visible address (BUNTING_URL); empty means
	// the address the request came to.
	BaseURL string
	// BasePath is the path prefix everything is served under (BASE_PATH).
	BasePath string
}

// SetInstance tells the ui-config route where this server is reached.
func (s *API) SetInstance(i Instance) { s.instance = i }

// UIConfig is Unleash's answer to GET /api/admin/ui-config, the part of it
// that describes the instance: tools read `version` (and `versionInfo`) to
// learn which server they talk to.
type UIConfig struct {
	Name                string          `json:"name"`
	Version             string          `json:"version"`
	Environment         string          `json:"environment"`
	UnleashURL          string          `json:"unleashUrl"`
	BaseURIPath         string          `json:"baseUriPath"`
	AuthenticationType  string          `json:"authenticationType"`
	EmailEnabled        bool            `json:"emailEnabled"`
	DisablePasswordAuth bool            `json:"disablePasswordAuth"`
	MaintenanceMode     bool            `json:"maintenanceMode"`
	Flags               map[string]bool `json:"flags"`
	VersionInfo         UIVersionInfo   `json:"versionInfo"`
}

// UIVersionInfo is ui-config's versionInfo. Bunting does not look for newer
// releases, so latest is empty and isLatest true, as Unleash answers with
// its version check turned off.
type UIVersionInfo struct {
	Current struct {
		// OSS is the version with the commit as semver build metadata
		// ("1.2.3+0123456789ab"), the way Unleash writes a build's revision.
		OSS string `json:"oss"`
	} `json:"current"`
	Latest   struct{} `json:"latest"`
	IsLatest bool     `json:"isLatest"`
	// BuildDate is when the binary was built (RFC 3339), absent when unknown.
	BuildDate string `json:"buildDate,omitempty"`
}

func (s *API) uiConfig(w http.ResponseWriter, r *http.Request) error {
	b := buildinfo.Get()
	url := s.instance.BaseURL
	if url == "" {
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		url = scheme + "://" + r.Host + s.instance.BasePath
	}
	c := UIConfig{
		Name: "Bunting", Version: b.Version, Environment: "Open Source",
		UnleashURL: url, BaseURIPath: s.instance.BasePath, AuthenticationType: "open-source",
		Flags: map[string]bool{},
	}
	c.VersionInfo.Current.OSS = b.Version
	if b.Commit != "" {
		c.VersionInfo.Current.OSS += "+" + b.ShortCommit()
	}
	c.VersionInfo.IsLatest = true
	if !b.Date.IsZero() {
		c.VersionInfo.BuildDate = b.Date.Format(time.RFC3339)
	}
	return httpjson.Write(w, http.StatusOK, c)
}
