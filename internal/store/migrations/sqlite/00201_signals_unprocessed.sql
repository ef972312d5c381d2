-- +goose Up
-- Signals whose processing has not finished, so a worker can find them,
-- including those claimed by an instance that stopped mid-way.
CREATE INDEX signals_unprocessed ON signals (id) WHERE processed_at IS NULL;

-- +goose Down
DROP INDEX signals_unprocessed;
