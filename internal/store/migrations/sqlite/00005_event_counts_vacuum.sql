-- +goose Up
-- Kept in step with the PostgreSQL migrations (autovacuum settings there).
SELECT 1;

-- +goose Down
SELECT 1;
