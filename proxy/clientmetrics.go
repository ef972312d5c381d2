// The usage server-side and front-end SDKs post to the proxy
// (/client/metrics on every prefix): the body's shape, its validation and
// the handler that adds it to the proxy's own bucket (sdkusage.go).

package proxy

import (
	"net/http"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
)

// sdkMetrics is the body SDKs post to /proxy/client/metrics.
type sdkMetrics struct {
	AppName    *string `json:"appName"`
	InstanceID string  `json:"instanceId"`
	Bucket     *struct {
		Start   *string              `json:"start"`
		Stop    *string              `json:"stop"`
		Toggles map[string]sdkToggle `json:"toggles"`
	} `json:"bucket"`
}

// sdkToggle is one flag's counts in an SDK's metrics post.
type sdkToggle struct {
	Yes      int64            `json:"yes"`
	No       int64            `json:"no"`
	Variants map[string]int64 `json:"variants"`
}

// serveClientMetrics adds what an SDK posts about the proxy's flags to
// its own bucket.
func (p *Proxy) serveClientMetrics(w http.ResponseWriter, r *http.Request) error {
	var m sdkMetrics
	if err := p.readJSON(w, r, &m); err != nil {
		return err
	}
	if err := validateSDKMetrics(&m); err != nil {
		return err
	}
	p.addSDKUsage(m.Bucket.Toggles)
	return httpjson.WriteOK(w)
}

func validateSDKMetrics(m *sdkMetrics) error {
	if m.AppName == nil || *m.AppName == "" {
		return apierr.Validation("appName is required")
	}
	if m.Bucket == nil {
		return apierr.Validation("bucket is required")
	}
	for field, v := range map[string]*string{"bucket.start": m.Bucket.Start, "bucket.stop": m.Bucket.Stop} {
		if v == nil {
			return apierr.Validation("%s is required", field)
		}
		if _, err := time.Parse(time.RFC3339Nano, *v); err != nil {
			return apierr.Validation("%s must be a date-time", field)
		}
	}
	for name, t := range m.Bucket.Toggles {
		if t.Yes < 0 || t.No < 0 {
			return apierr.Validation("bucket.toggles.%s: counts must be >= 0", name)
		}
		for v, n := range t.Variants {
			if n < 0 {
				return apierr.Validation("bucket.toggles.%s.variants.%s must be >= 0", name, v)
			}
		}
	}
	return nil
}
