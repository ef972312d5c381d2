// Package secretbox keeps the server's secrets key and seals with it the
// secrets Bunting must be able to read back (the OIDC client secret, the
// secrets of client and frontend API tokens), so that a copy of the
// database (a backup, a dump handed to support) does not carry them in
// clear.
//
// The key lives outside the database: SECRETS_KEY, the same on every
// instance, or on SQLite a key file made next to the database file on
// first use. Values are sealed with AES-256-GCM under a purpose (the
// additional data), so a value sealed for one use does not open for
// another.
package secretbox

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

	"github.com/bunting-flags/bunting/internal/config"
)

// Config is the key option.
type Config struct {
	// Key seals the secrets (any text of 16+ characters, or hex/base64 of
	// 32 bytes).
	Key string
}

// Options are the key's options, bound to c, for the server's table
// (internal/config).
func (c *Config) Options() []config.Option {
	return []config.Option{
		{Name: "SECRETS_KEY", Env: []string{"SECRETS_KEY"}, Shown: "a key file next to the SQLite file", Usage: "key that encrypts stored secrets: the OIDC client secret, the secrets of client and frontend API tokens, integrations' secret parameters (the same on every instance; on PostgreSQL required to store the first two)", Value: config.String(&c.Key)},
	}
}

// Validate checks values that parse but make no sense.
func (c Config) Validate() error {
	if c.Key != "" && len(c.Key) < 16 {
		return fmt.Errorf("SECRETS_KEY must have at least 16 characters")
	}
	return nil
}

// sealedPrefix marks a sealed value ("v1:" + base64 of nonce ‖ ciphertext).
const sealedPrefix = "v1:"

// ErrNoKey is why a secret cannot be sealed: no key is configured.
var ErrNoKey = errors.New("set SECRETS_KEY (the same value on every instance) so that Bunting can store secrets encrypted")

// Box seals and opens secrets; a Box without a key cannot (ErrNoKey).
type Box struct {
	aead cipher.AEAD
}

// New makes the box of key (see Config.Key). An empty key with keyFile
// set reads that file, or writes a new random key there (owner-only) when
// it does not exist; with neither, the box cannot seal.
func New(key, keyFile string) (*Box, error) {
	var raw []byte
	switch {
	case key != "":
		raw = keyFromText(key)
	case keyFile != "":
		b, err := os.ReadFile(keyFile)
		switch {
		case err == nil:
			raw = keyFromText(strings.TrimSpace(string(b)))
		case errors.Is(err, os.ErrNotExist):
			raw = make([]byte, 32)
			_, _ = rand.Read(raw)
			if err := os.MkdirAll(filepath.Dir(keyFile), 0o700); err != nil {
				return nil, err
			}
			if err := os.WriteFile(keyFile, []byte(hex.EncodeToString(raw)+"\n"), 0o600); err != nil {
				return nil, fmt.Errorf("write the secrets key file: %w", err)
			}
		default:
			return nil, fmt.Errorf("read the secrets key file: %w", err)
		}
	default:
		return &Box{}, nil
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
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

// CanSeal reports whether the box has a key.
func (b *Box) CanSeal() bool { return b != nil && b.aead != nil }

// Seal encrypts plain for purpose ("" stays "").
func (b *Box) Seal(purpose, plain string) (string, error) {
	if plain == "" {
		return "", nil
	}
	if !b.CanSeal() {
		return "", ErrNoKey
	}
	nonce := make([]byte, b.aead.NonceSize())
	_, _ = rand.Read(nonce)
	out := b.aead.Seal(nonce, nonce, []byte(plain), []byte(purpose))
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(out), nil
}

// Errors of Open.
var (
	ErrUnknownFormat = errors.New("the stored secret is in an unknown format")
	ErrDamaged       = errors.New("the stored secret is damaged")
	ErrWrongKey      = errors.New("the stored secret cannot be decrypted with this SECRETS_KEY (was the key changed?)")
)

// Open decrypts what Seal made for the same purpose.
func (b *Box) Open(purpose, sealed string) (string, error) {
	if sealed == "" {
		return "", nil
	}
	raw, ok := strings.CutPrefix(sealed, sealedPrefix)
	if !ok {
		return "", ErrUnknownFormat
	}
	if !b.CanSeal() {
		return "", ErrNoKey
	}
	c, err := base64.RawStdEncoding.DecodeString(raw)
	if err != nil || len(c) < b.aead.NonceSize() {
		return "", ErrDamaged
	}
	plain, err := b.aead.Open(nil, c[:b.aead.NonceSize()], c[b.aead.NonceSize():], []byte(purpose))
	if err != nil {
		return "", ErrWrongKey
	}
	return string(plain), nil
}
