package cli

import (
	"errors"
	"flag"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/config"
	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/proxy"
)

// proxyRequired are the three options the proxy cannot start without.
var proxyRequired = map[string]string{"UPSTREAM_URL": "http://u/api", "UPSTREAM_API_TOKEN": "t", "UPSTREAM_PROXY_CLIENT_KEYS": "k"}

// TestConfigurations runs valid and invalid configurations of both
// commands through their option tables: a valid one gives the expected
// values, an invalid one an error naming the option, its variable (or
// flag) and the value.
func TestConfigurations(t *testing.T) {
	cases := []struct {
		name    string
		command string // "server" or "proxy"
		env     map[string]string
		args    []string
		check   func(s server.Config, p proxy.Config) bool
		errHas  []string
	}{
		{name: "server defaults", command: "server", check: func(s server.Config, _ proxy.Config) bool {
			return s.Port == 4242 && s.DatabasePath == "data/bunting.db" && s.LogLevel == "info" && s.BodyLimit == 102400 &&
				s.RevisionPollInterval == time.Second && s.HTTP.WriteTimeout == time.Minute && s.Signals.PollInterval == 250*time.Millisecond &&
				s.Signals.FilterValuesLimit == 25 && s.Signals.LeaseDuration == 5*time.Second
		}},
		{name: "server env and flags", command: "server",
			env:  map[string]string{"PORT": "5000", "HTTP_PORT": "6000", "LOG_LEVEL": "DEBUG", "HTTP_IDLE_TIMEOUT": "1500", "UNLEASH_SIGNAL_ENDPOINTS_LIMIT": "7", "SIGNAL_ENDPOINTS_LIMIT": "8", "INIT_ADMIN_API_TOKENS": " *:*.a ,, *:*.b "},
			args: []string{"-body-limit", "10", "-json-logger"},
			check: func(s server.Config, _ proxy.Config) bool {
				return s.Port == 5000 && s.LogLevel == "debug" && s.HTTP.IdleTimeout == 1500*time.Millisecond && s.Signals.EndpointsLimit == 7 &&
					len(s.InitAdminTokens) == 2 && s.BodyLimit == 10 && s.JSONLogger
			}},
		{name: "server bad port", command: "server", env: map[string]string{"HTTP_PORT": "70000"}, errHas: []string{"port", "HTTP_PORT", "-port", `"70000"`}},
		{name: "server bad level flag", command: "server", args: []string{"-log-level", "loud"}, errHas: []string{"log-level", "LOG_LEVEL", `"loud"`, "debug, info, warn, error"}},
		{name: "server bad duration", command: "server", env: map[string]string{"REVISION_POLL_INTERVAL": "-1s"}, errHas: []string{"REVISION_POLL_INTERVAL", `"-1s"`, "positive"}},
		{name: "server bad body limit", command: "server", env: map[string]string{"BODY_LIMIT": "0"}, errHas: []string{"BODY_LIMIT", `"0"`}},
		{name: "server bad signal limit", command: "server", env: map[string]string{"UNLEASH_ACTION_SET_ACTIONS_LIMIT": "many"}, errHas: []string{"ACTION_SET_ACTIONS_LIMIT", `"many"`, "whole number"}},
		{name: "server zero rate", command: "server", env: map[string]string{"SIGNAL_ENDPOINT_RATE_LIMIT_PER_SECOND": "0"}, errHas: []string{"SIGNAL_ENDPOINT_RATE_LIMIT_PER_SECOND", `"0"`}},
		{name: "server two bad values", command: "server", env: map[string]string{"JSON_LOGGER": "maybe", "HTTP_MAX_HEADER_BYTES": "1kB"}, errHas: []string{"JSON_LOGGER", `"maybe"`, "HTTP_MAX_HEADER_BYTES", `"1kB"`}},
		{name: "proxy defaults", command: "proxy", env: proxyRequired, check: func(_ server.Config, p proxy.Config) bool {
			return p.Port == 3000 && p.RefreshInterval == 5*time.Second && p.MetricsInterval == 30*time.Second && p.LogLevel == slog.LevelWarn &&
				p.ClientKeysHeaderName == "authorization" && len(p.CORS.Methods) == 2 && p.CORS.MaxAge == 172800 && p.CORS.OptionsSuccessStatus == 204 &&
				p.HTTPOptions.RejectUnauthorized && p.ScriptTimeout == 100*time.Millisecond && p.MaxBodyBytes == 102400 && p.HTTP.ReadHeaderTimeout == 10*time.Second
		}},
		{name: "proxy flags win", command: "proxy", env: merge(proxyRequired, map[string]string{"UPSTREAM_FETCH_INTERVAL": "1000", "CORS_ORIGIN": "https://a"}),
			args: []string{"-refresh-interval", "2000", "-cors-origin", "https://b, https://c", "-http-options-reject-unauthorized=false"},
			check: func(_ server.Config, p proxy.Config) bool {
				return p.RefreshInterval == 2*time.Second && len(p.CORS.Origin) == 2 && !p.HTTPOptions.RejectUnauthorized
			}},
		{name: "proxy deprecated alias", command: "proxy", env: map[string]string{"UNLEASH_URL": "http://u/api", "UNLEASH_API_TOKEN": "t", "UNLEASH_PROXY_SECRETS": "s"},
			check: func(_ server.Config, p proxy.Config) bool { return len(p.ClientKeys) == 1 && p.ClientKeys[0] == "s" }},
		{name: "proxy bad status", command: "proxy", env: merge(proxyRequired, map[string]string{"CORS_OPTIONS_SUCCESS_STATUS": "302"}), errHas: []string{"cors.optionsSuccessStatus", "CORS_OPTIONS_SUCCESS_STATUS", `"302"`, "between 200 and 299"}},
		{name: "proxy bad millis", command: "proxy", env: merge(proxyRequired, map[string]string{"UNLEASH_METRICS_INTERVAL": "30s"}), errHas: []string{"metricsInterval", `"30s"`, "milliseconds"}},
		{name: "proxy bad limit", command: "proxy", env: proxyRequired, args: []string{"-read-timeout", "never"}, errHas: []string{"read-timeout", "HTTP_READ_TIMEOUT", `"never"`}},
		{name: "proxy blank app name", command: "proxy", env: merge(proxyRequired, map[string]string{"UPSTREAM_APP_NAME": "  "}), errHas: []string{"upstreamAppName", "must not be empty"}},
		{name: "proxy URL is redacted", command: "proxy", env: merge(proxyRequired, map[string]string{"UPSTREAM_URL": "ftp://user:secret@host/api"}), errHas: []string{"upstreamUrl", "UPSTREAM_URL", "not an http or https URL"}},
		{name: "proxy required", command: "proxy", errHas: []string{"upstreamUrl", "upstreamApiToken", "clientKeys"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lookup := func(k string) (string, bool) { v, ok := c.env[k]; return v, ok }
			var s server.Config
			var p proxy.Config
			var err error
			if c.command == "server" {
				s, err = server.ParseConfig(c.args, lookup, io.Discard)
			} else {
				p, err = proxy.LoadConfigTo(lookup, c.args, io.Discard)
			}
			if c.errHas == nil {
				if err != nil || !c.check(s, p) {
					t.Fatalf("err %v; server %+v; proxy %+v", err, s, p)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			for _, want := range c.errHas {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "secret") {
				t.Errorf("error %q shows a credential", err)
			}
		})
	}
}

func merge(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range []map[string]string{a, b} {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// TestOptionTablesAreConsistent checks every command's table: names,
// variables and flags are unique, each default parses, and -h lists every
// flag with its variables.
func TestOptionTablesAreConsistent(t *testing.T) {
	var s server.Config
	var p proxy.Config
	for command, opts := range map[string][]config.Option{"server": s.Options(), "proxy": p.Options()} {
		seen := map[string]bool{}
		for _, o := range opts {
			keys := append([]string{"name " + o.Name}, "flag "+o.Flag)
			for _, e := range o.Env {
				keys = append(keys, "env "+e)
			}
			for _, k := range keys {
				if k == "flag " {
					continue
				}
				if seen[k] {
					t.Errorf("%s: %s appears twice", command, k)
				}
				seen[k] = true
			}
			if o.Usage == "" || o.Value == nil || len(o.Env) == 0 {
				t.Errorf("%s: option %s lacks a usage, a value or a variable", command, o.Name)
			}
		}
		config.Defaults(opts) // panics on a default that does not parse
		var help strings.Builder
		err := config.Load("bunting "+command, opts, func(string) (string, bool) { return "", false }, []string{"-h"}, &help)
		if !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("%s -h: %v", command, err)
		}
		for _, o := range opts {
			if o.Flag != "" && !strings.Contains(help.String(), "-"+o.Flag) {
				t.Errorf("%s -h does not list -%s", command, o.Flag)
			}
			if o.Flag != "" && !strings.Contains(help.String(), o.Env[0]) {
				t.Errorf("%s -h does not name %s", command, o.Env[0])
			}
		}
	}
}
