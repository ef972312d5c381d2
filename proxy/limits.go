package proxy

import (
	"github.com/bunting-flags/bunting/internal/httpserver"
)

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
