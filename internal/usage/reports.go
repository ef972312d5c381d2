package usage

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// MetricsBody is what SDKs post to /api/client/metrics and
// /api/frontend/client/metrics (Unleash's clientMetricsSchema; properties
// Bunting does not keep are accepted and ignored). It documents the body;
// AddMetrics reads it with a streaming parser (decode.go).
type MetricsBody struct {
	AppName    string  `json:"appName"`
	InstanceID string  `json:"instanceId"`
	SDKVersion string  `json:"sdkVersion"`
	Bucket     *Bucket `json:"bucket"`
}

// Bucket is the period a report counts and the counts per flag.
type Bucket struct {
	Start   Time                    `json:"start"`
	Stop    Time                    `json:"stop"`
	Toggles map[string]ToggleCounts `json:"toggles"`
}

// ToggleCounts is one flag's counts in a report.
type ToggleCounts struct {
	Yes      int64            `json:"yes"`
	No       int64            `json:"no"`
	Variants map[string]int64 `json:"variants"`
}

// RegisterBody is what SDKs post to /api/client/register and
// /api/frontend/client/register (Unleash's clientApplicationSchema).
type RegisterBody struct {
	AppName    string   `json:"appName"`
	InstanceID string   `json:"instanceId"`
	SDKVersion string   `json:"sdkVersion"`
	Strategies []string `json:"strategies"`
	Started    Time     `json:"started"`
	Interval   *int64   `json:"interval"`
}

// Time is a date-time in a report: an RFC 3339 string or unix
// milliseconds (SDKs send either), or null.
type Time struct{ t *time.Time }

// UnmarshalJSON accepts an RFC 3339 string, a number of milliseconds or null.
func (f *Time) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, []byte("null")) {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return apierr.Validation("%q is not an RFC 3339 date-time", s)
		}
		f.t = &t
		return nil
	}
	ms, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return apierr.Validation("%s is neither a date-time nor a number of milliseconds", b)
	}
	// Only years 0–9999 can be written back as RFC 3339.
	if ms < minMillis || ms > maxMillis {
		return apierr.Validation("%s milliseconds is outside the years 0 to 9999", b)
	}
	t := time.UnixMilli(int64(ms)).UTC()
	f.t = &t
	return nil
}

// The unix milliseconds of 0000-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z.
const (
	minMillis = -62167219200000
	maxMillis = 253402300799999
)

// What SDKs report is kept only within these bounds: any holder of a
// frontend token, which is public, can post.
const (
	// maxReportedText bounds appName, instanceId, sdkVersion and each
	// registered strategy name.
	maxReportedText = 255
	// maxRegisteredStrategies bounds a registration's strategy list.
	maxRegisteredStrategies = 100
)

// checkReportedText rejects a reported value that is too long, not UTF-8
// or holds a NUL (which PostgreSQL cannot store).
func checkReportedText(property, v string) error {
	switch {
	case len(v) > maxReportedText:
		return apierr.Validation("The `%s` property must be at most %d bytes long.", property, maxReportedText)
	case !utf8.ValidString(v) || strings.IndexByte(v, 0) >= 0:
		return apierr.Validation("The `%s` property must be UTF-8 text without NUL characters.", property)
	}
	return nil
}

// checkReporter checks who reports: an application name (required), an
// instance id and an SDK version.
func checkReporter(appName, instanceID, sdkVersion string) error {
	if appName == "" {
		return apierr.Validation("The `appName` property is required. It was not present on the data you sent.")
	}
	for _, f := range [][2]string{{"appName", appName}, {"instanceId", instanceID}, {"sdkVersion", sdkVersion}} {
		if err := checkReportedText(f[0], f[1]); err != nil {
			return err
		}
	}
	return nil
}

// check validates a registration. Server SDKs must list their
// strategies; front-end SDKs need not.
func (b *RegisterBody) check(requireStrategies bool) error {
	missing := ""
	switch {
	case b.AppName == "":
		missing = "appName"
	case b.Interval == nil:
		missing = "interval"
	case b.Started.t == nil:
		missing = "started"
	case requireStrategies && b.Strategies == nil:
		missing = "strategies"
	}
	if missing != "" {
		return apierr.Validation("The `%s` property is required. It was not present on the data you sent.", missing)
	}
	if err := checkReporter(b.AppName, b.InstanceID, b.SDKVersion); err != nil {
		return err
	}
	if *b.Interval < 0 {
		return apierr.Validation("The `interval` property must be a number of milliseconds >= 0.")
	}
	if len(b.Strategies) > maxRegisteredStrategies {
		return apierr.Validation("The `strategies` property may hold at most %d names.", maxRegisteredStrategies)
	}
	for _, name := range b.Strategies {
		if err := checkReportedText("strategies", name); err != nil {
			return err
		}
	}
	return nil
}

// Source is who reports, from the request rather than its body: the API
// token's environment and projects, the kind of SDK (by the API it
// posts to) and the connection's address.
type Source struct {
	Environment string
	Projects    []string
	// SDKType is "backend" (client API) or "frontend" (frontend API).
	SDKType  string
	ClientIP string
}

// Flags says which flags a report may count: those the reporting token
// sees in its environment.
type Flags interface {
	// Flag returns the flag, and false for a flag the token does not see.
	Flag(name []byte) (*KnownFlag, bool)
}

// KnownFlag is a flag as the configuration holds it. Reports are counted
// under these strings, so that pending counts do not keep each report's
// copies alive.
type KnownFlag struct {
	Name string
	// Variants are the names of its variants, of the environment and of
	// its strategies; "disabled", the fallback, is counted too.
	Variants []string
}

// variant returns the configured name of one of f's variants.
func (f *KnownFlag) variant(name []byte) (string, bool) {
	if string(name) == "disabled" {
		return "disabled", true
	}
	for _, v := range f.Variants {
		if v == string(name) {
			return v, true
		}
	}
	return "", false
}
