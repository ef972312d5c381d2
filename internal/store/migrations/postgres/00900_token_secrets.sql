-- +goose Up
-- The secrets of client and frontend tokens, sealed with the server's key
-- (internal/secretbox), so that admins can read them back as in Unleash
-- (its Terraform provider finds a token by its secret). secret_hash stays
-- the key that authentication looks tokens up by. NULL: not readable
-- (admin tokens, and tokens created before this column or without a key).
ALTER TABLE api_tokens ADD COLUMN secret_sealed TEXT;

-- +goose Down
ALTER TABLE api_tokens DROP COLUMN secret_sealed;
