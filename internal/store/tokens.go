package store

import (
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/secretbox"
)

// Token types.
const (
	TokenAdmin    = "admin"
	TokenClient   = "client"
	TokenFrontend = "frontend"
)

// APIToken is a stored API token. Authentication looks it up by the
// SHA-256 hash of its secret; the secret itself is stored only for client
// and frontend tokens, sealed with the server's key (Sealed), so that
// admins can read it back (TokenSecret). Lists show others by a short
// hint.
type APIToken struct {
	Hash        string     `json:"-"`
	Sealed      string     `json:"-"`
	TokenName   string     `json:"tokenName"`
	Type        string     `json:"type"`
	Environment string     `json:"environment"`
	Projects    []string   `json:"projects"`
	Hint        string     `json:"secret"`
	ExpiresAt   *time.Time `json:"expiresAt"`
	CreatedAt   time.Time  `json:"createdAt"`
	SeenAt      *time.Time `json:"seenAt"`
}

// HashSecret is how secrets are stored and looked up.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// SecretHint is the shown part of a secret: its scope and 4 characters.
func SecretHint(secret string) string {
	for i := 0; i < len(secret); i++ {
		if secret[i] == '.' {
			end := min(len(secret), i+5)
			return secret[:end] + "…"
		}
	}
	return secret[:min(len(secret), 8)] + "…"
}

const tokenColumns = `secret_hash, token_name, type, environment, projects, hint, expires_at, created_at, seen_at, secret_sealed`

// tokenSecretPurpose binds a sealed secret to its token (by the hash of
// the secret), so that a sealed value copied onto another row does not
// open.
func tokenSecretPurpose(hash string) string { return "api-token:" + hash }

// ReadableTokenType reports whether tokens of type typ keep their secret
// (sealed) for admins to read back: the read-only SDK keys, client and
// frontend, as in Unleash. Admin tokens are shown once only.
func ReadableTokenType(typ string) bool { return typ == TokenClient || typ == TokenFrontend }

// SetSecretBox sets the box that seals the secrets of client and frontend
// tokens (internal/secretbox); without one that can seal, they are stored
// hashed only and shown once.
func (s *Store) SetSecretBox(b *secretbox.Box) { s.secrets = b }

// TokenSecret returns t's secret, or "" when it cannot be read back: an
// admin token, a token stored before secrets were kept, or one sealed
// with another key.
func (q Q) TokenSecret(t APIToken) string {
	if t.Sealed == "" || !ReadableTokenType(t.Type) {
		return ""
	}
	plain, err := q.s.secrets.Open(tokenSecretPurpose(t.Hash), t.Sealed)
	if err != nil || HashSecret(plain) != t.Hash {
		return ""
	}
	return plain
}

func scanToken(sc interface{ Scan(...any) error }) (APIToken, error) {
	var (
		t             APIToken
		projects      string
		expires, seen sql.NullInt64
		created       int64
		sealed        sql.NullString
	)
	if err := sc.Scan(&t.Hash, &t.TokenName, &t.Type, &t.Environment, &projects, &t.Hint, &expires, &created, &seen, &sealed); err != nil {
		return t, err
	}
	t.Sealed = sealed.String
	t.ExpiresAt, t.SeenAt, t.CreatedAt = timePtr(expires), timePtr(seen), FromMillis(created)
	return t, decodeJSON(projects, &t.Projects)
}

// APITokens lists every API token, oldest first.
func (q Q) APITokens() ([]APIToken, error) {
	return collect(q, scanToken, `SELECT `+tokenColumns+` FROM api_tokens ORDER BY created_at, token_name`)
}

// APITokenByHash looks a token up by the hash of its secret.
func (q Q) APITokenByHash(hash string) (APIToken, error) {
	t, err := scanToken(q.q.QueryRowContext(q.ctx, `SELECT `+tokenColumns+` FROM api_tokens WHERE secret_hash = $1`, hash))
	if err == sql.ErrNoRows {
		return t, apierr.NotFound("no such token")
	}
	return t, q.s.translate(err)
}

// CountAPITokens counts the stored API tokens.
func (q Q) CountAPITokens() (int, error) {
	var n int
	err := q.row([]any{&n}, `SELECT COUNT(*) FROM api_tokens`)
	return n, err
}

// InsertAPIToken stores a token for secret: its hash, and for a client or
// frontend token the secret sealed with the server's key (when it has
// one).
func (q Q) InsertAPIToken(t APIToken, secret string) error {
	var expires, sealed any
	if t.ExpiresAt != nil {
		expires = Millis(*t.ExpiresAt)
	}
	hash := HashSecret(secret)
	if ReadableTokenType(t.Type) && q.s.secrets.CanSeal() {
		s, err := q.s.secrets.Seal(tokenSecretPurpose(hash), secret)
		if err != nil {
			return err
		}
		sealed = s
	}
	_, err := q.exec(`INSERT INTO api_tokens (`+tokenColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL, $9)`,
		hash, t.TokenName, t.Type, t.Environment, encodeJSON(nonNil(t.Projects)), SecretHint(secret), expires, Millis(t.CreatedAt), sealed)
	if apierr.IsKind(err, apierr.KindConflict) {
		return apierr.Conflict("A token with that secret already exists")
	}
	return err
}

// SetAPITokenExpiry changes when a token expires (nil: never).
func (q Q) SetAPITokenExpiry(hash string, expiresAt *time.Time) error {
	var expires any
	if expiresAt != nil {
		expires = Millis(*expiresAt)
	}
	_, err := q.exec(`UPDATE api_tokens SET expires_at = $2 WHERE secret_hash = $1`, hash, expires)
	return err
}

// DeleteAPIToken removes a token by the hash of its secret and reports whether it existed.
func (q Q) DeleteAPIToken(hash string) (bool, error) {
	n, err := q.exec(`DELETE FROM api_tokens WHERE secret_hash = $1`, hash)
	return n > 0, err
}

// User is a person or a service account. RootRole is the id of its root
// role (internal/access says what each role may do).
type User struct {
	ID        int64     `json:"id"`
	Username  *string   `json:"username"`
	Name      *string   `json:"name"`
	Email     *string   `json:"email"`
	RootRole  int64     `json:"rootRole"`
	IsService bool      `json:"isService"`
	CreatedAt time.Time `json:"createdAt"`
}

const userColumns = `id, username, name, email, root_role_id, is_service, created_at`

func scanUser(sc interface{ Scan(...any) error }) (User, error) {
	var (
		u                     User
		username, name, email sql.NullString
		created               int64
	)
	err := sc.Scan(&u.ID, &username, &name, &email, &u.RootRole, &u.IsService, &created)
	u.Username, u.Name, u.Email, u.CreatedAt = strPtr(username), strPtr(name), strPtr(email), FromMillis(created)
	return u, err
}

// InsertUser creates a user (or service account) and returns its id.
func (q Q) InsertUser(u User) (int64, error) {
	var id int64
	err := q.row([]any{&id}, `INSERT INTO users (username, name, email, root_role_id, is_service, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		nullableText(u.Username), nullableText(u.Name), nullableText(u.Email), u.RootRole, u.IsService, Millis(u.CreatedAt))
	if apierr.IsKind(err, apierr.KindConflict) {
		return 0, apierr.Conflict("A user with that username already exists")
	}
	if err == nil && q.tx != nil {
		q.tx.changed = true
	}
	return id, err
}

// User returns one user or a NotFound error.
func (q Q) User(id int64) (User, error) {
	u, err := scanUser(q.q.QueryRowContext(q.ctx, `SELECT `+userColumns+` FROM users WHERE id = $1`, id))
	if err == sql.ErrNoRows {
		return u, apierr.NotFound("Could not find user with id %d", id)
	}
	return u, q.s.translate(err)
}

// UserToken is a personal or service-account access token.
type UserToken struct {
	ID          int64      `json:"id"`
	UserID      int64      `json:"userId"`
	Description *string    `json:"description"`
	Hint        string     `json:"secret"`
	ExpiresAt   *time.Time `json:"expiresAt"`
	CreatedAt   time.Time  `json:"createdAt"`
	SeenAt      *time.Time `json:"seenAt"`
}

// InsertUserToken stores a token for a user and returns its id.
func (q Q) InsertUserToken(t UserToken, secret string) (int64, error) {
	var expires any
	if t.ExpiresAt != nil {
		expires = Millis(*t.ExpiresAt)
	}
	var id int64
	err := q.row([]any{&id}, `INSERT INTO user_tokens (secret_hash, user_id, description, hint, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		HashSecret(secret), t.UserID, nullableText(t.Description), SecretHint(secret), expires, Millis(t.CreatedAt))
	if err == nil && q.tx != nil {
		q.tx.changed = true
	}
	return id, err
}

// UserByTokenHash returns the user owning a personal/service token and the
// token's expiry, or a NotFound error. A deactivated person's tokens are
// not found (as their sessions, SessionByHash): the rows stay, so that
// reactivating the person makes them work again.
func (q Q) UserByTokenHash(hash string) (User, *time.Time, error) {
	var expires sql.NullInt64
	var (
		u                     User
		username, name, email sql.NullString
		created               int64
	)
	err := q.q.QueryRowContext(q.ctx, `SELECT u.id, u.username, u.name, u.email, u.root_role_id, u.is_service, u.created_at, t.expires_at
		FROM user_tokens t JOIN users u ON u.id = t.user_id WHERE t.secret_hash = $1 AND NOT u.deactivated`, hash).
		Scan(&u.ID, &username, &name, &email, &u.RootRole, &u.IsService, &created, &expires)
	if err == sql.ErrNoRows {
		return u, nil, apierr.NotFound("no such token")
	}
	u.Username, u.Name, u.Email, u.CreatedAt = strPtr(username), strPtr(name), strPtr(email), FromMillis(created)
	return u, timePtr(expires), q.s.translate(err)
}
