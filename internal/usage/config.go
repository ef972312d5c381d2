package usage

import (
	"errors"
	"time"

	"github.com/bunting-flags/bunting/internal/config"
)

// Config bounds how SDK reports are kept before they are written, and how
// long an SDK instance stays listed.
type Config struct {
	// FlushInterval is how often pending counts are written
	// (USAGE_FLUSH_INTERVAL); a kill -9 loses at most this much usage.
	FlushInterval time.Duration
	// MaxPendingKeys caps the distinct keys (flag × application ×
	// environment × hour, variants, instances, applications) held between
	// flushes (USAGE_MAX_PENDING_KEYS). Reaching it starts a flush at once;
	// while that flush is written, keys past a second cap's worth are
	// dropped, so memory stays bounded whatever names clients make up.
	MaxPendingKeys int
	// InstanceStaleAfter is how long an SDK instance stays listed without
	// registering or reporting (APPLICATION_INSTANCE_STALE_AFTER).
	InstanceStaleAfter time.Duration
}

// DefaultConfig returns the defaults of Options.
func DefaultConfig() Config {
	var c Config
	config.Defaults(c.Options())
	return c
}

// Options are the usage options, bound to c.
func (c *Config) Options() []config.Option {
	return []config.Option{
		{Name: "usage-flush-interval", Env: []string{"USAGE_FLUSH_INTERVAL"}, Flag: "usage-flush-interval", Default: "5s",
			Usage: "how often SDK usage counted in memory is written to the database (a kill -9 loses at most this much)", Value: config.Duration(&c.FlushInterval)},
		{Name: "usage-max-pending-keys", Env: []string{"USAGE_MAX_PENDING_KEYS"}, Flag: "usage-max-pending-keys", Default: "20000",
			Usage: "most distinct usage keys (flag × application × environment × hour, instances) held between writes; reaching it writes at once", Value: config.Int(&c.MaxPendingKeys, 100, 10_000_000)},
		{Name: "application-instance-stale-after", Env: []string{"APPLICATION_INSTANCE_STALE_AFTER"}, Flag: "application-instance-stale-after", Default: "24h",
			Usage: "SDK instances not seen for this long drop out of the applications view", Value: config.Duration(&c.InstanceStaleAfter)},
	}
}

// Validate checks the values.
func (c Config) Validate() error {
	var errs []error
	if c.FlushInterval <= 0 {
		errs = append(errs, errors.New("USAGE_FLUSH_INTERVAL must be positive"))
	}
	if c.MaxPendingKeys < 100 {
		errs = append(errs, errors.New("USAGE_MAX_PENDING_KEYS must be at least 100"))
	}
	if c.InstanceStaleAfter <= 0 {
		errs = append(errs, errors.New("APPLICATION_INSTANCE_STALE_AFTER must be positive"))
	}
	return errors.Join(errs...)
}
