package sso

import (
	"errors"

	"github.com/bunting-flags/bunting/internal/secretbox"
)

// The client secret is stored sealed by the server's secrets box
// (internal/secretbox), so that a copy of the database does not carry it.
// Answers to ADMIN callers still carry the secret in clear, as Unleash's
// do: its Terraform provider reads it back and would otherwise plan a
// change forever. The sealed form ("v1:…", with this purpose as its
// additional data) is the one SSO wrote before the box was shared, so
// secrets stored then still open.

// secretPurpose binds a sealed value to the OIDC client secret.
const secretPurpose = "oidc-client-secret"

// errNoKey is why a secret cannot be stored without a key.
var errNoKey = errors.New("set SECRETS_KEY (the same value on every instance) so that Bunting can store the OIDC client secret encrypted")

// keyring seals and opens the client secret with the server's box.
type keyring struct {
	box *secretbox.Box
}

// seal encrypts plain ("" stays "").
func (k keyring) seal(plain string) (string, error) {
	s, err := k.box.Seal(secretPurpose, plain)
	if errors.Is(err, secretbox.ErrNoKey) {
		return "", errNoKey
	}
	return s, err
}

// open decrypts what seal made.
func (k keyring) open(sealed string) (string, error) {
	plain, err := k.box.Open(secretPurpose, sealed)
	switch {
	case errors.Is(err, secretbox.ErrNoKey):
		return "", errNoKey
	case errors.Is(err, secretbox.ErrUnknownFormat):
		return "", errors.New("the stored OIDC client secret is in an unknown format")
	case errors.Is(err, secretbox.ErrDamaged):
		return "", errors.New("the stored OIDC client secret is damaged")
	case errors.Is(err, secretbox.ErrWrongKey):
		return "", errors.New("the stored OIDC client secret cannot be decrypted with this SECRETS_KEY (was the key changed?); set the secret again")
	}
	return plain, err
}
