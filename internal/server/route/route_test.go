package route

import "testing"

func TestBearer(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"abc": "abc", "Bearer abc": "abc", "bearer   abc": "abc", "BEARER\tabc": "abc", " abc ": "abc", "Bearerabc": "Bearerabc", "": "",
	} {
		if got := Bearer(in); got != want {
			t.Errorf("bearer(%q) = %q, want %q", in, got, want)
		}
	}
}
