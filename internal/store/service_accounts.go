package store

import (
	"database/sql"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// ServiceAccounts lists the service accounts by id.
func (q Q) ServiceAccounts() ([]User, error) {
	return collect(q, scanUser, `SELECT `+userColumns+` FROM users WHERE is_service ORDER BY id`)
}

// ServiceAccount returns one service account or a NotFound error.
func (q Q) ServiceAccount(id int64) (User, error) {
	u, err := q.User(id)
	if err == nil && !u.IsService {
		err = apierr.NotFound("Could not find service account with id %d", id)
	}
	if apierr.IsKind(err, apierr.KindNotFound) {
		return u, apierr.NotFound("Could not find service account with id %d", id)
	}
	return u, err
}

// UpdateUser stores a user's name and root role.
func (q Q) UpdateUser(u User) error {
	_, err := q.exec(`UPDATE users SET name = $2, root_role_id = $3 WHERE id = $1`, u.ID, nullableText(u.Name), u.RootRole)
	return err
}

// DeleteUser removes a user (or service account) and its tokens.
func (q Q) DeleteUser(id int64) error {
	if _, err := q.exec(`DELETE FROM user_tokens WHERE user_id = $1`, id); err != nil {
		return err
	}
	_, err := q.exec(`DELETE FROM users WHERE id = $1`, id)
	return err
}

// UserTokens lists a user's access tokens, oldest first.
func (q Q) UserTokens(userID int64) ([]UserToken, error) {
	return collect(q, func(row scanner) (UserToken, error) {
		var (
			t             UserToken
			desc          sql.NullString
			expires, seen sql.NullInt64
			created       int64
		)
		err := row.Scan(&t.ID, &t.UserID, &desc, &t.Hint, &expires, &created, &seen)
		t.Description, t.ExpiresAt, t.SeenAt, t.CreatedAt = strPtr(desc), timePtr(expires), timePtr(seen), FromMillis(created)
		return t, err
	}, `SELECT id, user_id, description, hint, expires_at, created_at, seen_at
		FROM user_tokens WHERE user_id = $1 ORDER BY id`, userID)
}

// DeleteUserToken removes one of a user's tokens and reports whether it existed.
func (q Q) DeleteUserToken(userID, tokenID int64) (bool, error) {
	n, err := q.exec(`DELETE FROM user_tokens WHERE user_id = $1 AND id = $2`, userID, tokenID)
	return n > 0, err
}
