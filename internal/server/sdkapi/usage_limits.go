package sdkapi

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// What SDKs report (metrics and registrations) is stored only within
// these bounds: any holder of a frontend token, which is public, can post.
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

// checkRegistration checks a registration's values once the required
// properties are there.
func checkRegistration(b registerBody) error {
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

// knownUsage turns reported counts into the usage to store: negative
// counts are a 400; flags the calling token cannot see in its environment,
// and variants those flags do not have ("disabled" excepted), are dropped,
// as Unleash drops unknown flags. So what one report stores is bounded by
// the configuration, whatever names a client makes up.
func (s *API) knownUsage(r *http.Request, toggles map[string]reportedToggle) (map[string]store.FlagUsage, error) {
	for name, t := range toggles {
		if t.Yes < 0 || t.No < 0 {
			return nil, apierr.Validation("The `bucket.toggles.%s` counts must not be negative.", name)
		}
		for v, n := range t.Variants {
			if n < 0 {
				return nil, apierr.Validation("The `bucket.toggles.%s.variants.%s` count must not be negative.", name, v)
			}
		}
	}
	usage := map[string]store.FlagUsage{}
	if len(toggles) == 0 {
		return usage, nil
	}
	cs, err := s.client.config(r)
	if err != nil {
		return nil, err
	}
	p := domain.PrincipalFrom(r.Context())
	for name, t := range toggles {
		flag := cs.Lookup(p.Environment, name)
		if flag == nil || !p.CanSeeProject(flag.Project) {
			continue
		}
		u := store.FlagUsage{Yes: t.Yes, No: t.No}
		for v, n := range t.Variants {
			if flag.HasVariant(v) {
				if u.Variants == nil {
					u.Variants = map[string]int64{}
				}
				u.Variants[v] = n
			}
		}
		usage[name] = u
	}
	return usage, nil
}
