package domain

import (
	"regexp"
	"strings"
	"testing"
)

// urlSafeName must accept exactly what the pattern it replaced accepted.
func TestURLSafeNameMatchesThePattern(t *testing.T) {
	pattern := regexp.MustCompile(`^[A-Za-z0-9._~-]{1,100}$`)
	for _, name := range []string{
		"", "a", "my-endpoint", "A.b_c~d-9", strings.Repeat("x", 100), strings.Repeat("x", 101),
		"with space", "slash/", "percent%20", "é", "new\nline", "tab\t", "end\n", "?", "#", "..",
	} {
		if got, want := urlSafeName(name), pattern.MatchString(name); got != want {
			t.Errorf("urlSafeName(%q) = %v, want %v", name, got, want)
		}
	}
}
