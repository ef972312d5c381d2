package domain

import (
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// How long a one-time password link works: a week for someone just
// created without a password, a day for a reset.
const (
	InviteLinkTTL = 7 * 24 * time.Hour
	ResetLinkTTL  = 24 * time.Hour
)

// CreatePasswordLink makes a one-time link secret with which the person
// id sets their password, as p (ADMIN), valid for ttl, with its event. The
// admin passes the link on; Bunting sends no mail. Only the secret's hash
// is stored.
func CreatePasswordLink(tx *store.Tx, p *Principal, id int64, ttl time.Duration) (secret string, expires time.Time, err error) {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return "", time.Time{}, err
	}
	a, err := tx.Account(id)
	if err != nil {
		return "", time.Time{}, err
	}
	secret, expires = RandomHex(32), tx.Now().Add(ttl)
	if err := tx.InsertPasswordLink(store.HashSecret(secret), a.ID, tx.Now(), expires); err != nil {
		return "", time.Time{}, err
	}
	return secret, expires, tx.Event(store.NewEvent{Type: "user-password-link-created", Actor: p.Actor(),
		Data: map[string]any{"id": a.ID, "username": a.Username, "email": a.Email, "expiresAt": expires}})
}

// FindAccount finds a person by id, username or email (ignoring case),
// as Unleash's reset-password route names them.
func FindAccount(q store.Q, who string) (store.Account, error) {
	a, _, err := q.AccountByLogin(strings.TrimSpace(who))
	if apierr.IsKind(err, apierr.KindNotFound) {
		return a, apierr.NotFound("Could not find a user named %q", who)
	}
	return a, err
}

// PasswordLinkAccount is the person a working link secret lets set a
// password (401 when the link is unknown, used or expired).
func PasswordLinkAccount(q store.Q, secret string) (store.Account, error) {
	a, err := q.PasswordLinkUser(store.HashSecret(secret))
	if apierr.IsKind(err, apierr.KindNotFound) || (err == nil && a.Deactivated) {
		return a, apierr.Unauthenticated("This link is not valid: it was used, it expired or it never existed. Ask an admin for a new one.")
	}
	return a, err
}

// UsePasswordLink sets the password of the link's person, uses the link
// up (with every other link of theirs), ends their sessions, and writes
// the event, as that person.
func UsePasswordLink(tx *store.Tx, secret, password string) error {
	a, err := PasswordLinkAccount(tx.Q, secret)
	if err != nil {
		return err
	}
	if err := validatePassword(password); err != nil {
		return err
	}
	ok, err := tx.UsePasswordLink(store.HashSecret(secret))
	if err != nil {
		return err
	}
	if !ok {
		return apierr.Unauthenticated("This link is not valid: it was used, it expired or it never existed. Ask an admin for a new one.")
	}
	return setPassword(tx, UserPrincipal(a.User), a.ID, password, "user-password-reset")
}
