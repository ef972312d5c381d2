package engine

import (
	"strings"

	"github.com/Masterminds/semver/v3"
)

// parseStrictSemver parses a SemVer 2.0 version the way Unleash's operators
// accept it: surrounding whitespace is ignored, everything else must be
// strict (no leading "v", no short forms, no leading zeros).
func parseStrictSemver(s string) (*semver.Version, bool) {
	s = strings.TrimSpace(s)
	if s == "" || s[0] == 'v' || s[0] == 'V' {
		return nil, false
	}
	v, err := semver.StrictNewVersion(s)
	if err != nil {
		return nil, false
	}
	return v, true
}

// compareSemver orders two versions by SemVer 2.0 precedence (build
// metadata ignored). Unlike semver.Version.Compare it never allocates.
func compareSemver(a, b *semver.Version) int {
	if c := compareUint(a.Major(), b.Major()); c != 0 {
		return c
	}
	if c := compareUint(a.Minor(), b.Minor()); c != 0 {
		return c
	}
	if c := compareUint(a.Patch(), b.Patch()); c != 0 {
		return c
	}
	return comparePrerelease(a.Prerelease(), b.Prerelease())
}

func compareUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// comparePrerelease compares dot-separated pre-release strings: no
// pre-release sorts after any pre-release; identifiers are compared in
// order (numeric ones numerically and before alphanumeric ones,
// alphanumeric ones in ASCII order); a shorter list of equal identifiers
// sorts first.
func comparePrerelease(a, b string) int {
	switch {
	case a == b:
		return 0
	case a == "":
		return 1
	case b == "":
		return -1
	}
	for {
		ia, resta, moreA := strings.Cut(a, ".")
		ib, restb, moreB := strings.Cut(b, ".")
		if c := compareIdentifier(ia, ib); c != 0 {
			return c
		}
		switch {
		case !moreA && !moreB:
			return 0
		case !moreA:
			return -1
		case !moreB:
			return 1
		}
		a, b = resta, restb
	}
}

func compareIdentifier(a, b string) int {
	na, nb := isNumeric(a), isNumeric(b)
	switch {
	case na && nb:
		// Strict parsing rules out leading zeros, so length orders first.
		if len(a) != len(b) {
			if len(a) < len(b) {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	case na:
		return -1
	case nb:
		return 1
	}
	return strings.Compare(a, b)
}

func isNumeric(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
