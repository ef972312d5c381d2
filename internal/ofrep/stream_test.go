package ofrep

import (
	"strings"
	"testing"
	"time"
)

// TestCredential checks an event-stream credential round-trips, and that
// an expired one, one signed by another key and a tampered one are refused.
func TestCredential(t *testing.T) {
	s := newSigner([]byte("key-one"))
	now := time.Unix(1_800_000_000, 0)
	c := credential{expires: now.Add(10 * time.Minute).Unix(), version: 0xabc, scope: "development|default,other.x"}
	token := s.sign(c)
	got, ok := s.verify(token, now)
	if !ok || got != c {
		t.Fatalf("verify(sign(c)) = %+v, %v; want %+v", got, ok, c)
	}
	if _, ok := s.verify(token, now.Add(10*time.Minute)); ok {
		t.Error("an expired credential was accepted")
	}
	if _, ok := newSigner([]byte("key-two")).verify(token, now); ok {
		t.Error("a credential signed with another key was accepted")
	}
	payload, sig, _ := strings.Cut(token, ".")
	for _, bad := range []string{"", ".", payload, payload + ".", "x" + token, payload[1:] + "." + sig, strings.ToUpper(token)} {
		if _, ok := s.verify(bad, now); ok {
			t.Errorf("verify(%q) accepted a tampered credential", bad)
		}
	}
}

// TestStreamTailFollowsPeriod checks the advertised URL stays the same
// within a credential period and changes with the next one.
func TestStreamTailFollowsPeriod(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	h := New(Options{BasePath: "/ofrep", StreamTTL: time.Minute, Secret: []byte("k"), Now: func() time.Time { return now }})
	e := &encoding{version: 7}
	first := string(h.streamTail(e, "s"))
	if !strings.Contains(first, `"requestUri":"/ofrep/v1/events?c=`) {
		t.Fatalf("tail %s", first)
	}
	now = now.Add(time.Second)
	if again := string(h.streamTail(e, "s")); again != first {
		t.Errorf("the URL changed within one period: %s then %s", first, again)
	}
	now = now.Add(time.Minute)
	if next := string(h.streamTail(e, "s")); next == first {
		t.Error("the URL did not change with the period")
	}
}
