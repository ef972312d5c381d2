-- +goose Up
-- Kept in step with the SQLite migrations; PostgreSQL's trigram index
-- needs nothing more.
SELECT 1;

-- +goose Down
SELECT 1;
