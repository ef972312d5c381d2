// Package bench compares the Bunting engine with the official Unleash Go SDK
// (github.com/Unleash/unleash-client-go/v4 v4.5.0) on generated payloads.
//
// It is its own module so that the SDK never enters Bunting's build. Run
// `make bench` (go test -bench in this directory) for the side-by-side
// table, and `go test ./...` here for the compatibility check.
package bench
