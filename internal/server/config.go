package server

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/changerequests"
	"github.com/bunting-flags/bunting/internal/config"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpserver"
	"github.com/bunting-flags/bunting/internal/integrations"
	"github.com/bunting-flags/bunting/internal/secretbox"
	"github.com/bunting-flags/bunting/internal/server/sdkapi"
	"github.com/bunting-flags/bunting/internal/signals"
	"github.com/bunting-flags/bunting/internal/sso"
	"github.com/bunting-flags/bunting/internal/usage"
)

// Config is the flag server's configuration, parsed once from the
// environment and then from command-line flags (flags win).
type Config struct {
	// Port is the listening port (PORT or HTTP_PORT; default 4242).
	Port int
	// Host is the listening address (HTTP_HOST; default all interfaces).
	Host string
	// DatabaseURL selects PostgreSQL when it is a postgres:// URL.
	DatabaseURL string
	// DatabasePath is the SQLite file used when DatabaseURL is empty.
	DatabasePath string
	// InitAdminTokens, InitClientTokens and InitFrontendTokens are created
	// when the database holds no API token yet.
	InitAdminTokens    []string
	InitClientTokens   []string
	InitFrontendTokens []string
	// InitAdminUser and InitAdminPassword name the first person with the
	// Admin role, created when the database holds no person yet (without a
	// password one is generated and printed once).
	InitAdminUser     string
	InitAdminPassword string
	// BasePath serves everything (web UI and APIs) under a prefix such as
	// /bunting, for running behind a reverse proxy (BASE_PATH).
	BasePath string
	// LogLevel is debug, info, warn or error.
	LogLevel string
	// JSONLogger switches the logs to one JSON object per line.
	JSONLogger bool
	// BodyLimit is the largest accepted request body in bytes.
	BodyLimit int64
	// ImportBodyLimit is the largest body of the routes that take whole
	// documents of flags (features-batch import and validate, state
	// import): a thousand flags with their strategies are about 300 kB.
	ImportBodyLimit int64
	// RevisionPollInterval is how often the server looks for changes made
	// by other instances sharing the database.
	RevisionPollInterval time.Duration
	// BaseURL is the externally visible address, used in printed URLs.
	BaseURL string
	// Signals holds the signal endpoint and action limits.
	Signals signals.Config
	// HTTP holds the connection timeouts and the header size limit.
	HTTP httpserver.Limits
	// Streaming holds the limits of GET /api/client/streaming.
	Streaming StreamingConfig
	// Secrets holds the key that seals stored secrets (SECRETS_KEY).
	Secrets secretbox.Config
	// SSO holds single sign-on's options (OIDC_*).
	SSO sso.Config
	// Integrations holds the integrations' delivery settings.
	Integrations integrations.Config
	// Usage says how SDK usage is kept before it is written, and how long
	// SDK instances stay listed.
	Usage usage.Config
	// ChangeRequests holds the scheduler's timings (tests shorten them).
	ChangeRequests changerequests.Config
}

// StreamingConfig bounds GET /api/client/streaming (sdkapi.StreamingConfig).
type StreamingConfig = sdkapi.StreamingConfig

// DefaultConfig returns the defaults, those of Options.
func DefaultConfig() Config {
	var c Config
	c.Signals = signals.DefaultConfig()
	c.Integrations = integrations.DefaultConfig()
	c.ChangeRequests = changerequests.DefaultConfig()
	config.Defaults(c.Options())
	return c
}

// Options are the server's options, bound to c, in the order docs/configuration.md
// shows them: its own, the connection limits, the streaming limits, SDK
// usage, the signal limits, single sign-on, then the integrations' settings.
func (c *Config) Options() []config.Option {
	opts := []config.Option{
		{Name: "port", Env: []string{"PORT", "HTTP_PORT"}, Flag: "port", Default: "4242", Usage: "listening port", Value: config.Port(&c.Port)},
		{Name: "host", Env: []string{"HTTP_HOST"}, Flag: "host", Shown: "all interfaces", Usage: "listening address", Value: config.String(&c.Host)},
	}
	opts = append(opts, DatabaseOptions(&c.DatabaseURL, &c.DatabasePath)...)
	opts = append(opts, []config.Option{
		{Name: "INIT_ADMIN_API_TOKENS", Env: []string{"INIT_ADMIN_API_TOKENS"}, Usage: "comma list of admin tokens (*:*.<secret>), created when the database has no token", Value: config.List(&c.InitAdminTokens)},
		{Name: "INIT_CLIENT_API_TOKENS", Env: []string{"INIT_BACKEND_API_TOKENS", "INIT_CLIENT_API_TOKENS"}, Usage: "comma list of client tokens (<project>:<environment>.<secret>)", Value: config.List(&c.InitClientTokens)},
		{Name: "INIT_FRONTEND_API_TOKENS", Env: []string{"INIT_FRONTEND_API_TOKENS"}, Usage: "comma list of frontend tokens", Value: config.List(&c.InitFrontendTokens)},
		{Name: "log-level", Env: []string{"LOG_LEVEL"}, Flag: "log-level", Default: "info", Usage: "debug, info, warn or error", Value: config.OneOf(&c.LogLevel, "debug", "info", "warn", "error")},
		{Name: "json-logger", Env: []string{"JSON_LOGGER"}, Flag: "json-logger", Default: "false", Usage: "one JSON object per log line", Value: config.Bool(&c.JSONLogger)},
		{Name: "body-limit", Env: []string{"BODY_LIMIT"}, Flag: "body-limit", Default: "102400", Usage: "largest request body in bytes (larger: 413)", Value: config.Int64(&c.BodyLimit, 1)},
		{Name: "import-body-limit", Env: []string{"IMPORT_BODY_LIMIT"}, Flag: "import-body-limit", Default: "10485760", Usage: "largest body in bytes of the features-batch import and validate and the state import, which take whole documents of flags (larger: 413)", Value: config.Int64(&c.ImportBodyLimit, 1)},
		{Name: "revision-poll", Env: []string{"REVISION_POLL_INTERVAL"}, Flag: "revision-poll", Default: "1s", Usage: "how often an instance looks for changes made by others (a safety net: on PostgreSQL they arrive at once by LISTEN/NOTIFY)", Value: config.Duration(&c.RevisionPollInterval)},
		{Name: "base-url", Env: []string{"BUNTING_URL"}, Flag: "base-url", Usage: "externally visible address", Value: config.String(&c.BaseURL)},
		{Name: "base-path", Env: []string{"BASE_PATH"}, Flag: "base-path", Usage: "serve the web UI and the APIs under this path prefix (for example /bunting)", Value: config.String(&c.BasePath)},
		{Name: "INIT_ADMIN_USER", Env: []string{"INIT_ADMIN_USER"}, Shown: "admin", Usage: "the first person with the Admin role, created when the database has no person", Value: config.String(&c.InitAdminUser)},
		{Name: "INIT_ADMIN_PASSWORD", Env: []string{"INIT_ADMIN_PASSWORD"}, Shown: "generated, printed once", Usage: "that person's password (at least 8 characters)", Value: config.String(&c.InitAdminPassword)},
	}...)
	opts = append(opts, httpserver.Options(&c.HTTP)...)
	opts = append(opts, c.Streaming.Options()...)
	opts = append(opts, c.Usage.Options()...)
	opts = append(opts, c.Signals.Options()...)
	opts = append(opts, c.SSO.Options()...)
	opts = append(opts, c.Secrets.Options()...)
	return append(opts, c.Integrations.Options()...)
}

// DatabaseOptions are the options that say which database to use, shared
// by the server and the commands that work on its database (backup,
// restore).
func DatabaseOptions(url, path *string) []config.Option {
	return []config.Option{
		{Name: "database-url", Env: []string{"DATABASE_URL"}, Flag: "database-url", Usage: "postgres://… selects PostgreSQL; empty means SQLite", Value: config.String(url)},
		{Name: "database-path", Env: []string{"DATABASE_PATH"}, Flag: "database-path", Default: "data/bunting.db", Usage: "SQLite file when DATABASE_URL is empty", Value: config.String(path)},
	}
}

// LookupEnv reads one environment variable.
type LookupEnv func(string) (string, bool)

// ParseConfig reads the environment through env, then the flags in args.
// Invalid values are reported as errors naming the option, its variable
// and its flag.
func ParseConfig(args []string, env LookupEnv, output io.Writer) (Config, error) {
	cfg := DefaultConfig()
	if err := config.Load("bunting server", cfg.Options(), env, args, output); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// Validate checks values that parse but make no sense.
func (c Config) Validate() error {
	var errs []error
	if c.Port < 0 || c.Port > 65535 {
		errs = append(errs, fmt.Errorf("port %d is out of range", c.Port))
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		errs = append(errs, fmt.Errorf("LOG_LEVEL %q is not one of debug, info, warn, error", c.LogLevel))
	}
	if c.BodyLimit <= 0 {
		errs = append(errs, fmt.Errorf("BODY_LIMIT must be positive"))
	}
	if c.RevisionPollInterval <= 0 {
		errs = append(errs, fmt.Errorf("REVISION_POLL_INTERVAL must be positive"))
	}
	if c.BasePath != "" && (!strings.HasPrefix(c.BasePath, "/") || strings.HasSuffix(c.BasePath, "/") || strings.ContainsAny(c.BasePath, "?#% ")) {
		errs = append(errs, fmt.Errorf("BASE_PATH %q must start with / and not end with / (for example /bunting)", c.BasePath))
	}
	if c.InitAdminPassword != "" && len(c.InitAdminPassword) < domain.MinPasswordLength {
		errs = append(errs, fmt.Errorf("INIT_ADMIN_PASSWORD must have at least %d characters", domain.MinPasswordLength))
	}
	if err := c.Streaming.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Usage.Validate(); err != nil {
		errs = append(errs, err)
	}
	for _, t := range c.InitAdminTokens {
		if p, e := tokenScope(t); p != "*" || e != "*" {
			errs = append(errs, fmt.Errorf("INIT_ADMIN_API_TOKENS: an admin token must start with *:*. (got scope %s:%s)", p, e))
		}
	}
	for _, t := range c.InitClientTokens {
		if _, e := tokenScope(t); e == "*" {
			errs = append(errs, errors.New("INIT_CLIENT_API_TOKENS: a client token cannot be scoped to all environments"))
		}
	}
	for _, t := range c.InitFrontendTokens {
		if _, e := tokenScope(t); e == "*" {
			errs = append(errs, errors.New("INIT_FRONTEND_API_TOKENS: a frontend token cannot be scoped to all environments"))
		}
	}
	if err := c.Signals.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.HTTP.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Secrets.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.SSO.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := c.Integrations.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
