// Package config is Bunting's one configuration mechanism. Each command
// (server, proxy) declares its options once, as a table of Option values
// bound to the fields of its typed Config; from that table come the
// defaults, the environment variables, the command-line flags, the help
// text and the option tables of docs/configuration.md (see Markdown). Every value is
// parsed by a typed Value that validates it, and a bad value is an error
// naming the option, its variables, its flag and the value.
//
// Adding an option is one line in a command's table, for example
//
//	{Name: "fetchTimeout", Env: []string{"FETCH_TIMEOUT"}, Flag: "fetch-timeout",
//		Default: "10s", Usage: "longest upstream fetch", Value: config.Duration(&c.FetchTimeout)},
//
// followed by `make options-doc` to refresh docs/configuration.md.
package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/bunting-flags/bunting/internal/redact"
)

// Option is one setting of a command.
type Option struct {
	// Name names the option in errors and the docs: the reference's
	// option name where there is one (upstreamUrl), else the flag or the
	// variable.
	Name string
	// Env lists the environment variables read, in order: the first one
	// set to a non-empty value wins (a blank value is a value, and an
	// error where the option needs one).
	Env []string
	// Flag is the command-line flag, without "-"; empty for options set by
	// the environment only.
	Flag string
	// Default is the option's default as it would be written by a user;
	// Defaults parses it into the config. Empty means the zero value.
	Default string
	// Shown describes a default that is not a value ("all interfaces");
	// it is what help and the docs show when set.
	Shown string
	// Usage says what the option does, for help and the docs.
	Usage string
	// Value parses and stores the option.
	Value Value
	// FallbackFor names an option this one is a deprecated alias of: its
	// variables are read only when none of that option's are set.
	FallbackFor string
}

// label is how errors name the option: name (VAR, -flag).
func (o Option) label() string {
	where := strings.Join(o.Env, ", ")
	if o.Flag != "" {
		if where != "" {
			where += ", "
		}
		where += "-" + o.Flag
	}
	return fmt.Sprintf("%s (%s)", o.Name, where)
}

// errorf names the option and the value in an error; a URL is shown
// without what may hold a credential.
func (o Option) errorf(v string, err error) error {
	if strings.Contains(v, "://") {
		v = redact.URL(v)
	}
	return fmt.Errorf("invalid value %q for %s: %w", v, o.label(), err)
}

// shownDefault is the default as help and the docs show it ("" for none).
func (o Option) shownDefault() string {
	if o.Shown != "" {
		return o.Shown
	}
	return o.Default
}

// Defaults stores every option's default into its field. A default that
// does not parse is a programming error and panics.
func Defaults(opts []Option) {
	for _, o := range opts {
		if o.Default == "" {
			continue
		}
		if err := o.Value.Set(o.Default); err != nil {
			panic(fmt.Sprintf("config: the default %q of %s: %v", o.Default, o.Name, err))
		}
	}
}

// FromEnv sets the options whose variables lookup finds, and reports every
// bad value.
func FromEnv(opts []Option, lookup func(string) (string, bool)) error {
	var errs []error
	set := map[string]bool{}
	for _, o := range opts {
		if o.FallbackFor != "" {
			continue
		}
		if v, ok := first(lookup, o.Env); ok {
			set[o.Name] = true
			if err := o.Value.Set(v); err != nil {
				errs = append(errs, o.errorf(v, err))
			}
		}
	}
	for _, o := range opts {
		if o.FallbackFor == "" || set[o.FallbackFor] {
			continue
		}
		if v, ok := first(lookup, o.Env); ok {
			if err := o.Value.Set(v); err != nil {
				errs = append(errs, o.errorf(v, err))
			}
		}
	}
	return errors.Join(errs...)
}

func first(lookup func(string) (string, bool), names []string) (string, bool) {
	for _, n := range names {
		if v, ok := lookup(n); ok && v != "" {
			return v, true
		}
	}
	return "", false
}

// FlagSet is a flag set with a flag per option that has one; its usage
// line names the variables and the default.
func FlagSet(name string, opts []Option, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(w)
	for _, o := range opts {
		if o.Flag == "" {
			continue
		}
		o := o
		usage := o.Usage
		if len(o.Env) > 0 {
			usage += " (" + o.Name + ": " + strings.Join(o.Env, " or ") + ")"
		}
		if d := o.shownDefault(); d != "" {
			usage += "; default " + d
		}
		set := func(v string) error {
			if err := o.Value.Set(v); err != nil {
				return o.errorf(v, err)
			}
			return nil
		}
		if b, ok := o.Value.(boolValue); ok && b.isBool() {
			fs.BoolFunc(o.Flag, usage, set)
		} else {
			fs.Func(o.Flag, usage, set)
		}
	}
	return fs
}

// Load reads the environment through lookup, then the command-line args
// (flags win). Every bad value is reported; -h returns flag.ErrHelp after
// the usage went to w.
func Load(name string, opts []Option, lookup func(string) (string, bool), args []string, w io.Writer) error {
	envErr := FromEnv(opts, lookup)
	fs := FlagSet(name, opts, w)
	if err := fs.Parse(args); err != nil {
		return err
	}
	var errs []error
	if envErr != nil {
		errs = append(errs, envErr)
	}
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	}
	return errors.Join(errs...)
}

// Markdown is the Markdown table of opts (docs/configuration.md): option (when withName), variables,
// flag, default and meaning, one row per option.
func Markdown(opts []Option, withName bool) string {
	var b strings.Builder
	if withName {
		b.WriteString("| option | environment variable | flag | default | meaning |\n|---|---|---|---|---|\n")
	} else {
		b.WriteString("| variable | flag | default | meaning |\n|---|---|---|---|\n")
	}
	code := func(s string) string { return "`" + s + "`" }
	for _, o := range opts {
		var envs []string
		for _, e := range o.Env {
			envs = append(envs, code(e))
		}
		flagText, def := "–", "–"
		if o.Flag != "" {
			flagText = code("-" + o.Flag)
		}
		switch {
		case o.Shown != "":
			def = o.Shown
		case o.Default != "":
			def = code(o.Default)
		}
		if withName {
			fmt.Fprintf(&b, "| %s ", o.Name)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", strings.Join(envs, ", then "), flagText, def, strings.ReplaceAll(o.Usage, "|", "\\|"))
	}
	return b.String()
}

// ReplaceTables puts each table of tables (by name) into text between the
// lines `<!-- BEGIN options:NAME -->` and `<!-- END options:NAME -->`,
// which must be there.
func ReplaceTables(text string, tables map[string]string) (string, error) {
	for name, table := range tables {
		begin, end := "<!-- BEGIN options:"+name+" -->\n", "<!-- END options:"+name+" -->"
		i := strings.Index(text, begin)
		j := strings.Index(text, end)
		if i < 0 || j < i {
			return "", fmt.Errorf("no %q … %q markers", strings.TrimSpace(begin), end)
		}
		text = text[:i+len(begin)] + table + text[j:]
	}
	return text, nil
}
