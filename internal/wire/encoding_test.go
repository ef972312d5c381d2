package wire

import "testing"

// TestAppendJSONStringMatchesJSONString: the allocation-free path encodes
// as JSONString does, and the other strings go through it.
func TestAppendJSONStringMatchesJSONString(t *testing.T) {
	for _, s := range []string{"", "flag-1", "a b~", `q"uote`, `back\slash`, "tab\t", "nl\n", "<html>&", "ünïcode", "\u2028", "bad\xffutf8", "\x7f"} {
		if got, want := string(AppendJSONString([]byte("x"), s)), "x"+string(JSONString(s)); got != want {
			t.Errorf("%q: AppendJSONString %s, JSONString %s", s, got, want)
		}
	}
}
