package domain

import (
	"regexp"
	"testing"
)

// URLFriendly must accept exactly what the pattern it replaced accepted.
func TestURLFriendlyMatchesThePattern(t *testing.T) {
	t.Parallel()
	pattern := regexp.MustCompile(`^[A-Za-z0-9\-_.!~*'()]+$`)
	for _, name := range []string{
		"", "a", "my-flag", "A.b_c~d-9", "it's(ok)!*", "..", "with space", "slash/", "percent%20",
		"é", "new\nline", "end\n", "?", "#", "[x]", "a+b", "a@b", "a,b",
	} {
		if got, want := URLFriendly(name), pattern.MatchString(name); got != want {
			t.Errorf("URLFriendly(%q) = %v, want %v", name, got, want)
		}
	}
}
