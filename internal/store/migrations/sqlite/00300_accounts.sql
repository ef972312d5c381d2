-- +goose Up
-- People who sign in to the web UI: a password hash (argon2id, PHC string)
-- and a deactivated mark on users; sessions by the SHA-256 of their cookie,
-- each with the token that CSRF checks compare against.
ALTER TABLE users ADD COLUMN password_hash TEXT;
ALTER TABLE users ADD COLUMN deactivated BOOLEAN NOT NULL DEFAULT FALSE;
CREATE UNIQUE INDEX users_email_lower ON users (lower(email));

CREATE TABLE sessions (
    id_hash    TEXT   PRIMARY KEY,
    user_id    BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    csrf       TEXT   NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);

-- +goose Down
DROP TABLE sessions;
DROP INDEX users_email_lower;
ALTER TABLE users DROP COLUMN deactivated;
ALTER TABLE users DROP COLUMN password_hash;
