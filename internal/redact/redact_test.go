package redact_test

import (
	"testing"

	"github.com/bunting-flags/bunting/internal/redact"
)

func TestPath(t *testing.T) {
	for in, want := range map[string]string{
		"/api/admin/projects/default/features/checkout":       "/api/admin/projects/default/features/checkout",
		"/api/admin/api-tokens/*:*.deadbeef":                  "/api/admin/api-tokens/[redacted]",
		"/api/admin/api-tokens/plain-init-secret":             "/api/admin/api-tokens/[redacted]",
		"/api/admin/api-tokens/a/b":                           "/api/admin/api-tokens/[redacted]",
		"/api/admin/api-tokens":                               "/api/admin/api-tokens",
		"/api/client/features/default:development.x":          "/api/client/features/[redacted]",
		"/api/admin/user/tokens/user:abc":                     "/api/admin/user/tokens/[redacted]",
		"/api/signal-endpoint/" + hex(56):                     "/api/signal-endpoint/[redacted]",
		"/api/signal-endpoint/alerts-" + hex(31):              "/api/signal-endpoint/alerts-" + hex(31),
		"/proxy/x" + hex(40) + "y/client/metrics":             "/proxy/[redacted]/client/metrics",
		"/api/admin/projects/default/features/f-0123456789ab": "/api/admin/projects/default/features/f-0123456789ab",
	} {
		if got := redact.Path(in); got != want {
			t.Errorf("Path(%q) = %q, want %q", in, got, want)
		}
	}
}

func hex(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = "0123456789abcdef"[i%16]
	}
	return string(b)
}

func TestURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://up.example:4242/api/":                      "http://up.example:4242/api/",
		"https://user:pw@up.example/api/":                  "https://[redacted]@up.example/api/",
		"https://token@up.example/api/":                    "https://[redacted]@up.example/api/",
		"https://boot.example/f.json?sig=abc&token=x#frag": "https://boot.example/f.json?[redacted]#[redacted]",
		"http://up.example/api/client/features?project=p":  "http://up.example/api/client/features?[redacted]",
		"http://[::1]:namedport":                           "[redacted]",
	} {
		if got := redact.URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}
