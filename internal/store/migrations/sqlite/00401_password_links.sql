-- +goose Up
-- One-time links that let a person set their password (made by an admin
-- for people created without one, or who forgot theirs; no mail server
-- is needed: the admin passes the link on). Stored by the SHA-256 of the
-- secret in the link.
CREATE TABLE password_links (
    secret_hash TEXT   PRIMARY KEY,
    user_id     BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at  BIGINT NOT NULL,
    expires_at  BIGINT NOT NULL,
    used_at     BIGINT
);
CREATE INDEX password_links_user ON password_links (user_id);

-- +goose Down
DROP TABLE password_links;
