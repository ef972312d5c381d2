// Package localpath decides whether a destination taken from a request
// (the ?next= of sign-in, by password or through single sign-on) is a page
// of this server, read as a browser reads it. It is the one check of a
// destination after sign-in; the web UI's script repeats it (localPath in
// app.js) before navigating.
package localpath

import (
	"net/url"
	"strings"
)

// Check returns next as a browser reads it, and whether that is a page of
// this server under base. A browser given a URL turns \ into /, drops TAB, LF and CR anywhere and
// trims control characters and spaces at both ends, so next is first read
// that way; the result, and each percent-decoding of it, must then start
// with base + "/" (so it has no scheme and no host: one leading slash, no
// second), with no "//", "." or ".." segment in its path. The page's
// script checks the same before navigating (localPath in app.js).
func Check(base, next string) (string, bool) {
	if len(next) > 4096 {
		return "", false
	}
	view := asBrowserReads(next)
	s := view
	for range 5 {
		if !underBase(base, s) {
			return "", false
		}
		d, err := url.PathUnescape(s)
		if err != nil {
			return "", false
		}
		if d = asBrowserReads(d); d == s {
			return view, true
		}
		s = d
	}
	return "", false // still changing after five decodings
}

// asBrowserReads trims control characters and spaces at both ends,
// removes the other control characters (browsers drop TAB, LF and CR;
// the rest has no business in a path) and turns \ into /.
func asBrowserReads(s string) string {
	s = strings.TrimFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f })
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\\':
			return '/'
		case r < ' ' || r == 0x7f:
			return -1
		}
		return r
	}, s)
}

// underBase reports whether s's path (before any ? or #) starts with
// base + "/" and has no empty, "." or ".." segment.
func underBase(base, s string) bool {
	p := s
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if !strings.HasPrefix(p, base+"/") || strings.Contains(p, "//") {
		return false
	}
	for seg := range strings.SplitSeq(p, "/") {
		if seg == "." || seg == ".." {
			return false
		}
	}
	return true
}
