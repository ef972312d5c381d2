-- +goose Up
-- Single sign-on. auth_settings holds one row per sign-in method ('oidc',
-- 'simple'): the settings as a JSON document, a secret apart from it
-- (encrypted by internal/sso, never in the document or an event) and a
-- version every change raises, so that each instance notices a change at
-- the next sign-in. sso_logins are the sign-ins under way: the SHA-256 of
-- their state, of the browser-binding cookie, the nonce and the PKCE
-- verifier, used once. A session started through the identity provider
-- keeps its ID token, for single sign-out.
CREATE TABLE auth_settings (
    name       TEXT   PRIMARY KEY,
    document   TEXT   NOT NULL,
    secret     TEXT,
    version    BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE sso_logins (
    state_hash   TEXT   PRIMARY KEY,
    binding_hash TEXT   NOT NULL,
    nonce        TEXT   NOT NULL,
    verifier     TEXT   NOT NULL,
    next         TEXT   NOT NULL,
    expires_at   BIGINT NOT NULL
);
CREATE INDEX sso_logins_expires ON sso_logins (expires_at);

ALTER TABLE sessions ADD COLUMN sso_id_token TEXT;

-- +goose Down
ALTER TABLE sessions DROP COLUMN sso_id_token;
DROP TABLE sso_logins;
DROP TABLE auth_settings;
