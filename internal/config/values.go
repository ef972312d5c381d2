package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Value parses a text into the field it is bound to, refusing values the
// field cannot hold.
type Value interface {
	Set(v string) error
}

// boolValue is a Value whose flag may be given without a value (-flag).
type boolValue interface {
	Value
	isBool() bool
}

// Func is a Value parsed by a function of the command's own.
type Func func(v string) error

// Set calls f.
func (f Func) Set(v string) error { return f(v) }

type stringValue struct {
	p        *string
	nonEmpty bool
}

// String is a text, trimmed of surrounding space.
func String(p *string) Value { return stringValue{p: p} }

// NonEmpty is a text that may not be blank.
func NonEmpty(p *string) Value { return stringValue{p: p, nonEmpty: true} }

func (s stringValue) Set(v string) error {
	v = strings.TrimSpace(v)
	if s.nonEmpty && v == "" {
		return errors.New("must not be empty")
	}
	*s.p = v
	return nil
}

type listValue struct{ p *[]string }

// List is a comma-separated list; items are trimmed and empty ones dropped.
func List(p *[]string) Value { return listValue{p} }

func (l listValue) Set(v string) error { *l.p = SplitList(v); return nil }

// SplitList splits a comma list, trimming each item and dropping empty ones.
func SplitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

type boolVal struct{ p *bool }

// Bool is true/false, 1/0, t/f, yes/no, y/n or on/off, in any case; its
// flag may be given alone (-flag) for true.
func Bool(p *bool) Value { return boolVal{p} }

func (b boolVal) Set(v string) error {
	x, err := ParseBool(v)
	if err != nil {
		return err
	}
	*b.p = x
	return nil
}

func (boolVal) isBool() bool { return true }

// ParseBool reads the texts Bool accepts.
func ParseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "t", "yes", "y", "on":
		return true, nil
	case "false", "0", "f", "no", "n", "off":
		return false, nil
	}
	return false, errors.New("not a boolean (true or false)")
}

type intValue struct {
	p      *int
	lo, hi int
}

// Int is a whole number from lo to hi.
func Int(p *int, lo, hi int) Value { return intValue{p, lo, hi} }

// Port is a TCP port number, 0 to 65535.
func Port(p *int) Value { return portValue{p} }

type portValue struct{ p *int }

func (v portValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 || n > 65535 {
		return errors.New("not a port number (0-65535)")
	}
	*v.p = n
	return nil
}

func (v intValue) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return errors.New("not a whole number")
	}
	if n < v.lo || n > v.hi {
		return fmt.Errorf("must be between %d and %d", v.lo, v.hi)
	}
	*v.p = n
	return nil
}

type int64Value struct {
	p   *int64
	min int64
}

// Int64 is a whole number of at least min (a size in bytes, say).
func Int64(p *int64, min int64) Value { return int64Value{p, min} }

func (v int64Value) Set(s string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return errors.New("not a whole number")
	}
	if n < v.min {
		return fmt.Errorf("must be at least %d", v.min)
	}
	*v.p = n
	return nil
}

type millisValue struct {
	p   *time.Duration
	min int64
}

// Millis is a whole number of milliseconds, at least min.
func Millis(p *time.Duration, min int64) Value { return millisValue{p, min} }

func (v millisValue) Set(s string) error {
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		return errors.New("not a whole number of milliseconds")
	}
	if n < v.min {
		return fmt.Errorf("must be at least %d", v.min)
	}
	*v.p = time.Duration(n) * time.Millisecond
	return nil
}

type durationValue struct {
	p        *time.Duration
	orMillis bool
}

// Duration is a positive Go duration ("250ms", "2s").
func Duration(p *time.Duration) Value { return durationValue{p: p} }

// DurationOrMillis is a positive Go duration ("30s") or a whole number of
// milliseconds ("30000").
func DurationOrMillis(p *time.Duration) Value { return durationValue{p: p, orMillis: true} }

func (v durationValue) Set(s string) error {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if err != nil {
		ms, msErr := strconv.ParseInt(s, 10, 64)
		if !v.orMillis || msErr != nil {
			if v.orMillis {
				return errors.New("not a duration (30s, 2m) or a number of milliseconds")
			}
			return errors.New("not a duration (250ms, 2s, 1m)")
		}
		d = time.Duration(ms) * time.Millisecond
	}
	if d <= 0 {
		return errors.New("must be positive")
	}
	*v.p = d
	return nil
}

type oneOfValue struct {
	p      *string
	values []string
}

// OneOf is one of values, in any case (stored in lower case).
func OneOf(p *string, values ...string) Value { return oneOfValue{p, values} }

func (v oneOfValue) Set(s string) error {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, ok := range v.values {
		if s == ok {
			*v.p = s
			return nil
		}
	}
	return fmt.Errorf("not one of %s", strings.Join(v.values, ", "))
}
