package integrations

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/bunting-flags/bunting/internal/secretbox"
	"github.com/bunting-flags/bunting/internal/store"
)

// Secret parameters (URLs with tokens in them, authorization headers,
// signing secrets, API keys) are sent, so they cannot be hashed: they are
// stored sealed with AES-256-GCM. The key is INTEGRATION_SECRET_KEY's
// SHA-256 when it is set; otherwise the server's secrets key
// (internal/secretbox: SECRETS_KEY, or the key file next to the SQLite
// file), which keeps them out of a copy of the database; otherwise (on
// PostgreSQL without SECRETS_KEY) a random key kept in the database
// (integration_keys), which keeps the secrets out of answers, logs and
// casual reads of the table but not out of a copy of the whole database.
// A sealed value names its key ("v1:k:" configured, "v1:d:" database, and
// the box's own "v1:" followed by base64, which never holds a ':'), so
// values sealed before any of the keys was set still open.

const (
	sealedConfigured = "v1:k:"
	sealedDatabase   = "v1:d:"
	sealedBox        = "v1:"
)

// boxPurpose binds the box's sealed values to integrations' secrets.
const boxPurpose = "integration-secrets"

// sealer seals and opens secret parameters.
type sealer struct {
	store      *store.Store
	configured cipher.AEAD    // nil without INTEGRATION_SECRET_KEY
	box        *secretbox.Box // the server's key; nil or keyless: none

	mu       sync.Mutex
	database cipher.AEAD // loaded on first use
}

func newSealer(st *store.Store, secretKey string, box *secretbox.Box) (*sealer, error) {
	s := &sealer{store: st, box: box}
	if secretKey != "" {
		key := sha256.Sum256([]byte(secretKey))
		a, err := newAEAD(key[:])
		if err != nil {
			return nil, err
		}
		s.configured = a
	}
	return s, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// databaseKey loads (or makes) the key kept in the database.
func (s *sealer) databaseKey(ctx context.Context) (cipher.AEAD, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.database != nil {
		return s.database, nil
	}
	fresh := make([]byte, 32)
	_, _ = rand.Read(fresh)
	var stored string
	err := s.store.Record(ctx, func(tx *store.Tx) (err error) {
		stored, err = tx.IntegrationKey(base64.StdEncoding.EncodeToString(fresh))
		return err
	})
	if err != nil {
		return nil, err
	}
	key, err := base64.StdEncoding.DecodeString(stored)
	if err != nil || len(key) != 32 {
		return nil, errors.New("integrations: the stored key is damaged")
	}
	if s.database, err = newAEAD(key); err != nil {
		return nil, err
	}
	return s.database, nil
}

// seal encrypts the secret parameters ("" for none).
func (s *sealer) seal(ctx context.Context, secrets map[string]string) (string, error) {
	if len(secrets) == 0 {
		return "", nil
	}
	plain, err := json.Marshal(secrets)
	if err != nil {
		return "", err
	}
	if s.configured == nil && s.box.CanSeal() {
		return s.box.Seal(boxPurpose, string(plain))
	}
	a, prefix := s.configured, sealedConfigured
	if a == nil {
		if a, err = s.databaseKey(ctx); err != nil {
			return "", err
		}
		prefix = sealedDatabase
	}
	nonce := make([]byte, a.NonceSize())
	_, _ = rand.Read(nonce)
	return prefix + base64.StdEncoding.EncodeToString(a.Seal(nonce, nonce, plain, nil)), nil
}

// open decrypts what seal made.
func (s *sealer) open(ctx context.Context, sealed string) (map[string]string, error) {
	out := map[string]string{}
	if sealed == "" {
		return out, nil
	}
	var (
		a   cipher.AEAD
		err error
	)
	switch {
	case strings.HasPrefix(sealed, sealedConfigured):
		if a = s.configured; a == nil {
			return nil, errors.New("the secret parameters were encrypted with INTEGRATION_SECRET_KEY, which is not set")
		}
	case strings.HasPrefix(sealed, sealedDatabase):
		if a, err = s.databaseKey(ctx); err != nil {
			return nil, err
		}
	case strings.HasPrefix(sealed, sealedBox):
		plain, err := s.box.Open(boxPurpose, sealed)
		if err != nil {
			return nil, fmt.Errorf("the secret parameters do not decrypt: %w", err)
		}
		return out, json.Unmarshal([]byte(plain), &out)
	default:
		return nil, errors.New("the secret parameters are stored in an unknown form")
	}
	raw, err := base64.StdEncoding.DecodeString(sealed[len(sealedConfigured):])
	if err != nil || len(raw) < a.NonceSize() {
		return nil, errors.New("the secret parameters are damaged")
	}
	plain, err := a.Open(nil, raw[:a.NonceSize()], raw[a.NonceSize():], nil)
	if err != nil {
		return nil, fmt.Errorf("the secret parameters do not decrypt (was INTEGRATION_SECRET_KEY changed?)")
	}
	return out, json.Unmarshal(plain, &out)
}
