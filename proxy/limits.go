package proxy

import (
	"github.com/bunting-flags/bunting/internal/httpserver"
)

// limitOptions are the connection limits (timeouts, header size) as proxy
// options, read from the same variables and flags as `bunting server`'s.
// Their durations are Go durations or milliseconds.
func limitOptions() []option {
	var opts []option
	for _, o := range httpserver.Options() {
		opts = append(opts, option{
			name: o.Flag, envs: []string{o.Env}, flag: o.Flag,
			usage: o.Usage + "; default " + o.Default(),
			set:   func(c *Config, v string) error { return o.Set(&c.HTTP, v) },
		})
	}
	return opts
}

// withDefaultLimits fills the limits a Go user left at zero (a Config not
// made by DefaultConfig) with the defaults.
func withDefaultLimits(l httpserver.Limits) httpserver.Limits {
	d := httpserver.DefaultLimits()
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = d.ReadHeaderTimeout
	}
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = d.ReadTimeout
	}
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = d.WriteTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = d.IdleTimeout
	}
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = d.MaxHeaderBytes
	}
	return l
}
