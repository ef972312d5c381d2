package store

import (
	"database/sql"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// AuthSettings is one sign-in method's stored settings: a JSON document,
// a secret kept apart from it (as internal/sso encoded it) and a version
// raised by every change.
type AuthSettings struct {
	Document string
	Secret   string
	Version  int64
}

// AuthSettings returns the settings stored under name, or a NotFound error.
func (q Q) AuthSettings(name string) (AuthSettings, error) {
	var (
		a      AuthSettings
		secret sql.NullString
	)
	err := q.q.QueryRowContext(q.ctx, `SELECT document, secret, version FROM auth_settings WHERE name = $1`, name).
		Scan(&a.Document, &secret, &a.Version)
	if err == sql.ErrNoRows {
		return a, apierr.NotFound("no %s settings", name)
	}
	a.Secret = secret.String
	return a, q.s.translate(err)
}

// AuthSettingsVersion returns the version of the settings stored under
// name (0 when there are none): a cheap check that cached settings are
// still current.
func (q Q) AuthSettingsVersion(name string) (int64, error) {
	var v int64
	err := q.q.QueryRowContext(q.ctx, `SELECT version FROM auth_settings WHERE name = $1`, name).Scan(&v)
	if err == sql.ErrNoRows {
		return 0, nil
	}
	return v, q.s.translate(err)
}

// PutAuthSettings stores the settings under name with the next version,
// which it returns.
func (q Q) PutAuthSettings(name, document, secret string) (int64, error) {
	old, err := q.AuthSettingsVersion(name)
	if err != nil {
		return 0, err
	}
	v := old + 1
	if old == 0 {
		_, err = q.exec(`INSERT INTO auth_settings (name, document, secret, version, updated_at) VALUES ($1, $2, $3, $4, $5)`,
			name, document, nullableText(&secret), v, q.now())
	} else {
		_, err = q.exec(`UPDATE auth_settings SET document = $2, secret = $3, version = $4, updated_at = $5 WHERE name = $1`,
			name, document, nullableText(&secret), v, q.now())
	}
	return v, err
}

// SSOLogin is a sign-in through an identity provider under way: what the
// callback must find again (hashes of the state and of the browser-binding
// cookie, the nonce, the PKCE verifier, where to go afterwards).
type SSOLogin struct {
	StateHash   string
	BindingHash string
	Nonce       string
	Verifier    string
	Next        string
	ExpiresAt   time.Time
}

// InsertSSOLogin stores a sign-in under way, after removing those that
// expired.
func (q Q) InsertSSOLogin(l SSOLogin) error {
	if _, err := q.exec(`DELETE FROM sso_logins WHERE expires_at <= $1`, q.now()); err != nil {
		return err
	}
	_, err := q.exec(`INSERT INTO sso_logins (state_hash, binding_hash, nonce, verifier, next, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		l.StateHash, l.BindingHash, l.Nonce, l.Verifier, l.Next, Millis(l.ExpiresAt))
	return err
}

// TakeSSOLogin removes the sign-in under way whose state hashes to
// stateHash and returns it, or a NotFound error when there is none or it
// expired: each state is used once, by whichever instance gets the
// callback.
func (q Q) TakeSSOLogin(stateHash string) (SSOLogin, error) {
	var (
		l       SSOLogin
		expires int64
	)
	err := q.q.QueryRowContext(q.ctx, `DELETE FROM sso_logins WHERE state_hash = $1
		RETURNING state_hash, binding_hash, nonce, verifier, next, expires_at`, stateHash).
		Scan(&l.StateHash, &l.BindingHash, &l.Nonce, &l.Verifier, &l.Next, &expires)
	if err == sql.ErrNoRows {
		return l, apierr.NotFound("no such sign-in")
	}
	if err != nil {
		return l, q.s.translate(err)
	}
	l.ExpiresAt = FromMillis(expires)
	if !l.ExpiresAt.After(q.s.now()) {
		return l, apierr.NotFound("no such sign-in")
	}
	return l, nil
}

// SetSessionIDToken keeps the ID token a session was started with (for
// single sign-out).
func (q Q) SetSessionIDToken(idHash, idToken string) error {
	_, err := q.exec(`UPDATE sessions SET sso_id_token = $2 WHERE id_hash = $1`, idHash, idToken)
	return err
}

// SessionIDToken returns the ID token a session was started with ("" for
// a password sign-in or an unknown session).
func (q Q) SessionIDToken(idHash string) (string, error) {
	var t sql.NullString
	err := q.q.QueryRowContext(q.ctx, `SELECT sso_id_token FROM sessions WHERE id_hash = $1`, idHash).Scan(&t)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return t.String, q.s.translate(err)
}
