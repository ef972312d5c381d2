// Package serverbench holds the flag server's loopback load benchmarks: a
// real server (servertest) on SQLite and on PostgreSQL, driven over HTTP.
// It is its own module so that load tooling never enters the main module.
package serverbench
