// Package redact makes request paths and URLs fit for a log line: no
// secret of any kind (API tokens, personal and service-account tokens,
// signal tokens, client keys, passwords) may reach the logs, at any level.
package redact

import (
	"net/url"
	"strings"
)

// Mark replaces a redacted part.
const Mark = "[redacted]"

// secretPathPrefixes are paths whose remainder is a secret: the admin
// API's token routes take the token itself as the last segment.
var secretPathPrefixes = []string{"/api/admin/api-tokens/"}

// minSecretHex is the shortest run of hexadecimal digits taken for the
// random part of a secret: every secret Bunting makes has 32 or more.
const minSecretHex = 32

// Path returns a request path with the segments that carry, or look like,
// a secret replaced by Mark: whatever follows a secretPathPrefixes entry,
// a segment with a colon (API tokens are "<project>:<environment>.<secret>",
// personal and service-account tokens "user:<secret>"; flag, project and
// environment names have none), and a segment holding 32 or more
// hexadecimal digits in a row (signal tokens, and any generated secret a
// client put in a path by mistake).
func Path(p string) string {
	for _, prefix := range secretPathPrefixes {
		if strings.HasPrefix(p, prefix) && len(p) > len(prefix) {
			return prefix + Mark
		}
	}
	if !strings.ContainsRune(p, ':') && !hasHexRun(p) {
		return p
	}
	segments := strings.Split(p, "/")
	for i, s := range segments {
		if strings.ContainsRune(s, ':') || hasHexRun(s) {
			segments[i] = Mark
		}
	}
	return strings.Join(segments, "/")
}

func hasHexRun(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
			run++
			if run >= minSecretHex {
				return true
			}
		default:
			run = 0
		}
	}
	return false
}

// URL returns a URL without what may hold a credential: the user
// information, the query and the fragment (each replaced by Mark when
// present). A value that does not parse is replaced whole.
func URL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return Mark
	}
	out := *u
	out.User, out.RawQuery, out.ForceQuery, out.Fragment, out.RawFragment = nil, "", false, "", ""
	s := out.String()
	if u.User != nil && out.Host != "" {
		s = strings.Replace(s, "//", "//"+Mark+"@", 1)
	}
	if u.RawQuery != "" || u.ForceQuery {
		s += "?" + Mark
	}
	if u.Fragment != "" {
		s += "#" + Mark
	}
	return s
}
