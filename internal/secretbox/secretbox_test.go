package secretbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBox seals so that the sealed text does not carry the secret, opens
// with the same key (from the key file a first box made), and refuses to
// open with another key or for another purpose.
func TestBox(t *testing.T) {
	file := filepath.Join(t.TempDir(), "secrets.key")
	b1, err := New("", file)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	sealed, err := b1.Seal("purpose", "top-secret")
	if err != nil || strings.Contains(sealed, "top-secret") || !strings.HasPrefix(sealed, sealedPrefix) {
		t.Fatalf("sealed %q, %v", sealed, err)
	}
	if again, _ := b1.Seal("purpose", "top-secret"); again == sealed {
		t.Errorf("sealing twice gave the same text (no fresh nonce)")
	}
	b2, err := New("", file)
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := b2.Open("purpose", sealed); err != nil || plain != "top-secret" {
		t.Errorf("open with the same key file: %q %v", plain, err)
	}
	if _, err := b2.Open("another purpose", sealed); !errors.Is(err, ErrWrongKey) {
		t.Errorf("open for another purpose: %v", err)
	}
	other, _ := New("another-secrets-key", "")
	if _, err := other.Open("purpose", sealed); !errors.Is(err, ErrWrongKey) || !strings.Contains(err.Error(), "SECRETS_KEY") {
		t.Errorf("open with another key: %v", err)
	}
	none, _ := New("", "")
	if _, err := none.Seal("purpose", "x"); !errors.Is(err, ErrNoKey) {
		t.Errorf("seal without a key: %v", err)
	}
	if s, err := none.Seal("purpose", ""); err != nil || s != "" {
		t.Errorf("an empty secret needs no key: %q %v", s, err)
	}
	if _, err := b1.Open("purpose", "plain"); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("open an unsealed value: %v", err)
	}
}

// TestKeyFromText: hex or base64 of 32 bytes is the key itself; other
// text is hashed, so a passphrase works too.
func TestKeyFromText(t *testing.T) {
	hexKey := strings.Repeat("ab", 32)
	if k := keyFromText(hexKey); len(k) != 32 || k[0] != 0xab {
		t.Errorf("hex key: %x", k)
	}
	if k := keyFromText("a passphrase of some length"); len(k) != 32 {
		t.Errorf("passphrase: %d bytes", len(k))
	}
}

// BenchmarkOpen is the cost a token list pays per client or frontend
// token (authentication never opens: it looks tokens up by hash).
func BenchmarkOpen(b *testing.B) {
	box, _ := New("benchmark-secrets-key", "")
	sealed, _ := box.Seal("api-token:x", "default:production.0123456789abcdef0123456789abcdef0123456789abcdef01234567")
	for b.Loop() {
		if _, err := box.Open("api-token:x", sealed); err != nil {
			b.Fatal(err)
		}
	}
}
