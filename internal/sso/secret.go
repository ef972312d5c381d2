package sso

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The client secret is stored sealed with AES-256-GCM, so that a copy of
// the database (a backup, a dump handed to support) does not carry it. The
// key lives outside the database: SECRETS_KEY, or for SQLite a key file
// made next to the database file on first use. Answers to ADMIN callers
// still carry the secret in clear, as Unleash's do: its Terraform provider
// reads it back and would otherwise plan a change forever.

// sealedPrefix marks a sealed secret ("v1:" + base64 of nonce ‖ ciphertext).
const sealedPrefix = "v1:"

// keyring seals and opens secrets; a nil key cannot seal (see errNoKey).
type keyring struct {
	aead cipher.AEAD
}

// errNoKey is why a secret cannot be stored without a key.
var errNoKey = errors.New("set SECRETS_KEY (the same value on every instance) so that Bunting can store the OIDC client secret encrypted")

// newKeyring derives the AES key from secret (any text of 16 or more
// characters: hex or base64 of 32 bytes is used as is, anything else is
// hashed with SHA-256). An empty secret with keyFile set reads that file,
// or writes a new random key there (owner-only) when it does not exist;
// with neither, the keyring cannot seal.
func newKeyring(secret, keyFile string) (*keyring, error) {
	var key []byte
	switch {
	case secret != "":
		key = keyFromText(secret)
	case keyFile != "":
		b, err := os.ReadFile(keyFile)
		switch {
		case err == nil:
			key = keyFromText(strings.TrimSpace(string(b)))
		case errors.Is(err, os.ErrNotExist):
			raw := make([]byte, 32)
			_, _ = rand.Read(raw)
			if err := os.MkdirAll(filepath.Dir(keyFile), 0o700); err != nil {
				return nil, err
			}
			if err := os.WriteFile(keyFile, []byte(hex.EncodeToString(raw)+"\n"), 0o600); err != nil {
				return nil, fmt.Errorf("write the secrets key file: %w", err)
			}
			key = raw
		default:
			return nil, fmt.Errorf("read the secrets key file: %w", err)
		}
	default:
		return &keyring{}, nil
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &keyring{aead: aead}, nil
}

// keyFromText turns SECRETS_KEY into 32 bytes.
func keyFromText(s string) []byte {
	if b, err := hex.DecodeString(s); err == nil && len(b) == 32 {
		return b
	}
	if b, err := base64.StdEncoding.DecodeString(s); err == nil && len(b) == 32 {
		return b
	}
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}

// seal encrypts plain ("" stays "").
func (k *keyring) seal(plain string) (string, error) {
	if plain == "" {
		return "", nil
	}
	if k.aead == nil {
		return "", errNoKey
	}
	nonce := make([]byte, k.aead.NonceSize())
	_, _ = rand.Read(nonce)
	out := k.aead.Seal(nonce, nonce, []byte(plain), []byte("oidc-client-secret"))
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(out), nil
}

// open decrypts what seal made.
func (k *keyring) open(sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	raw, ok := strings.CutPrefix(sealed, sealedPrefix)
	if !ok {
		return "", errors.New("the stored OIDC client secret is in an unknown format")
	}
	if k.aead == nil {
		return "", errNoKey
	}
	b, err := base64.RawStdEncoding.DecodeString(raw)
	if err != nil || len(b) < k.aead.NonceSize() {
		return "", errors.New("the stored OIDC client secret is damaged")
	}
	plain, err := k.aead.Open(nil, b[:k.aead.NonceSize()], b[k.aead.NonceSize():], []byte("oidc-client-secret"))
	if err != nil {
		return "", errors.New("the stored OIDC client secret cannot be decrypted with this SECRETS_KEY (was the key changed?); set the secret again")
	}
	return string(plain), nil
}
