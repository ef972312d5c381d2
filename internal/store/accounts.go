package store

import (
	"database/sql"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// Account is a person who signs in: the user, whether a password is set
// and whether an admin deactivated it.
type Account struct {
	User
	Deactivated bool `json:"deactivated"`
	// HasPassword reports whether a password is set.
	HasPassword bool `json:"hasPassword"`
}

const accountColumns = userColumns + `, deactivated, password_hash`

func scanAccount(sc interface{ Scan(...any) error }) (Account, string, error) {
	var (
		a                     Account
		username, name, email sql.NullString
		hash                  sql.NullString
		created               int64
	)
	err := sc.Scan(&a.ID, &username, &name, &email, &a.RootRole, &a.IsService, &created, &a.Deactivated, &hash)
	a.Username, a.Name, a.Email, a.CreatedAt = strPtr(username), strPtr(name), strPtr(email), FromMillis(created)
	a.HasPassword = hash.Valid && hash.String != ""
	return a, hash.String, err
}

// Accounts lists the people (users that are not service accounts) by id.
func (q Q) Accounts() ([]Account, error) {
	rows, err := q.query(`SELECT ` + accountColumns + ` FROM users WHERE NOT is_service ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Account{}
	for rows.Next() {
		a, _, err := scanAccount(rows)
		if err != nil {
			return nil, q.s.translate(err)
		}
		out = append(out, a)
	}
	return out, q.s.translate(rows.Err())
}

// Account returns one person by id, or a NotFound error.
func (q Q) Account(id int64) (Account, error) {
	a, _, err := scanAccount(q.q.QueryRowContext(q.ctx, `SELECT `+accountColumns+` FROM users WHERE id = $1 AND NOT is_service`, id))
	if err == sql.ErrNoRows {
		return a, apierr.NotFound("Could not find user with id %d", id)
	}
	return a, q.s.translate(err)
}

// AccountByLogin finds a person by username, or by email ignoring case,
// with the stored password hash ("" when none is set).
func (q Q) AccountByLogin(login string) (Account, string, error) {
	a, hash, err := scanAccount(q.q.QueryRowContext(q.ctx, `SELECT `+accountColumns+` FROM users
		WHERE NOT is_service AND (username = $1 OR lower(email) = $2) ORDER BY id LIMIT 1`, login, strings.ToLower(login)))
	if err == sql.ErrNoRows {
		return a, "", apierr.NotFound("no such user")
	}
	return a, hash, q.s.translate(err)
}

// CountAccounts counts the people (not service accounts).
func (q Q) CountAccounts() (int, error) {
	var n int
	err := q.row([]any{&n}, `SELECT COUNT(*) FROM users WHERE NOT is_service`)
	return n, err
}

// CountActiveAdmins counts the people with the Admin root role who are not
// deactivated.
func (q Q) CountActiveAdmins() (int, error) {
	var n int
	err := q.row([]any{&n}, `SELECT COUNT(*) FROM users WHERE NOT is_service AND NOT deactivated AND root_role_id = 1`)
	return n, err
}

// SetPasswordHash stores a person's password hash.
func (q Q) SetPasswordHash(id int64, hash string) error {
	_, err := q.exec(`UPDATE users SET password_hash = $2 WHERE id = $1`, id, hash)
	return err
}

// UpdateAccount stores a person's name, email, root role and deactivated mark.
func (q Q) UpdateAccount(a Account) error {
	_, err := q.exec(`UPDATE users SET name = $2, email = $3, root_role_id = $4, deactivated = $5 WHERE id = $1`,
		a.ID, nullableText(a.Name), nullableText(a.Email), a.RootRole, a.Deactivated)
	if err == nil && q.tx != nil {
		q.tx.changed = true
	}
	return err
}

// Session is a signed-in browser: whose it is and its CSRF token.
type Session struct {
	Account   Account
	CSRF      string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// InsertSession stores a session by the hash of its cookie value.
func (q Q) InsertSession(idHash string, userID int64, csrf string, created, expires time.Time) error {
	_, err := q.exec(`INSERT INTO sessions (id_hash, user_id, csrf, created_at, expires_at) VALUES ($1, $2, $3, $4, $5)`,
		idHash, userID, csrf, Millis(created), Millis(expires))
	return err
}

// SessionByHash returns a session that has not expired and whose person
// is active, or a NotFound error.
func (q Q) SessionByHash(idHash string) (Session, error) {
	var (
		s                Session
		created, expires int64
		hash             sql.NullString
		username, name   sql.NullString
		email            sql.NullString
		ucreated         int64
	)
	err := q.q.QueryRowContext(q.ctx, `SELECT u.id, u.username, u.name, u.email, u.root_role_id, u.is_service, u.created_at, u.deactivated, u.password_hash,
		s.csrf, s.created_at, s.expires_at
		FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.id_hash = $1`, idHash).
		Scan(&s.Account.ID, &username, &name, &email, &s.Account.RootRole, &s.Account.IsService, &ucreated, &s.Account.Deactivated, &hash,
			&s.CSRF, &created, &expires)
	if err == sql.ErrNoRows {
		return s, apierr.NotFound("no such session")
	}
	if err != nil {
		return s, q.s.translate(err)
	}
	s.Account.Username, s.Account.Name, s.Account.Email, s.Account.CreatedAt = strPtr(username), strPtr(name), strPtr(email), FromMillis(ucreated)
	s.Account.HasPassword = hash.Valid && hash.String != ""
	s.CreatedAt, s.ExpiresAt = FromMillis(created), FromMillis(expires)
	if !s.ExpiresAt.After(q.s.now()) || s.Account.Deactivated {
		return s, apierr.NotFound("no such session")
	}
	return s, nil
}

// DeleteSession ends one session.
func (q Q) DeleteSession(idHash string) error {
	_, err := q.exec(`DELETE FROM sessions WHERE id_hash = $1`, idHash)
	return err
}

// DeleteUserSessions ends every session of a person and reports how many
// there were.
func (q Q) DeleteUserSessions(userID int64) (int64, error) {
	return q.exec(`DELETE FROM sessions WHERE user_id = $1`, userID)
}

// DeleteExpiredSessions removes sessions that ended before now.
func (q Q) DeleteExpiredSessions() (int64, error) {
	return q.exec(`DELETE FROM sessions WHERE expires_at <= $1`, q.now())
}

// InsertPasswordLink stores a one-time password link by the hash of its
// secret.
func (q Q) InsertPasswordLink(hash string, userID int64, created, expires time.Time) error {
	_, err := q.exec(`INSERT INTO password_links (secret_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)`,
		hash, userID, Millis(created), Millis(expires))
	return err
}

// PasswordLinkUser returns the person a password link that is unused and
// has not expired belongs to, or a NotFound error.
func (q Q) PasswordLinkUser(hash string) (Account, error) {
	var userID int64
	err := q.row([]any{&userID}, `SELECT user_id FROM password_links WHERE secret_hash = $1 AND used_at IS NULL AND expires_at > $2`, hash, q.now())
	if err != nil {
		if apierr.IsKind(err, apierr.KindNotFound) {
			return Account{}, apierr.NotFound("no such link")
		}
		return Account{}, err
	}
	return q.Account(userID)
}

// UsePasswordLink marks a link used, and every other link of the same
// person with it; it reports whether the link was still unused.
func (q Q) UsePasswordLink(hash string) (bool, error) {
	var userID int64
	if err := q.row([]any{&userID}, `SELECT user_id FROM password_links WHERE secret_hash = $1 AND used_at IS NULL`, hash); err != nil {
		if apierr.IsKind(err, apierr.KindNotFound) {
			return false, nil
		}
		return false, err
	}
	n, err := q.exec(`UPDATE password_links SET used_at = $2 WHERE user_id = $1 AND used_at IS NULL`, userID, q.now())
	return n > 0, err
}
