package integrations

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/config"
	"github.com/bunting-flags/bunting/internal/secretbox"
)

// Config holds the integration settings; the server reads them with its
// own options (see Options).
type Config struct {
	// AllowedTargets lists the hosts (by name, case-insensitive) and the
	// addresses or CIDR prefixes that deliveries may reach although they
	// are loopback, private, link-local or otherwise not public
	// (INTEGRATION_ALLOWED_TARGETS).
	AllowedTargets []string
	// AllowHTTP accepts http:// targets everywhere; without it only
	// targets named in AllowedTargets may use http (INTEGRATION_ALLOW_HTTP).
	AllowHTTP bool
	// SecretKey encrypts the secret parameters at rest
	// (INTEGRATION_SECRET_KEY); without it the server's secrets key
	// (Secrets) is used, and without that a key kept in the database.
	SecretKey string
	// Secrets is the server's secrets box (internal/secretbox). Set by the
	// server, not an option.
	Secrets *secretbox.Box
	// RequestTimeout bounds one delivery attempt (INTEGRATION_REQUEST_TIMEOUT, 10s).
	RequestTimeout time.Duration
	// RetryWindow is how long a delivery is retried before it is marked
	// failed (INTEGRATION_RETRY_WINDOW, 24h).
	RetryWindow time.Duration
	// LogRetentionDays and LogRetentionCount bound the delivery log: rows
	// older than the days go, and each integration keeps its newest count
	// rows (INTEGRATION_LOG_RETENTION_DAYS 7, INTEGRATION_LOG_RETENTION_COUNT 1000).
	LogRetentionDays  int
	LogRetentionCount int
	// LeaseDuration is how long the delivering instance's lease lasts
	// without renewal before another instance takes over (5s).
	LeaseDuration time.Duration
	// PollInterval is how often the worker renews its lease and looks for
	// work when no change woke it (1s).
	PollInterval time.Duration
	// RetryBase is the first retry's delay; each further one doubles, up
	// to an hour, with jitter (1s).
	RetryBase time.Duration

	// allowed is AllowedTargets parsed (set by Validate).
	allowedHosts    []string
	allowedPrefixes []netip.Prefix
}

// DefaultConfig returns the defaults of Options and the internal timings.
func DefaultConfig() Config {
	c := Config{LeaseDuration: 5 * time.Second, PollInterval: time.Second, RetryBase: time.Second}
	config.Defaults(c.Options())
	return c
}

// Options are the integration options, bound to c.
func (c *Config) Options() []config.Option {
	return []config.Option{
		{Name: "INTEGRATION_ALLOWED_TARGETS", Env: []string{"INTEGRATION_ALLOWED_TARGETS", "UNLEASH_ALLOW_LIST_INTEGRATION"}, Shown: "none",
			Usage: "comma list of hosts and CIDR prefixes integrations may deliver to although they are loopback, private, link-local or metadata addresses (and may reach over http)",
			Value: config.List(&c.AllowedTargets)},
		{Name: "INTEGRATION_ALLOW_HTTP", Env: []string{"INTEGRATION_ALLOW_HTTP"}, Default: "false",
			Usage: "accept http:// integration targets anywhere (otherwise https only, but for allowed targets)", Value: config.Bool(&c.AllowHTTP)},
		{Name: "INTEGRATION_SECRET_KEY", Env: []string{"INTEGRATION_SECRET_KEY"}, Shown: "SECRETS_KEY (or the SQLite key file); on PostgreSQL without it, a key kept in the database",
			Usage: "passphrase (16+ characters) that encrypts integrations' secret parameters at rest", Value: config.String(&c.SecretKey)},
		{Name: "INTEGRATION_REQUEST_TIMEOUT", Env: []string{"INTEGRATION_REQUEST_TIMEOUT"}, Default: "10s",
			Usage: "longest delivery attempt", Value: config.Duration(&c.RequestTimeout)},
		{Name: "INTEGRATION_RETRY_WINDOW", Env: []string{"INTEGRATION_RETRY_WINDOW"}, Default: "24h",
			Usage: "how long a failing delivery is retried (exponential backoff with jitter) before it is marked failed", Value: config.Duration(&c.RetryWindow)},
		{Name: "INTEGRATION_LOG_RETENTION_DAYS", Env: []string{"INTEGRATION_LOG_RETENTION_DAYS"}, Default: "7",
			Usage: "days the delivery log keeps an attempt", Value: config.Int(&c.LogRetentionDays, 1, 3650)},
		{Name: "INTEGRATION_LOG_RETENTION_COUNT", Env: []string{"INTEGRATION_LOG_RETENTION_COUNT"}, Default: "1000",
			Usage: "most delivery log rows kept per integration", Value: config.Int(&c.LogRetentionCount, 1, 1_000_000)},
	}
}

// Validate parses the allowed targets and rejects settings that make no
// sense.
func (c *Config) Validate() error {
	var errs []error
	c.allowedHosts, c.allowedPrefixes = nil, nil
	for _, t := range c.AllowedTargets {
		t = strings.TrimSpace(t)
		if p, err := netip.ParsePrefix(t); err == nil {
			c.allowedPrefixes = append(c.allowedPrefixes, p.Masked())
			continue
		}
		if a, err := netip.ParseAddr(strings.Trim(t, "[]")); err == nil {
			c.allowedPrefixes = append(c.allowedPrefixes, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		if !validHostName(t) {
			errs = append(errs, fmt.Errorf("INTEGRATION_ALLOWED_TARGETS: %q is neither a host name, an address nor a CIDR prefix", t))
			continue
		}
		c.allowedHosts = append(c.allowedHosts, strings.ToLower(strings.TrimSuffix(t, ".")))
	}
	if c.SecretKey != "" && len(c.SecretKey) < 16 {
		errs = append(errs, errors.New("INTEGRATION_SECRET_KEY must have at least 16 characters"))
	}
	if c.RequestTimeout <= 0 {
		errs = append(errs, errors.New("INTEGRATION_REQUEST_TIMEOUT must be positive"))
	}
	if c.RetryWindow < 0 {
		errs = append(errs, errors.New("INTEGRATION_RETRY_WINDOW must not be negative"))
	}
	if c.LogRetentionDays < 1 || c.LogRetentionCount < 1 {
		errs = append(errs, errors.New("INTEGRATION_LOG_RETENTION_DAYS and INTEGRATION_LOG_RETENTION_COUNT must be at least 1"))
	}
	if c.LeaseDuration <= 0 || c.PollInterval <= 0 || c.RetryBase <= 0 {
		errs = append(errs, errors.New("the integration worker's lease, poll interval and retry base must be positive"))
	}
	return errors.Join(errs...)
}

// validHostName reports whether s is a DNS host name (letters, digits,
// hyphens and underscores in dot-separated labels).
func validHostName(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}
