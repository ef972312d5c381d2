package proxy

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

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

// TrustProxy says which peers may set X-Forwarded-For.
type TrustProxy struct {
	// All trusts every peer: the left-most forwarded address wins.
	All bool
	// Prefixes are the trusted peers; the chain is walked from the right
	// past trusted addresses.
	Prefixes []netip.Prefix
}

// Enabled reports whether any peer is trusted.
func (t TrustProxy) Enabled() bool { return t.All || len(t.Prefixes) > 0 }

func (t TrustProxy) trusts(a netip.Addr) bool {
	if t.All {
		return true
	}
	for _, p := range t.Prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// DefaultConfig returns the defaults of every option; the three required
// options are empty.
func DefaultConfig() Config {
	return Config{
		Port:                 3000,
		UpstreamAppName:      "upstream-proxy",
		RefreshInterval:      5 * time.Second,
		MetricsInterval:      30 * time.Second,
		LogLevel:             slog.LevelWarn,
		ClientKeysHeaderName: "authorization",
		CORS: CORSConfig{
			Origin:               []string{"*"},
			Methods:              []string{"GET", "POST"},
			ExposedHeaders:       []string{"ETag"},
			MaxAge:               172800,
			OptionsSuccessStatus: 204,
		},
		HTTPOptions:   HTTPOptions{RejectUnauthorized: true},
		ScriptTimeout: 100 * time.Millisecond,
		MaxBodyBytes:  100 * 1024,
		HTTP:          httpserver.DefaultLimits(),

		UpstreamStreaming: true,
	}
}

// option describes one setting: its name in the reference's option
// object, its environment variables (first found wins), its flag and how
// to parse a value into the config.
type option struct {
	name   string
	envs   []string
	flag   string
	usage  string
	isBool bool
	set    func(c *Config, v string) error
}

// optionError names the option and its variable in a startup error; a URL
// is shown without what may hold a credential.
func (o option) errorf(v string, err error) error {
	if strings.Contains(v, "://") {
		v = redact.URL(v)
	}
	return fmt.Errorf("invalid value %q for %s (%s, -%s): %w", v, o.name, o.envs[0], o.flag, err)
}

func options() []option {
	return []option{
		{"upstreamUrl", envs("URL"), "upstream-url", "API URL of the upstream server, including /api", false, func(c *Config, v string) error {
			u, err := parseUpstreamURL(v)
			c.UpstreamURL = u
			return err
		}},
		{"upstreamApiToken", envs("API_TOKEN"), "upstream-api-token", "client API token used towards upstream", false, setString(func(c *Config) *string { return &c.UpstreamAPIToken })},
		{"clientKeys", envs("PROXY_CLIENT_KEYS"), "client-keys", "comma list of accepted client keys", false, setList(func(c *Config) *[]string { return &c.ClientKeys })},
		{"port", []string{"PORT", "PROXY_PORT"}, "port", "listening port", false, func(c *Config, v string) error {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 || n > 65535 {
				return errors.New("not a port number (0-65535)")
			}
			c.Port = n
			return nil
		}},
		{"listenAddress", []string{"LISTEN_ADDRESS"}, "listen-address", "host to bind; empty means every interface", false, setString(func(c *Config) *string { return &c.ListenAddress })},
		{"proxyBasePath", []string{"PROXY_BASE_PATH"}, "proxy-base-path", "prefix of every route", false, func(c *Config, v string) error {
			c.ProxyBasePath = normaliseBasePath(v)
			return nil
		}},
		{"upstreamAppName", envs("APP_NAME"), "upstream-app-name", "app name used upstream and as the default context appName", false, setNonEmpty(func(c *Config) *string { return &c.UpstreamAppName })},
		{"upstreamInstanceId", envs("INSTANCE_ID"), "upstream-instance-id", "instance id used upstream (generated when empty)", false, setString(func(c *Config) *string { return &c.UpstreamInstanceID })},
		{"upstreamStreaming", envs("STREAMING"), "upstream-streaming", "follow upstream's stream when it offers one (polling when not)", true, setBool(func(c *Config) *bool { return &c.UpstreamStreaming })},
		{"refreshInterval", envs("FETCH_INTERVAL"), "refresh-interval", "milliseconds between upstream syncs", false, setMillis(func(c *Config) *time.Duration { return &c.RefreshInterval }, 1)},
		{"metricsInterval", envs("METRICS_INTERVAL"), "metrics-interval", "milliseconds between metrics posts; 0 disables metrics and registration", false, setMillis(func(c *Config) *time.Duration { return &c.MetricsInterval }, 0)},
		{"metricsJitter", envs("METRICS_JITTER"), "metrics-jitter", "largest random milliseconds added to each metrics interval", false, setMillis(func(c *Config) *time.Duration { return &c.MetricsJitter }, 0)},
		{"environment", envs("ENVIRONMENT"), "environment", "environment forced into every context", false, setString(func(c *Config) *string { return &c.Environment })},
		{"projectName", envs("PROJECT_NAME"), "project-name", "only flags of this project", false, setString(func(c *Config) *string { return &c.ProjectName })},
		{"namePrefix", envs("NAME_PREFIX"), "name-prefix", "only flags whose name starts with this", false, setString(func(c *Config) *string { return &c.NamePrefix })},
		{"tags", envs("TAGS"), "tags", "only flags with these tags: name:value,name2:value2", false, func(c *Config, v string) error {
			t, err := parseTags(v)
			c.Tags = t
			return err
		}},
		{"useJsonLogger", []string{"JSON_LOGGER"}, "json-logger", "one-line JSON logs", true, setBool(func(c *Config) *bool { return &c.UseJSONLogger })},
		{"logLevel", []string{"LOG_LEVEL"}, "log-level", "debug, info, warn, error or fatal", false, func(c *Config, v string) error {
			l, err := parseLogLevel(v)
			c.LogLevel = l
			return err
		}},
		{"customStrategies", envs("CUSTOM_STRATEGIES_FILE"), "custom-strategies", "comma list of script files exporting custom strategies", false, setList(func(c *Config) *[]string { return &c.CustomStrategies })},
		{"trustProxy", []string{"TRUST_PROXY"}, "trust-proxy", "true, false, or a comma list of IPs/CIDRs (or loopback, linklocal, uniquelocal) trusted to set X-Forwarded-For", false, func(c *Config, v string) error {
			t, err := parseTrustProxy(v)
			c.TrustProxy = t
			return err
		}},
		{"clientKeysHeaderName", []string{"CLIENT_KEY_HEADER_NAME"}, "client-keys-header-name", "header carrying the client key", false, setNonEmpty(func(c *Config) *string { return &c.ClientKeysHeaderName })},
		{"enableOAS", []string{"ENABLE_OAS"}, "enable-oas", "serve /docs/openapi.json and /docs/openapi", true, setBool(func(c *Config) *bool { return &c.EnableOAS })},
		{"enableAllEndpoint", []string{"ENABLE_ALL_ENDPOINT"}, "enable-all-endpoint", "serve /proxy/all", true, setBool(func(c *Config) *bool { return &c.EnableAllEndpoint })},
		{"cors.allowedHeaders", []string{"CORS_ALLOWED_HEADERS"}, "cors-allowed-headers", "allowed request headers (default: mirror the preflight)", false, setList(func(c *Config) *[]string { return &c.CORS.AllowedHeaders })},
		{"cors.credentials", []string{"CORS_CREDENTIALS"}, "cors-credentials", "allow credentials", true, setBool(func(c *Config) *bool { return &c.CORS.Credentials })},
		{"cors.exposedHeaders", []string{"CORS_EXPOSED_HEADERS"}, "cors-exposed-headers", "exposed response headers", false, setList(func(c *Config) *[]string { return &c.CORS.ExposedHeaders })},
		{"cors.maxAge", []string{"CORS_MAX_AGE"}, "cors-max-age", "seconds a preflight result may be cached", false, setInt(func(c *Config) *int { return &c.CORS.MaxAge }, 0, 1<<31-1)},
		{"cors.methods", []string{"CORS_METHODS"}, "cors-methods", "allowed methods", false, setList(func(c *Config) *[]string { return &c.CORS.Methods })},
		{"cors.optionsSuccessStatus", []string{"CORS_OPTIONS_SUCCESS_STATUS"}, "cors-options-success-status", "status of a passed preflight", false, setInt(func(c *Config) *int { return &c.CORS.OptionsSuccessStatus }, 200, 299)},
		{"cors.origin", []string{"CORS_ORIGIN"}, "cors-origin", "allowed origin, or comma list, or *", false, setList(func(c *Config) *[]string { return &c.CORS.Origin })},
		{"cors.preflightContinue", []string{"CORS_PREFLIGHT_CONTINUE"}, "cors-preflight-continue", "pass preflights on to the routes", true, setBool(func(c *Config) *bool { return &c.CORS.PreflightContinue })},
		{"httpOptions.rejectUnauthorized", []string{"HTTP_OPTIONS_REJECT_UNAUTHORIZED"}, "http-options-reject-unauthorized", "verify the upstream certificate", true, setBool(func(c *Config) *bool { return &c.HTTPOptions.RejectUnauthorized })},
		{"expBootstrap.url", []string{"EXP_BOOTSTRAP_URL"}, "exp-bootstrap-url", "URL of a client features payload loaded before upstream answers", false, func(c *Config, v string) error {
			if _, err := parseHTTPURL(v); err != nil {
				return err
			}
			c.ExpBootstrap.URL = v
			return nil
		}},
		{"expBootstrap.urlHeaders.Authorization", []string{"EXP_BOOTSTRAP_AUTHORIZATION"}, "exp-bootstrap-authorization", "Authorization header of the bootstrap request", false, setString(func(c *Config) *string { return &c.ExpBootstrap.Authorization })},
		{"expServerSideSdkConfig.tokens", []string{"EXP_SERVER_SIDE_SDK_CONFIG_TOKENS"}, "exp-server-side-sdk-tokens", "comma list of tokens that may read /proxy/client/features", false, setList(func(c *Config) *[]string { return &c.ExpServerSideSDKTokens })},
		{"expCustomEnrichers", []string{"EXP_CUSTOM_ENRICHERS_FILE"}, "exp-custom-enrichers", "comma list of script files exporting context enrichers", false, setList(func(c *Config) *[]string { return &c.ExpCustomEnrichers })},
		{"scriptTimeout", []string{"EXP_SCRIPT_TIMEOUT"}, "exp-script-timeout", "milliseconds one script call may run", false, setMillis(func(c *Config) *time.Duration { return &c.ScriptTimeout }, 1)},
		{"backupDir", []string{"EXP_BACKUP_DIR"}, "exp-backup-dir", "directory of the backup file (default: the system temporary directory)", false, setString(func(c *Config) *string { return &c.BackupDir })},
		{"maxBodyBytes", []string{"EXP_MAX_BODY_BYTES"}, "exp-max-body-bytes", "largest accepted request body in bytes", false, func(c *Config, v string) error {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil || n < 1 {
				return errors.New("not a positive whole number")
			}
			c.MaxBodyBytes = n
			return nil
		}},
	}
}

// optionDefaults are shown in the flag usage.
var optionDefaults = map[string]string{
	"port": "3000", "upstreamAppName": "upstream-proxy", "upstreamInstanceId": "<user>-<hostname>",
	"refreshInterval": "5000", "metricsInterval": "30000", "metricsJitter": "0", "logLevel": "warn",
	"trustProxy": "false", "clientKeysHeaderName": "authorization", "cors.exposedHeaders": "ETag",
	"cors.maxAge": "172800", "cors.methods": "GET, POST", "cors.optionsSuccessStatus": "204", "cors.origin": "*",
	"httpOptions.rejectUnauthorized": "true", "scriptTimeout": "100", "maxBodyBytes": "102400",
}

// envs gives the spec's variable UPSTREAM_<suffix> and, for drop-in use
// with existing deployments, the reference's UNLEASH_<suffix>.
func envs(suffix string) []string { return []string{"UPSTREAM_" + suffix, "UNLEASH_" + suffix} }

// proxySecrets is the deprecated alias of clientKeys; it is read only when
// clientKeys is not set.
var proxySecrets = option{"proxySecrets", envs("PROXY_SECRETS"), "proxy-secrets", "deprecated alias of -client-keys", false, setList(func(c *Config) *[]string { return &c.ClientKeys })}

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
	cfg := DefaultConfig()
	opts := append(options(), limitOptions()...)
	var errs []error
	clientKeysSet := false
	for _, o := range opts {
		v, ok := lookupFirst(lookupEnv, o.envs)
		if !ok {
			continue
		}
		if err := o.set(&cfg, v); err != nil {
			errs = append(errs, o.errorf(v, err))
		}
		clientKeysSet = clientKeysSet || o.name == "clientKeys"
	}
	if !clientKeysSet {
		if v, ok := lookupFirst(lookupEnv, proxySecrets.envs); ok {
			if err := proxySecrets.set(&cfg, v); err != nil {
				errs = append(errs, proxySecrets.errorf(v, err))
			}
		}
	}
	fs := flag.NewFlagSet("bunting proxy", flag.ContinueOnError)
	if w == nil {
		w = os.Stderr
	}
	fs.SetOutput(w)
	for _, o := range append(opts, proxySecrets) {
		o := o
		usage := fmt.Sprintf("%s (%s: %s)", o.usage, o.name, strings.Join(o.envs, " or "))
		if d, ok := optionDefaults[o.name]; ok {
			usage += "; default " + d
		}
		parse := func(v string) error {
			if err := o.set(&cfg, v); err != nil {
				return o.errorf(v, err)
			}
			return nil
		}
		if o.isBool {
			fs.BoolFunc(o.flag, usage, parse)
		} else {
			fs.Func(o.flag, usage, parse)
		}
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	if err := errors.Join(errs...); err != nil {
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
	if c.ClientKeysHeaderName == "" {
		c.ClientKeysHeaderName = "authorization"
	}
	if c.UpstreamAppName == "" {
		c.UpstreamAppName = "upstream-proxy"
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 100 * 1024
	}
	if c.ScriptTimeout <= 0 {
		c.ScriptTimeout = 100 * time.Millisecond
	}
	c.ProxyBasePath = normaliseBasePath(c.ProxyBasePath)
	c.HTTP = withDefaultLimits(c.HTTP)
	return errors.Join(errs...)
}

func lookupFirst(lookupEnv func(string) (string, bool), names []string) (string, bool) {
	for _, n := range names {
		if v, ok := lookupEnv(n); ok && v != "" {
			return v, true
		}
	}
	return "", false
}

func setString(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *field(c) = strings.TrimSpace(v); return nil }
}

func setNonEmpty(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error {
		v = strings.TrimSpace(v)
		if v == "" {
			return errors.New("must not be empty")
		}
		*field(c) = v
		return nil
	}
}

func setList(field func(*Config) *[]string) func(*Config, string) error {
	return func(c *Config, v string) error { *field(c) = splitList(v); return nil }
}

func setBool(field func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := parseBool(v)
		*field(c) = b
		return err
	}
}

func setInt(field func(*Config) *int, lo, hi int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return errors.New("not a whole number")
		}
		if n < lo || n > hi {
			return fmt.Errorf("must be between %d and %d", lo, hi)
		}
		*field(c) = n
		return nil
	}
}

func setMillis(field func(*Config) *time.Duration, min int64) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return errors.New("not a whole number of milliseconds")
		}
		if n < min {
			return fmt.Errorf("must be at least %d", min)
		}
		*field(c) = time.Duration(n) * time.Millisecond
		return nil
	}
}

// splitList splits a comma list, trimming each item and dropping empty ones.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "t", "yes", "y", "on":
		return true, nil
	case "false", "0", "f", "no", "n", "off":
		return false, nil
	}
	return false, errors.New("not a boolean (true or false)")
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
	for _, item := range splitList(v) {
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

// namedRanges are the names Express accepts for trustProxy.
var namedRanges = map[string][]string{
	"loopback":    {"127.0.0.1/8", "::1/128"},
	"linklocal":   {"169.254.0.0/16", "fe80::/10"},
	"uniquelocal": {"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"},
}

func parseTrustProxy(v string) (TrustProxy, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true":
		return TrustProxy{All: true}, nil
	case "false", "":
		return TrustProxy{}, nil
	}
	var t TrustProxy
	for _, item := range splitList(v) {
		if names, ok := namedRanges[strings.ToLower(item)]; ok {
			for _, n := range names {
				t.Prefixes = append(t.Prefixes, netip.MustParsePrefix(n).Masked())
			}
			continue
		}
		if p, err := netip.ParsePrefix(item); err == nil {
			t.Prefixes = append(t.Prefixes, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil {
			return TrustProxy{}, fmt.Errorf("%q is not true, false, an IP address, a CIDR or loopback/linklocal/uniquelocal", item)
		}
		a = a.Unmap()
		t.Prefixes = append(t.Prefixes, netip.PrefixFrom(a, a.BitLen()))
	}
	return t, nil
}
