package server

import (
	"regexp"
	"testing"
)

// urlFriendly must accept exactly what the pattern it replaced accepted.
func TestURLFriendlyMatchesThePattern(t *testing.T) {
	t.Parallel()
	pattern := regexp.MustCompile(`^[A-Za-z0-9\-_.!~*'()]+$`)
	for _, name := range []string{
		"", "a", "my-flag", "A.b_c~d-9", "it's(ok)!*", "..", "with space", "slash/", "percent%20",
		"é", "new\nline", "end\n", "?", "#", "[x]", "a+b", "a@b", "a,b",
	} {
		if got, want := urlFriendly(name), pattern.MatchString(name); got != want {
			t.Errorf("urlFriendly(%q) = %v, want %v", name, got, want)
		}
	}
}
