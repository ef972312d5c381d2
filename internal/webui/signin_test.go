package webui

import (
	"net/url"
	"strings"
	"testing"
)

func TestLocalNext(t *testing.T) {
	const flags = "/flags"
	for _, tc := range []struct{ base, next, want string }{
		// Pages of this server lead where they point.
		{"", "/flags", "/flags"},
		{"", "/", "/"},
		{"", "/events?type=feature-created&project=default", "/events?type=feature-created&project=default"},
		{"", "/projects/default/flags/my-flag", "/projects/default/flags/my-flag"},
		{"", "/flags?query=a%20b", "/flags?query=a%20b"},
		{"", "/flags?next=//evil.example/", "/flags?next=//evil.example/"},
		{"", "/flags#//evil.example", "/flags#//evil.example"},
		{"", "/flags/", "/flags/"},
		{"", "/fl\tags", "/flags"},
		{"", " /flags\n", "/flags"},
		{"/bunting", "/bunting/flags", "/bunting/flags"},
		{"/bunting", "/bunting/", "/bunting/"},
		{"/bunting", "/bunting/events?q=1", "/bunting/events?q=1"},
		// Nothing, or not a path.
		{"", "", flags},
		{"", "flags", flags},
		{"", "evil.example", flags},
		{"", "./flags", flags},
		{"", "../flags", flags},
		{"", "?next=/flags", flags},
		{"", "#top", flags},
		// Another host, however written.
		{"", "//evil.example/", flags},
		{"", "///evil.example/", flags},
		{"", "////evil.example/", flags},
		{"", `/\evil.example/`, flags},
		{"", `\/evil.example/`, flags},
		{"", `\\evil.example/`, flags},
		{"", `/\/evil.example/`, flags},
		{"", `/\\evil.example/`, flags},
		{"", "/\t/evil.example/", flags},
		{"", "/\n/evil.example/", flags},
		{"", "/\r/evil.example/", flags},
		{"", "/\r\n/evil.example/", flags},
		{"", "/\x00/evil.example/", flags},
		{"", "/\x01/evil.example/", flags},
		{"", "/\x0b/evil.example/", flags},
		{"", "/\x0c/evil.example/", flags},
		{"", "/\x1f/evil.example/", flags},
		{"", "/\x7f/evil.example/", flags},
		{"", "\t//evil.example/", flags},
		{"", " //evil.example/", flags},
		{"", "\x00//evil.example/", flags},
		{"", "/ /evil.example/", "/ /evil.example/"}, // a space inside is a path segment, not a host
		{"", "/%09/evil.example/", flags},
		{"", "/%0a/evil.example/", flags},
		{"", "/%0D%0A/evil.example/", flags},
		{"", "/%2F/evil.example/", flags},
		{"", "/%2f/evil.example/", flags},
		{"", "%2F%2Fevil.example/", flags},
		{"", "/%5Cevil.example/", flags},
		{"", "/%5c%5cevil.example/", flags},
		{"", "/%252F/evil.example/", flags},
		{"", "/%25252F/evil.example/", flags},
		{"", "/%2525252525252F/evil.example/", flags},
		{"", "/%00/evil.example/", flags},
		{"", "/%zz", flags},
		{"", "/..//evil.example/", flags},
		{"", "/./\\evil.example/", flags},
		{"", "/%2e%2e//evil.example/", flags},
		{"", "/flags/../..//evil.example", flags},
		// Schemes.
		{"", "https:evil.example", flags},
		{"", "https://evil.example/", flags},
		{"", "https:/evil.example/", flags},
		{"", `http:\\evil.example\`, flags},
		{"", "HTTPS://evil.example", flags},
		{"", "javascript:alert(1)", flags},
		{"", "JaVaScRiPt:alert(1)", flags},
		{"", "\tjavascript:alert(1)", flags},
		{"", " javascript:alert(1)", flags},
		{"", "java\tscript:alert(1)", flags},
		{"", "javascript%3Aalert(1)", flags},
		{"", "data:text/html,<script>alert(1)</script>", flags},
		{"", "vbscript:msgbox(1)", flags},
		{"", "mailto:x@evil.example", flags},
		// Under a base path, only under it.
		{"/bunting", "/flags", "/bunting/flags"},
		{"/bunting", "/bunting", "/bunting/flags"},
		{"/bunting", "/buntingx/flags", "/bunting/flags"},
		{"/bunting", "/bunting/../flags", "/bunting/flags"},
		{"/bunting", "/bunting/..%2Fflags", "/bunting/flags"},
		{"/bunting", "/bunting/%2e%2e/flags", "/bunting/flags"},
		{"/bunting", `/bunting\..\evil`, "/bunting/flags"},
		{"/bunting", "/bunting//evil.example/", "/bunting/flags"},
		{"/bunting", "//bunting/flags", "/bunting/flags"},
		{"/bunting", "/BUNTING/flags", "/bunting/flags"},
		{"/bunting", "https://evil.example/bunting/flags", "/bunting/flags"},
		{"", strings.Repeat("/a", 3000), flags},
	} {
		want := tc.want
		if want == flags {
			want = tc.base + flags
		}
		if got := LocalNext(tc.base, tc.next); got != want {
			t.Errorf("LocalNext(%q, %q) = %q, want %q", tc.base, tc.next, got, want)
		}
	}
}

// TestLocalNextStaysLocal checks every accepted value against Go's URL
// resolution as a browser would do it: relative to this server, it stays
// on this server's host, under the base path.
func TestLocalNextStaysLocal(t *testing.T) {
	page, _ := url.Parse("http://bunting.example/bunting/login?next=x")
	parts := []string{"/", `\`, "\t", "\n", "\r", " ", ".", "..", "%2F", "%5C", "%09", "%25", "%2e", "bunting", "evil.example", ":", "?", "#", "@", "javascript:"}
	// Every string of up to four parts.
	var walk func(prefix string, n int)
	checked := 0
	walk = func(prefix string, n int) {
		got := LocalNext("/bunting", prefix)
		checked++
		u, err := url.Parse(got)
		if err != nil {
			t.Fatalf("LocalNext(%q) = %q, which does not parse: %v", prefix, got, err)
		}
		r := page.ResolveReference(u)
		if r.Host != page.Host || r.Scheme != page.Scheme || !strings.HasPrefix(r.Path, "/bunting/") {
			t.Fatalf("LocalNext(%q) = %q leads to %s", prefix, got, r)
		}
		if n == 0 {
			return
		}
		for _, p := range parts {
			walk(prefix+p, n-1)
		}
	}
	walk("", 4)
	t.Logf("%d values checked", checked)
}
