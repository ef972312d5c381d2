package signals

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Config holds the signal and action limits. The server parses it once from
// the environment with FromEnv; every name is also read with the UNLEASH_
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

// DefaultConfig returns the reference's defaults.
func DefaultConfig() Config {
	return Config{
		EndpointsLimit:            5,
		TokensPerEndpointLimit:    5,
		RatePerSecond:             1,
		PayloadLimit:              100 * 1024,
		ActionSetsPerProjectLimit: 5,
		FiltersLimit:              5,
		FilterValuesLimit:         25,
		ActionsLimit:              10,
		PollInterval:              250 * time.Millisecond,
		LeaseDuration:             5 * time.Second,
	}
}

// FromEnv overrides c with the variables set in the environment.
func (c *Config) FromEnv(lookup func(string) (string, bool)) error {
	get := func(name string) (string, string, bool) {
		for _, n := range []string{"UNLEASH_" + name, name} {
			if v, ok := lookup(n); ok && strings.TrimSpace(v) != "" {
				return n, strings.TrimSpace(v), true
			}
		}
		return "", "", false
	}
	var errs []error
	ints := []struct {
		name string
		dst  *int
	}{
		{"SIGNAL_ENDPOINTS_LIMIT", &c.EndpointsLimit},
		{"SIGNAL_TOKENS_PER_ENDPOINT_LIMIT", &c.TokensPerEndpointLimit},
		{"SIGNAL_ENDPOINT_RATE_LIMIT_PER_SECOND", &c.RatePerSecond},
		{"ACTION_SETS_PER_PROJECT_LIMIT", &c.ActionSetsPerProjectLimit},
		{"ACTION_SET_FILTERS_LIMIT", &c.FiltersLimit},
		{"ACTION_SET_FILTER_VALUES_LIMIT", &c.FilterValuesLimit},
		{"ACTION_SET_ACTIONS_LIMIT", &c.ActionsLimit},
	}
	for _, it := range ints {
		if n, v, ok := get(it.name); ok {
			i, err := strconv.Atoi(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %q is not a whole number", n, v))
				continue
			}
			*it.dst = i
		}
	}
	if n, v, ok := get("SIGNAL_PAYLOAD_LIMIT"); ok {
		i, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not a number of bytes", n, v))
		}
		c.PayloadLimit = i
	}
	if n, v, ok := get("SIGNAL_POLL_INTERVAL"); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %v", n, err))
		}
		c.PollInterval = d
	}
	return errors.Join(errs...)
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
