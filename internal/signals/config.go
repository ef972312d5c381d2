package signals

import (
	"errors"
	"fmt"
	"time"

	"github.com/bunting-flags/bunting/internal/config"
)

// Config holds the signal and action limits. The server reads them with
// its own options (see Options); every name is also read with the UNLEASH_
// prefix, as the reference spells its variables.
type Config struct {
	// EndpointsLimit is the most signal endpoints (SIGNAL_ENDPOINTS_LIMIT, default 5).
	EndpointsLimit int
	// TokensPerEndpointLimit is the most tokens per endpoint
	// (SIGNAL_TOKENS_PER_ENDPOINT_LIMIT, default 5).
	TokensPerEndpointLimit int
	// RatePerSecond is how many signals one endpoint accepts per second,
	// counted in the database across instances
	// (SIGNAL_ENDPOINT_RATE_LIMIT_PER_SECOND, default 1).
	RatePerSecond int
	// PayloadLimit is the largest signal body in bytes
	// (SIGNAL_PAYLOAD_LIMIT, default 100 kB).
	PayloadLimit int64
	// ActionSetsPerProjectLimit, FiltersLimit, FilterValuesLimit and
	// ActionsLimit bound action sets (ACTION_SETS_PER_PROJECT_LIMIT 5,
	// ACTION_SET_FILTERS_LIMIT 5, ACTION_SET_FILTER_VALUES_LIMIT 25,
	// ACTION_SET_ACTIONS_LIMIT 10).
	ActionSetsPerProjectLimit int
	FiltersLimit              int
	FilterValuesLimit         int
	ActionsLimit              int
	// PollInterval is how often a worker looks for signals received by
	// other instances (SIGNAL_POLL_INTERVAL, default 250ms); signals
	// received by the same instance wake it at once.
	PollInterval time.Duration
	// LeaseDuration is how long a worker's claim to process signals lasts
	// without renewal before another instance may take over (default 5s).
	LeaseDuration time.Duration
}

// DefaultConfig returns the reference's defaults (those of Options) and
// the lease.
func DefaultConfig() Config {
	c := Config{LeaseDuration: 5 * time.Second}
	config.Defaults(c.Options())
	return c
}

// Options are the signal and action options, bound to c; each is read as
// UNLEASH_<name>, then <name>, as the reference spells its variables.
func (c *Config) Options() []config.Option {
	const max = 1<<31 - 1
	return []config.Option{
		limit("SIGNAL_ENDPOINTS_LIMIT", "5", "most signal endpoints", config.Int(&c.EndpointsLimit, 0, max)),
		limit("SIGNAL_TOKENS_PER_ENDPOINT_LIMIT", "5", "most tokens per signal endpoint", config.Int(&c.TokensPerEndpointLimit, 0, max)),
		limit("SIGNAL_ENDPOINT_RATE_LIMIT_PER_SECOND", "1", "signals one endpoint accepts per second (more: 429), counted across instances", config.Int(&c.RatePerSecond, 1, max)),
		limit("SIGNAL_PAYLOAD_LIMIT", "102400", "largest signal body in bytes (larger: 413)", config.Int64(&c.PayloadLimit, 1)),
		limit("ACTION_SETS_PER_PROJECT_LIMIT", "5", "most action sets per project", config.Int(&c.ActionSetsPerProjectLimit, 0, max)),
		limit("ACTION_SET_FILTERS_LIMIT", "5", "most payload filters per action set", config.Int(&c.FiltersLimit, 0, max)),
		limit("ACTION_SET_FILTER_VALUES_LIMIT", "25", "most values per payload filter", config.Int(&c.FilterValuesLimit, 0, max)),
		limit("ACTION_SET_ACTIONS_LIMIT", "10", "most actions per action set", config.Int(&c.ActionsLimit, 0, max)),
		limit("SIGNAL_POLL_INTERVAL", "250ms", "how often a worker looks for signals other instances received", config.Duration(&c.PollInterval)),
	}
}

// limit is an environment-only option read as UNLEASH_<name>, then <name>.
func limit(name, def, usage string, v config.Value) config.Option {
	return config.Option{Name: name, Env: []string{"UNLEASH_" + name, name}, Default: def, Usage: usage, Value: v}
}

// FromEnv overrides c with the variables set in the environment.
func (c *Config) FromEnv(lookup func(string) (string, bool)) error {
	return config.FromEnv(c.Options(), lookup)
}

// Validate rejects limits that make no sense.
func (c Config) Validate() error {
	var errs []error
	positive := map[string]int{
		"SIGNAL_ENDPOINTS_LIMIT":                c.EndpointsLimit,
		"SIGNAL_TOKENS_PER_ENDPOINT_LIMIT":      c.TokensPerEndpointLimit,
		"SIGNAL_ENDPOINT_RATE_LIMIT_PER_SECOND": c.RatePerSecond,
		"ACTION_SETS_PER_PROJECT_LIMIT":         c.ActionSetsPerProjectLimit,
		"ACTION_SET_FILTERS_LIMIT":              c.FiltersLimit,
		"ACTION_SET_FILTER_VALUES_LIMIT":        c.FilterValuesLimit,
		"ACTION_SET_ACTIONS_LIMIT":              c.ActionsLimit,
	}
	for name, v := range positive {
		if v < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative (got %d)", name, v))
		}
	}
	if c.RatePerSecond == 0 {
		errs = append(errs, errors.New("SIGNAL_ENDPOINT_RATE_LIMIT_PER_SECOND must be at least 1"))
	}
	if c.PayloadLimit <= 0 {
		errs = append(errs, errors.New("SIGNAL_PAYLOAD_LIMIT must be positive"))
	}
	if c.PollInterval <= 0 {
		errs = append(errs, errors.New("SIGNAL_POLL_INTERVAL must be positive"))
	}
	if c.LeaseDuration <= 0 {
		errs = append(errs, errors.New("the signal processing lease must be positive"))
	}
	return errors.Join(errs...)
}
