//go:build race

package engine_test

// raceEnabled reports whether the race detector is on; allocation counts
// are not meaningful then.
const raceEnabled = true
