package server

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/httpserver"
	"github.com/bunting-flags/bunting/internal/signals"
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
	// LogLevel is debug, info, warn or error.
	LogLevel string
	// JSONLogger switches the logs to one JSON object per line.
	JSONLogger bool
	// BodyLimit is the largest accepted request body in bytes.
	BodyLimit int64
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
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		Port:                 4242,
		DatabasePath:         "data/bunting.db",
		LogLevel:             "info",
		BodyLimit:            100 * 1024,
		RevisionPollInterval: time.Second,
		Signals:              signals.DefaultConfig(),
		HTTP:                 httpserver.DefaultLimits(),
		Streaming:            DefaultStreamingConfig(),
	}
}

// LookupEnv reads one environment variable.
type LookupEnv func(string) (string, bool)

// ParseConfig reads the environment through env, then the flags in args.
// Invalid values are reported as errors naming the variable or flag.
func ParseConfig(args []string, env LookupEnv, output io.Writer) (Config, error) {
	cfg := DefaultConfig()
	if err := cfg.fromEnv(env); err != nil {
		return cfg, err
	}
	fs := flag.NewFlagSet("bunting server", flag.ContinueOnError)
	fs.SetOutput(output)
	fs.IntVar(&cfg.Port, "port", cfg.Port, "listening port (PORT, HTTP_PORT)")
	fs.StringVar(&cfg.Host, "host", cfg.Host, "listening address (HTTP_HOST)")
	fs.StringVar(&cfg.DatabaseURL, "database-url", cfg.DatabaseURL, "postgres:// URL; empty means SQLite (DATABASE_URL)")
	fs.StringVar(&cfg.DatabasePath, "database-path", cfg.DatabasePath, "SQLite file (DATABASE_PATH)")
	fs.StringVar(&cfg.LogLevel, "log-level", cfg.LogLevel, "debug, info, warn or error (LOG_LEVEL)")
	fs.BoolVar(&cfg.JSONLogger, "json-logger", cfg.JSONLogger, "log one JSON object per line (JSON_LOGGER)")
	fs.Int64Var(&cfg.BodyLimit, "body-limit", cfg.BodyLimit, "largest request body in bytes (BODY_LIMIT)")
	fs.DurationVar(&cfg.RevisionPollInterval, "revision-poll", cfg.RevisionPollInterval, "how often to look for changes by other instances (REVISION_POLL_INTERVAL)")
	fs.StringVar(&cfg.BaseURL, "base-url", cfg.BaseURL, "externally visible address (BUNTING_URL)")
	cfg.Streaming.flags(fs)
	for _, o := range httpserver.Options() {
		fs.Func(o.Flag, fmt.Sprintf("%s (%s); default %s", o.Usage, o.Env, o.Default()), func(v string) error { return o.Set(&cfg.HTTP, v) })
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return cfg, cfg.Validate()
}

func (c *Config) fromEnv(env LookupEnv) error {
	get := func(name string) (string, bool) {
		v, ok := env(name)
		return strings.TrimSpace(v), ok && strings.TrimSpace(v) != ""
	}
	for _, name := range []string{"HTTP_PORT", "PORT"} {
		if v, ok := get(name); ok {
			p, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%s: %q is not a port number", name, v)
			}
			c.Port = p
		}
	}
	if v, ok := get("HTTP_HOST"); ok {
		c.Host = v
	}
	if v, ok := get("DATABASE_URL"); ok {
		c.DatabaseURL = v
	}
	if v, ok := get("DATABASE_PATH"); ok {
		c.DatabasePath = v
	}
	if v, ok := get("LOG_LEVEL"); ok {
		c.LogLevel = strings.ToLower(v)
	}
	if v, ok := get("JSON_LOGGER"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("JSON_LOGGER: %q is not true or false", v)
		}
		c.JSONLogger = b
	}
	if v, ok := get("BODY_LIMIT"); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("BODY_LIMIT: %q is not a number of bytes", v)
		}
		c.BodyLimit = n
	}
	if v, ok := get("REVISION_POLL_INTERVAL"); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("REVISION_POLL_INTERVAL: %v", err)
		}
		c.RevisionPollInterval = d
	}
	if v, ok := get("BUNTING_URL"); ok {
		c.BaseURL = v
	}
	c.InitAdminTokens = splitList(env, "INIT_ADMIN_API_TOKENS")
	c.InitClientTokens = splitList(env, "INIT_BACKEND_API_TOKENS")
	if len(c.InitClientTokens) == 0 {
		c.InitClientTokens = splitList(env, "INIT_CLIENT_API_TOKENS")
	}
	c.InitFrontendTokens = splitList(env, "INIT_FRONTEND_API_TOKENS")
	if err := c.HTTP.FromEnv(env); err != nil {
		return err
	}
	if err := c.Streaming.fromEnv(get); err != nil {
		return err
	}
	return c.Signals.FromEnv(env)
}

func splitList(env LookupEnv, name string) []string {
	v, _ := env(name)
	var out []string
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
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
	if err := c.Streaming.validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// tokenScope splits "<project>:<environment>.<secret>"; missing parts are "*".
func tokenScope(secret string) (project, environment string) {
	project, environment = "*", "*"
	colon := strings.Index(secret, ":")
	if colon < 0 {
		return
	}
	if colon > 0 {
		project = secret[:colon]
	}
	rest := secret[colon+1:]
	if dot := strings.Index(rest, "."); dot > 0 {
		environment = rest[:dot]
	}
	return
}
