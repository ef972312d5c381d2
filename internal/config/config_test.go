package config_test

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/config"
)

// settings is a small command's config for the mechanism's tests.
type settings struct {
	Name    string
	Keys    []string
	On      bool
	Count   int
	Size    int64
	Every   time.Duration
	Wait    time.Duration
	Timeout time.Duration
	Level   string
	Port    int
}

func (s *settings) options() []config.Option {
	return []config.Option{
		{Name: "name", Env: []string{"NAME", "OLD_NAME"}, Flag: "name", Default: "x", Usage: "a name", Value: config.NonEmpty(&s.Name)},
		{Name: "keys", Env: []string{"KEYS"}, Flag: "keys", Usage: "keys", Value: config.List(&s.Keys)},
		{Name: "secrets", Env: []string{"SECRETS"}, Flag: "secrets", FallbackFor: "keys", Usage: "old keys", Value: config.List(&s.Keys)},
		{Name: "on", Env: []string{"ON"}, Flag: "on", Default: "false", Usage: "on", Value: config.Bool(&s.On)},
		{Name: "count", Env: []string{"COUNT"}, Flag: "count", Default: "3", Usage: "count", Value: config.Int(&s.Count, 1, 9)},
		{Name: "size", Env: []string{"SIZE"}, Default: "10", Usage: "size", Value: config.Int64(&s.Size, 1)},
		{Name: "every", Env: []string{"EVERY"}, Flag: "every", Default: "5000", Usage: "every", Value: config.Millis(&s.Every, 1)},
		{Name: "wait", Env: []string{"WAIT"}, Flag: "wait", Default: "1s", Usage: "wait", Value: config.Duration(&s.Wait)},
		{Name: "timeout", Env: []string{"TIMEOUT"}, Flag: "timeout", Default: "30s", Usage: "timeout", Value: config.DurationOrMillis(&s.Timeout)},
		{Name: "level", Env: []string{"LEVEL"}, Flag: "level", Default: "info", Usage: "level", Value: config.OneOf(&s.Level, "debug", "info")},
		{Name: "port", Env: []string{"PORT"}, Flag: "port", Default: "80", Usage: "port", Value: config.Port(&s.Port)},
	}
}

func load(env map[string]string, args ...string) (settings, error) {
	var s settings
	config.Defaults(s.options())
	err := config.Load("test", s.options(), func(k string) (string, bool) { v, ok := env[k]; return v, ok }, args, io.Discard)
	return s, err
}

func TestValidConfigurations(t *testing.T) {
	for _, c := range []struct {
		name  string
		env   map[string]string
		args  []string
		check func(settings) bool
	}{
		{"defaults", nil, nil, func(s settings) bool {
			return s.Name == "x" && !s.On && s.Count == 3 && s.Size == 10 && s.Every == 5*time.Second && s.Wait == time.Second &&
				s.Timeout == 30*time.Second && s.Level == "info" && s.Port == 80 && s.Keys == nil
		}},
		{"first variable wins", map[string]string{"NAME": "a", "OLD_NAME": "b"}, nil, func(s settings) bool { return s.Name == "a" }},
		{"second variable", map[string]string{"NAME": "", "OLD_NAME": "b"}, nil, func(s settings) bool { return s.Name == "b" }},
		{"flags win", map[string]string{"COUNT": "4"}, []string{"-count", "5", "-on"}, func(s settings) bool { return s.Count == 5 && s.On }},
		{"typed values", map[string]string{"ON": "Yes", "KEYS": " a, ,b ", "TIMEOUT": "1500", "LEVEL": "DEBUG", "WAIT": "250ms", "SIZE": "7"}, nil,
			func(s settings) bool {
				return s.On && len(s.Keys) == 2 && s.Keys[1] == "b" && s.Timeout == 1500*time.Millisecond && s.Level == "debug" && s.Wait == 250*time.Millisecond && s.Size == 7
			}},
		{"fallback when the option is unset", map[string]string{"SECRETS": "s"}, nil, func(s settings) bool { return len(s.Keys) == 1 && s.Keys[0] == "s" }},
		{"option wins over its fallback", map[string]string{"SECRETS": "s", "KEYS": "k"}, nil, func(s settings) bool { return s.Keys[0] == "k" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := load(c.env, c.args...)
			if err != nil || !c.check(s) {
				t.Fatalf("%+v, %v", s, err)
			}
		})
	}
}

func TestInvalidConfigurations(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		args []string
		want []string
	}{
		{map[string]string{"NAME": " "}, nil, []string{`invalid value " " for name (NAME, OLD_NAME, -name): must not be empty`}},
		{map[string]string{"ON": "maybe"}, nil, []string{`"maybe"`, "on (ON, -on)", "not a boolean"}},
		{map[string]string{"COUNT": "10"}, nil, []string{`"10"`, "count (COUNT, -count)", "between 1 and 9"}},
		{map[string]string{"SIZE": "0"}, nil, []string{`"0"`, "size (SIZE)", "at least 1"}},
		{map[string]string{"EVERY": "5s"}, nil, []string{`"5s"`, "every", "milliseconds"}},
		{map[string]string{"WAIT": "1500"}, nil, []string{`"1500"`, "wait", "not a duration"}},
		{map[string]string{"TIMEOUT": "-1s"}, nil, []string{`"-1s"`, "timeout", "positive"}},
		{map[string]string{"LEVEL": "loud"}, nil, []string{`"loud"`, "level", "not one of debug, info"}},
		{map[string]string{"PORT": "65536"}, nil, []string{`"65536"`, "port", "0-65535"}},
		{map[string]string{"PORT": "x", "COUNT": "x"}, nil, []string{"port (PORT", "count (COUNT"}},
		{nil, []string{"-count", "0"}, []string{`"0"`, "count (COUNT, -count)"}},
		{nil, []string{"-nope"}, []string{"nope"}},
		{nil, []string{"stray"}, []string{`unexpected argument "stray"`}},
	} {
		_, err := load(c.env, c.args...)
		if err == nil {
			t.Errorf("%v %v: no error", c.env, c.args)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v %v: %q does not say %q", c.env, c.args, err, w)
			}
		}
	}
}

func TestHelpAndMarkdown(t *testing.T) {
	var s settings
	var help strings.Builder
	err := config.Load("test", s.options(), func(string) (string, bool) { return "", false }, []string{"-h"}, &help)
	if !errors.Is(err, flag.ErrHelp) || !strings.Contains(help.String(), "-count") || !strings.Contains(help.String(), "default 3") {
		t.Fatalf("%v\n%s", err, help.String())
	}
	md := config.Markdown(s.options(), true)
	if !strings.Contains(md, "| name | `NAME`, then `OLD_NAME` | `-name` | `x` | a name |") || !strings.Contains(md, "| size | `SIZE` | – | `10` | size |") {
		t.Fatal(md)
	}
	out, err := config.ReplaceTables("a\n<!-- BEGIN options:t -->\nold\n<!-- END options:t -->\nb", map[string]string{"t": "new\n"})
	if err != nil || out != "a\n<!-- BEGIN options:t -->\nnew\n<!-- END options:t -->\nb" {
		t.Fatalf("%q %v", out, err)
	}
	if _, err := config.ReplaceTables("no markers", map[string]string{"t": ""}); err == nil {
		t.Fatal("missing markers accepted")
	}
}
