package proxy

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/config"
	"github.com/bunting-flags/bunting/internal/httpserver"
	"github.com/bunting-flags/bunting/internal/redact"
)

// Config is the whole configuration of the client proxy. LoadConfig fills
// it from the environment and the command line; Go users may also build it
// by hand (DefaultConfig gives the defaults).
type Config struct {
	// UpstreamURL is the API address of the upstream flag server,
	// including "/api" (upstreamUrl, UPSTREAM_URL). Required.
	UpstreamURL string
	// UpstreamAPIToken is the client API token sent upstream
	// (upstreamApiToken, UPSTREAM_API_TOKEN). Required.
	UpstreamAPIToken string
	// ClientKeys are the keys front-end SDKs must send (clientKeys,
	// UPSTREAM_PROXY_CLIENT_KEYS, or the deprecated proxySecrets,
	// UPSTREAM_PROXY_SECRETS). Required.
	ClientKeys []string
	// Port is the listening port (PORT or PROXY_PORT, default 3000).
	Port int
	// ListenAddress is the host to bind (LISTEN_ADDRESS); empty means all.
	ListenAddress string
	// ProxyBasePath prefixes every route (proxyBasePath, PROXY_BASE_PATH),
	// normalised to "" or "/a/b".
	ProxyBasePath string
	// UpstreamAppName names the proxy upstream and is the default context
	// appName (upstreamAppName, UPSTREAM_APP_NAME).
	UpstreamAppName string
	// UpstreamInstanceID identifies this instance upstream
	// (upstreamInstanceId, UPSTREAM_INSTANCE_ID); generated when empty.
	UpstreamInstanceID string
	// RefreshInterval is the time between upstream syncs (refreshInterval,
	// UPSTREAM_FETCH_INTERVAL, milliseconds).
	RefreshInterval time.Duration
	// MetricsInterval is the time between usage posts (metricsInterval,
	// UPSTREAM_METRICS_INTERVAL, milliseconds); 0 disables registration
	// and metrics.
	MetricsInterval time.Duration
	// MetricsJitter is the largest random delay added to each metrics
	// interval (metricsJitter, UPSTREAM_METRICS_JITTER, milliseconds).
	MetricsJitter time.Duration
	// Environment, when set, replaces the environment SDKs send
	// (environment, UPSTREAM_ENVIRONMENT).
	Environment string
	// ProjectName limits the flags to one project (projectName,
	// UPSTREAM_PROJECT_NAME).
	ProjectName string
	// NamePrefix limits the flags to names with this prefix (namePrefix,
	// UPSTREAM_NAME_PREFIX).
	NamePrefix string
	// Tags limit the flags to these tags (tags, UPSTREAM_TAGS,
	// "name:value,name2:value2").
	Tags []Tag
	// UseJSONLogger selects one-line JSON logs (useJsonLogger, JSON_LOGGER).
	UseJSONLogger bool
	// LogLevel is the lowest level logged (logLevel, LOG_LEVEL).
	LogLevel slog.Level
	// CustomStrategies are script files exporting custom strategies
	// (customStrategies, UPSTREAM_CUSTOM_STRATEGIES_FILE, comma list).
	CustomStrategies []string
	// TrustProxy decides whether X-Forwarded-For feeds remoteAddress
	// (trustProxy, TRUST_PROXY).
	TrustProxy TrustProxy
	// ClientKeysHeaderName is the header carrying the client key
	// (clientKeysHeaderName, CLIENT_KEY_HEADER_NAME).
	ClientKeysHeaderName string
	// EnableOAS serves /docs/openapi.json and /docs/openapi (enableOAS,
	// ENABLE_OAS).
	EnableOAS bool
	// EnableAllEndpoint serves /proxy/all (enableAllEndpoint,
	// ENABLE_ALL_ENDPOINT).
	EnableAllEndpoint bool
	// CORS holds the nine cors.* options.
	CORS CORSConfig
	// HTTPOptions tune the connection to upstream.
	HTTPOptions HTTPOptions
	// ExpBootstrap is an optional source that makes the proxy ready
	// before upstream answers (experimental).
	ExpBootstrap Bootstrap
	// ExpServerSideSDKTokens may read /proxy/client/features
	// (expServerSideSdkConfig.tokens, EXP_SERVER_SIDE_SDK_CONFIG_TOKENS).
	ExpServerSideSDKTokens []string
	// UpstreamStreaming follows upstream's stream (GET
	// /api/client/streaming) instead of polling, when upstream streams;
	// refreshInterval then paces only the polling fallback
	// (upstreamStreaming, UPSTREAM_STREAMING; default true).
	UpstreamStreaming bool
	// ExpCustomEnrichers are script files exporting context enrichers
	// (expCustomEnrichers, EXP_CUSTOM_ENRICHERS_FILE, comma list).
	ExpCustomEnrichers []string
	// ScriptTimeout bounds one call into a script strategy or enricher
	// (EXP_SCRIPT_TIMEOUT, milliseconds).
	ScriptTimeout time.Duration
	// MaxBodyBytes limits request bodies (EXP_MAX_BODY_BYTES).
	MaxBodyBytes int64
	// BackupDir is where the default file storage keeps its backup
	// (EXP_BACKUP_DIR); empty means the system temporary directory.
	BackupDir string
	// HTTP holds the connection timeouts and the header size limit
	// `bunting proxy` serves with (HTTP_READ_TIMEOUT and the others of
	// httpserver.Options); zero fields get the defaults.
	HTTP httpserver.Limits
}

// Tag is one name:value tag filter.
type Tag struct {
	Name  string
	Value string
}

// CORSConfig is the cors.* group of options.
type CORSConfig struct {
	// Origin lists allowed origins; "*" allows all (CORS_ORIGIN).
	Origin []string
	// Methods lists allowed methods (CORS_METHODS).
	Methods []string
	// AllowedHeaders lists allowed request headers; empty mirrors the
	// preflight's request (CORS_ALLOWED_HEADERS).
	AllowedHeaders []string
	// ExposedHeaders lists headers scripts may read (CORS_EXPOSED_HEADERS).
	ExposedHeaders []string
	// Credentials allows credentials (CORS_CREDENTIALS).
	Credentials bool
	// MaxAge is how long, in seconds, a preflight may be cached
	// (CORS_MAX_AGE).
	MaxAge int
	// PreflightContinue passes preflights on to the routes
	// (CORS_PREFLIGHT_CONTINUE).
	PreflightContinue bool
	// OptionsSuccessStatus is the status of a passed preflight
	// (CORS_OPTIONS_SUCCESS_STATUS).
	OptionsSuccessStatus int
}

// HTTPOptions tune the upstream connection.
type HTTPOptions struct {
	// RejectUnauthorized verifies upstream certificates
	// (HTTP_OPTIONS_REJECT_UNAUTHORIZED, default true).
	RejectUnauthorized bool
}

// Bootstrap is the experimental bootstrap source.
type Bootstrap struct {
	// URL serves a client features payload (EXP_BOOTSTRAP_URL).
	URL string
	// Authorization is sent as the Authorization header
	// (EXP_BOOTSTRAP_AUTHORIZATION).
	Authorization string
}

// DefaultConfig returns the defaults of every option (those of Options);
// the three required options are empty.
func DefaultConfig() Config {
	var c Config
	config.Defaults(c.Options())
	return c
}

// Options are the proxy's options, bound to c, in the order docs/configuration.md
// shows them. Each is one line: the reference's option name, its
// environment variables (first set wins), its flag, its default, what it
// does and its typed value.
func (c *Config) Options() []config.Option {
	opts := []config.Option{
		{Name: "upstreamUrl", Env: envs("URL"), Flag: "upstream-url", Shown: "— (required)", Usage: "API URL of the upstream server, including /api", Value: config.Func(func(v string) error {
			u, err := parseUpstreamURL(v)
			c.UpstreamURL = u
			return err
		})},
		{Name: "upstreamApiToken", Env: envs("API_TOKEN"), Flag: "upstream-api-token", Shown: "— (required)", Usage: "client API token used towards upstream", Value: config.String(&c.UpstreamAPIToken)},
		{Name: "clientKeys", Env: envs("PROXY_CLIENT_KEYS"), Flag: "client-keys", Shown: "— (required)", Usage: "comma list of accepted client keys", Value: config.List(&c.ClientKeys)},
		{Name: "proxySecrets", Env: envs("PROXY_SECRETS"), Flag: "proxy-secrets", FallbackFor: "clientKeys", Usage: "deprecated alias of -client-keys", Value: config.List(&c.ClientKeys)},
		{Name: "port", Env: []string{"PORT", "PROXY_PORT"}, Flag: "port", Default: "3000", Usage: "listening port", Value: config.Port(&c.Port)},
		{Name: "listenAddress", Env: []string{"LISTEN_ADDRESS"}, Flag: "listen-address", Shown: "all interfaces", Usage: "host to bind; empty means every interface", Value: config.String(&c.ListenAddress)},
		{Name: "proxyBasePath", Env: []string{"PROXY_BASE_PATH"}, Flag: "proxy-base-path", Usage: "prefix of every route", Value: config.Func(func(v string) error {
			c.ProxyBasePath = normaliseBasePath(v)
			return nil
		})},
		{Name: "upstreamAppName", Env: envs("APP_NAME"), Flag: "upstream-app-name", Default: "upstream-proxy", Usage: "app name used upstream and as the default context appName", Value: config.NonEmpty(&c.UpstreamAppName)},
		{Name: "upstreamInstanceId", Env: envs("INSTANCE_ID"), Flag: "upstream-instance-id", Shown: "`<user>-<hostname>`", Usage: "instance id used upstream (generated when empty)", Value: config.String(&c.UpstreamInstanceID)},
		{Name: "upstreamStreaming", Env: envs("STREAMING"), Flag: "upstream-streaming", Default: "true", Usage: "follow upstream's stream when it offers one (polling when not)", Value: config.Bool(&c.UpstreamStreaming)},
		{Name: "refreshInterval", Env: envs("FETCH_INTERVAL"), Flag: "refresh-interval", Default: "5000", Usage: "milliseconds between upstream syncs", Value: config.Millis(&c.RefreshInterval, 1)},
		{Name: "metricsInterval", Env: envs("METRICS_INTERVAL"), Flag: "metrics-interval", Default: "30000", Usage: "milliseconds between metrics posts; 0 disables metrics and registration", Value: config.Millis(&c.MetricsInterval, 0)},
		{Name: "metricsJitter", Env: envs("METRICS_JITTER"), Flag: "metrics-jitter", Default: "0", Usage: "largest random milliseconds added to each metrics interval", Value: config.Millis(&c.MetricsJitter, 0)},
		{Name: "environment", Env: envs("ENVIRONMENT"), Flag: "environment", Shown: "unset (SDKs choose; `default` when they don't)", Usage: "environment forced into every context", Value: config.String(&c.Environment)},
		{Name: "projectName", Env: envs("PROJECT_NAME"), Flag: "project-name", Usage: "only flags of this project", Value: config.String(&c.ProjectName)},
		{Name: "namePrefix", Env: envs("NAME_PREFIX"), Flag: "name-prefix", Usage: "only flags whose name starts with this", Value: config.String(&c.NamePrefix)},
		{Name: "tags", Env: envs("TAGS"), Flag: "tags", Usage: "only flags with these tags: name:value,name2:value2", Value: config.Func(func(v string) error {
			t, err := parseTags(v)
			c.Tags = t
			return err
		})},
		{Name: "useJsonLogger", Env: []string{"JSON_LOGGER"}, Flag: "json-logger", Default: "false", Usage: "one-line JSON logs (default: text lines)", Value: config.Bool(&c.UseJSONLogger)},
		{Name: "logLevel", Env: []string{"LOG_LEVEL"}, Flag: "log-level", Default: "warn", Usage: "debug, info, warn, error or fatal", Value: config.Func(func(v string) error {
			l, err := parseLogLevel(v)
			c.LogLevel = l
			return err
		})},
		{Name: "customStrategies", Env: envs("CUSTOM_STRATEGIES_FILE"), Flag: "custom-strategies", Usage: "comma list of script files exporting custom strategies", Value: config.List(&c.CustomStrategies)},
		{Name: "trustProxy", Env: []string{"TRUST_PROXY"}, Flag: "trust-proxy", Default: "false", Usage: "true, false, or a comma list of IPs/CIDRs (or loopback, linklocal, uniquelocal) trusted to set X-Forwarded-For", Value: config.Func(func(v string) error {
			t, err := parseTrustProxy(v)
			c.TrustProxy = t
			return err
		})},
		{Name: "clientKeysHeaderName", Env: []string{"CLIENT_KEY_HEADER_NAME"}, Flag: "client-keys-header-name", Default: "authorization", Usage: "header carrying the client key", Value: config.NonEmpty(&c.ClientKeysHeaderName)},
		{Name: "enableOAS", Env: []string{"ENABLE_OAS"}, Flag: "enable-oas", Default: "false", Usage: "serve /docs/openapi.json and /docs/openapi", Value: config.Bool(&c.EnableOAS)},
		{Name: "enableAllEndpoint", Env: []string{"ENABLE_ALL_ENDPOINT"}, Flag: "enable-all-endpoint", Default: "false", Usage: "serve /proxy/all", Value: config.Bool(&c.EnableAllEndpoint)},
		{Name: "cors.allowedHeaders", Env: []string{"CORS_ALLOWED_HEADERS"}, Flag: "cors-allowed-headers", Shown: "mirror the preflight's request headers", Usage: "allowed request headers", Value: config.List(&c.CORS.AllowedHeaders)},
		{Name: "cors.credentials", Env: []string{"CORS_CREDENTIALS"}, Flag: "cors-credentials", Default: "false", Usage: "allow credentials", Value: config.Bool(&c.CORS.Credentials)},
		{Name: "cors.exposedHeaders", Env: []string{"CORS_EXPOSED_HEADERS"}, Flag: "cors-exposed-headers", Default: "ETag", Usage: "exposed response headers", Value: config.List(&c.CORS.ExposedHeaders)},
		{Name: "cors.maxAge", Env: []string{"CORS_MAX_AGE"}, Flag: "cors-max-age", Default: "172800", Usage: "seconds a preflight result may be cached", Value: config.Int(&c.CORS.MaxAge, 0, 1<<31-1)},
		{Name: "cors.methods", Env: []string{"CORS_METHODS"}, Flag: "cors-methods", Default: "GET, POST", Usage: "allowed methods", Value: config.List(&c.CORS.Methods)},
		{Name: "cors.optionsSuccessStatus", Env: []string{"CORS_OPTIONS_SUCCESS_STATUS"}, Flag: "cors-options-success-status", Default: "204", Usage: "status of a passed preflight", Value: config.Int(&c.CORS.OptionsSuccessStatus, 200, 299)},
		{Name: "cors.origin", Env: []string{"CORS_ORIGIN"}, Flag: "cors-origin", Default: "*", Usage: "allowed origin, or comma list, or *", Value: config.List(&c.CORS.Origin)},
		{Name: "cors.preflightContinue", Env: []string{"CORS_PREFLIGHT_CONTINUE"}, Flag: "cors-preflight-continue", Default: "false", Usage: "accepted; preflights reach the routes, which answer them, either way", Value: config.Bool(&c.CORS.PreflightContinue)},
		{Name: "httpOptions.rejectUnauthorized", Env: []string{"HTTP_OPTIONS_REJECT_UNAUTHORIZED"}, Flag: "http-options-reject-unauthorized", Default: "true", Usage: "verify the upstream certificate", Value: config.Bool(&c.HTTPOptions.RejectUnauthorized)},
		{Name: "expBootstrap.url", Env: []string{"EXP_BOOTSTRAP_URL"}, Flag: "exp-bootstrap-url", Usage: "URL of a client features payload loaded before upstream answers", Value: config.Func(func(v string) error {
			if _, err := parseHTTPURL(v); err != nil {
				return err
			}
			c.ExpBootstrap.URL = v
			return nil
		})},
		{Name: "expBootstrap.urlHeaders.Authorization", Env: []string{"EXP_BOOTSTRAP_AUTHORIZATION"}, Flag: "exp-bootstrap-authorization", Usage: "Authorization header of the bootstrap request", Value: config.String(&c.ExpBootstrap.Authorization)},
		{Name: "expServerSideSdkConfig.tokens", Env: []string{"EXP_SERVER_SIDE_SDK_CONFIG_TOKENS"}, Flag: "exp-server-side-sdk-tokens", Usage: "comma list of tokens that may read /proxy/client/features", Value: config.List(&c.ExpServerSideSDKTokens)},
		{Name: "expCustomEnrichers", Env: []string{"EXP_CUSTOM_ENRICHERS_FILE"}, Flag: "exp-custom-enrichers", Usage: "comma list of script files exporting context enrichers", Value: config.List(&c.ExpCustomEnrichers)},
		{Name: "scriptTimeout", Env: []string{"EXP_SCRIPT_TIMEOUT"}, Flag: "exp-script-timeout", Default: "100", Usage: "milliseconds one script call may run (experimental)", Value: config.Millis(&c.ScriptTimeout, 1)},
		{Name: "backupDir", Env: []string{"EXP_BACKUP_DIR"}, Flag: "exp-backup-dir", Shown: "the system temporary directory", Usage: "directory of the backup file (experimental)", Value: config.String(&c.BackupDir)},
		{Name: "maxBodyBytes", Env: []string{"EXP_MAX_BODY_BYTES"}, Flag: "exp-max-body-bytes", Default: "102400", Usage: "largest accepted request body in bytes (experimental)", Value: config.Int64(&c.MaxBodyBytes, 1)},
	}
	return append(opts, httpserver.Options(&c.HTTP)...)
}

// envs gives the spec's variable UPSTREAM_<suffix> and, for drop-in use
// with existing deployments, the reference's UNLEASH_<suffix>.
func envs(suffix string) []string { return []string{"UPSTREAM_" + suffix, "UNLEASH_" + suffix} }

// LoadConfig builds the configuration from the environment (read through
// lookupEnv) and then the command-line args, which win. Every bad value is
// an error naming the option, its variable and its flag. With -h it
// returns flag.ErrHelp after printing the usage to usageOut (nil: stderr).
func LoadConfig(lookupEnv func(string) (string, bool), args []string) (Config, error) {
	return LoadConfigTo(lookupEnv, args, nil)
}

// LoadConfigTo is LoadConfig with the usage text written to w.
func LoadConfigTo(lookupEnv func(string) (string, bool), args []string, w io.Writer) (Config, error) {
	if lookupEnv == nil {
		lookupEnv = os.LookupEnv
	}
	if w == nil {
		w = os.Stderr
	}
	cfg := DefaultConfig()
	if err := config.Load("bunting proxy", cfg.Options(), lookupEnv, args, w); err != nil {
		return cfg, err
	}
	return cfg, cfg.Validate()
}

// Validate checks the required options and the values a Go user may have
// set by hand.
func (c *Config) Validate() error {
	var errs []error
	if c.UpstreamURL == "" {
		errs = append(errs, errors.New("you must specify the upstreamUrl option (UPSTREAM_URL, -upstream-url)"))
	} else if u, err := parseUpstreamURL(c.UpstreamURL); err != nil {
		errs = append(errs, fmt.Errorf("invalid value %q for upstreamUrl (UPSTREAM_URL, -upstream-url): %w", redact.URL(c.UpstreamURL), err))
	} else {
		c.UpstreamURL = u
	}
	if c.UpstreamAPIToken == "" {
		errs = append(errs, errors.New("you must specify the upstreamApiToken option (UPSTREAM_API_TOKEN, -upstream-api-token)"))
	}
	if len(c.ClientKeys) == 0 {
		errs = append(errs, errors.New("you must specify the clientKeys option (UPSTREAM_PROXY_CLIENT_KEYS, -client-keys)"))
	}
	if c.RefreshInterval <= 0 {
		errs = append(errs, errors.New("refreshInterval (UPSTREAM_FETCH_INTERVAL) must be positive"))
	}
	// Fields a Go user left at zero get their defaults.
	d := DefaultConfig()
	if c.ClientKeysHeaderName == "" {
		c.ClientKeysHeaderName = d.ClientKeysHeaderName
	}
	if c.UpstreamAppName == "" {
		c.UpstreamAppName = d.UpstreamAppName
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = d.MaxBodyBytes
	}
	if c.ScriptTimeout <= 0 {
		c.ScriptTimeout = d.ScriptTimeout
	}
	c.ProxyBasePath = normaliseBasePath(c.ProxyBasePath)
	c.HTTP = withDefaultLimits(c.HTTP)
	return errors.Join(errs...)
}

func parseHTTPURL(v string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil {
		return nil, errors.New("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("not an http or https URL")
	}
	if u.Host == "" {
		return nil, errors.New("URL has no host")
	}
	return u, nil
}

// parseUpstreamURL validates the upstream URL, removes a trailing
// "/features" (as the reference does) and ensures one trailing slash.
func parseUpstreamURL(v string) (string, error) {
	u, err := parseHTTPURL(v)
	if err != nil {
		return "", err
	}
	s := strings.TrimRight(u.String(), "/")
	s = strings.TrimSuffix(s, "/features")
	return s + "/", nil
}

func normaliseBasePath(v string) string {
	v = strings.Trim(strings.TrimSpace(v), "/")
	if v == "" {
		return ""
	}
	return "/" + v
}

func parseTags(v string) ([]Tag, error) {
	var tags []Tag
	for _, item := range config.SplitList(v) {
		name, value, ok := strings.Cut(item, ":")
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if !ok || name == "" || value == "" {
			return nil, fmt.Errorf("tag %q is not name:value", item)
		}
		tags = append(tags, Tag{Name: name, Value: value})
	}
	return tags, nil
}

func parseLogLevel(v string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "debug":
		return slog.LevelDebug, nil
	case "info":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	case "fatal":
		return slog.LevelError + 4, nil
	}
	return 0, errors.New("not one of debug, info, warn, error, fatal")
}
