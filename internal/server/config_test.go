package server

import (
	"io"
	"strings"
	"testing"
	"time"
)

func envMap(m map[string]string) LookupEnv {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestParseConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		env     map[string]string
		args    []string
		check   func(Config) bool
		wantErr string
	}{
		{name: "defaults", check: func(c Config) bool {
			return c.Port == 4242 && c.DatabasePath == "data/bunting.db" && c.LogLevel == "info" && c.BodyLimit == 100*1024
		}},
		{name: "env", env: map[string]string{"PORT": "5000", "DATABASE_URL": "postgres://x/y", "JSON_LOGGER": "true", "LOG_LEVEL": "WARN",
			"INIT_ADMIN_API_TOKENS": "*:*.a, *:*.b", "INIT_BACKEND_API_TOKENS": "default:development.c", "INIT_CLIENT_API_TOKENS": "default:production.ignored"},
			check: func(c Config) bool {
				return c.Port == 5000 && c.DatabaseURL == "postgres://x/y" && c.JSONLogger && c.LogLevel == "warn" &&
					len(c.InitAdminTokens) == 2 && c.InitAdminTokens[1] == "*:*.b" && len(c.InitClientTokens) == 1 && c.InitClientTokens[0] == "default:development.c"
			}},
		{name: "client alias", env: map[string]string{"INIT_CLIENT_API_TOKENS": "default:development.c"},
			check: func(c Config) bool { return len(c.InitClientTokens) == 1 }},
		{name: "HTTP_PORT", env: map[string]string{"HTTP_PORT": "6000"}, check: func(c Config) bool { return c.Port == 6000 }},
		{name: "flags win", env: map[string]string{"PORT": "5000", "DATABASE_PATH": "a.db"}, args: []string{"-port", "7000", "-database-path", "b.db", "-revision-poll", "2s"},
			check: func(c Config) bool {
				return c.Port == 7000 && c.DatabasePath == "b.db" && c.RevisionPollInterval == 2*time.Second
			}},
		{name: "bad port", env: map[string]string{"PORT": "abc"}, wantErr: "PORT"},
		{name: "bad bool", env: map[string]string{"JSON_LOGGER": "maybe"}, wantErr: "JSON_LOGGER"},
		{name: "bad level", env: map[string]string{"LOG_LEVEL": "loud"}, wantErr: "LOG_LEVEL"},
		{name: "scoped admin", env: map[string]string{"INIT_ADMIN_API_TOKENS": "default:development.x"}, wantErr: "INIT_ADMIN_API_TOKENS"},
		{name: "all-env client", env: map[string]string{"INIT_CLIENT_API_TOKENS": "*:*.x"}, wantErr: "all environments"},
		{name: "all-env frontend", env: map[string]string{"INIT_FRONTEND_API_TOKENS": "default.x"}, wantErr: "all environments"},
		{name: "unknown flag", args: []string{"-nope"}, wantErr: "nope"},
		{name: "extra argument", args: []string{"extra"}, wantErr: "extra"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ParseConfig(c.args, envMap(c.env), io.Discard)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want it to mention %q", err, c.wantErr)
				}
				return
			}
			if err != nil || !c.check(cfg) {
				t.Fatalf("config %+v, err %v", cfg, err)
			}
		})
	}
}

func TestTokenScope(t *testing.T) {
	t.Parallel()
	for in, want := range map[string][2]string{
		"*:*.abc": {"*", "*"}, "default:development.x": {"default", "development"}, "secret": {"*", "*"},
		":production.x": {"*", "production"}, "p:.x": {"p", "*"},
	} {
		if p, e := tokenScope(in); p != want[0] || e != want[1] {
			t.Errorf("tokenScope(%q) = %s, %s; want %v", in, p, e, want)
		}
	}
}
