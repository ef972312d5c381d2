-- +goose Up
-- Per-trigram document counts, so a free-text search can start from the
-- rarest trigrams of its text.
CREATE VIRTUAL TABLE events_fts_vocab USING fts5vocab(events_fts, 'row');

-- +goose Down
DROP TABLE events_fts_vocab;
