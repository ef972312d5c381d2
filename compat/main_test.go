// Package compat_test puts Bunting next to the real Unleash programs: the
// Unleash server as an upstream of Bunting's proxy, and the Unleash SDKs and
// the reference Node proxy as clients of Bunting's server. The tests run when
// BUNTING_COMPAT=1 (make test sets it) and fail, rather than skip, when
// something they need is missing.
package compat_test

import (
	"os"
	"testing"

	"github.com/bunting-flags/bunting/compat/harness"
)

func TestMain(m *testing.M) {
	code := m.Run()
	harness.Cleanup()
	os.Exit(code)
}
