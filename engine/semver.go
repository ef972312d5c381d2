package engine

import (
	"strings"

	"github.com/Masterminds/semver/v3"
)

// semverValue is a SemVer 2.0 version reduced to what precedence needs:
// build metadata is dropped.
type semverValue struct {
	major, minor, patch uint64
	pre                 string
}

// parseSemverOperand parses a constraint's semver value with
// Masterminds/semver (StrictNewVersion), after trimming surrounding
// whitespace. A leading "v" is rejected (evaluation.md §12).
func parseSemverOperand(s string) (semverValue, bool) {
	s = strings.TrimSpace(s)
	if s == "" || s[0] == 'v' || s[0] == 'V' {
		return semverValue{}, false
	}
	v, err := semver.StrictNewVersion(s)
	if err != nil {
		return semverValue{}, false
	}
	return semverValue{major: v.Major(), minor: v.Minor(), patch: v.Patch(), pre: v.Prerelease()}, true
}

// parseSemver parses a context value exactly as parseSemverOperand does
// (the same acceptance as semver.StrictNewVersion, checked by
// TestParseSemverMatchesMasterminds and FuzzParseSemver), without
// allocating: it runs once per request and semver field.
func parseSemver(s string) (semverValue, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > semver.MaxVersionLen {
		return semverValue{}, false
	}
	major, rest, ok := strings.Cut(s, ".")
	if !ok {
		return semverValue{}, false
	}
	minor, rest, ok := strings.Cut(rest, ".")
	if !ok {
		return semverValue{}, false
	}
	patch := rest
	if i := strings.IndexByte(patch, '+'); i >= 0 {
		if !validIdentifiers(patch[i+1:], false) {
			return semverValue{}, false
		}
		patch = patch[:i]
	}
	var v semverValue
	if i := strings.IndexByte(patch, '-'); i >= 0 {
		v.pre = patch[i+1:]
		if !validIdentifiers(v.pre, true) {
			return semverValue{}, false
		}
		patch = patch[:i]
	}
	if v.major, ok = parseVersionNumber(major); !ok {
		return semverValue{}, false
	}
	if v.minor, ok = parseVersionNumber(minor); !ok {
		return semverValue{}, false
	}
	if v.patch, ok = parseVersionNumber(patch); !ok {
		return semverValue{}, false
	}
	return v, true
}

// parseVersionNumber parses a major, minor or patch number: digits only,
// no leading zero, fits in uint64.
func parseVersionNumber(s string) (uint64, bool) {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (^uint64(0)-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// validIdentifiers checks dot-separated pre-release (numeric ones without
// leading zeros) or build-metadata identifiers: non-empty, [0-9A-Za-z-].
func validIdentifiers(s string, prerelease bool) bool {
	for {
		id, rest, more := strings.Cut(s, ".")
		if id == "" {
			return false
		}
		for i := 0; i < len(id); i++ {
			c := id[i]
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-') {
				return false
			}
		}
		if prerelease && isNumeric(id) && len(id) > 1 && id[0] == '0' {
			return false
		}
		if !more {
			return true
		}
		s = rest
	}
}

// compareSemver orders two versions by SemVer 2.0 precedence.
func compareSemver(a, b semverValue) int {
	if c := compareUint(a.major, b.major); c != 0 {
		return c
	}
	if c := compareUint(a.minor, b.minor); c != 0 {
		return c
	}
	if c := compareUint(a.patch, b.patch); c != 0 {
		return c
	}
	return comparePrerelease(a.pre, b.pre)
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
